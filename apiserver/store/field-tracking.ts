import { managedFieldsAfterWrite, type TrackScope } from '../apply/field-manager';
import { managerFromUserAgent } from '../apply/managers';
import { ignoredFields, type WritePath } from '../apply/scope';
import type { KObject } from '../api/types';
import { rfc3339 } from '../api/time';
import { apiVersionOf, type ResourceType } from '../registry/resource-type';
import type { WriteContext } from './write-context';

/**
 * How the store tracks field ownership (metadata.managedFields, spec 2.4) for a write; the field
 * sets themselves are apply/'s. Server-side apply computes its managedFields before the store
 * sees the object (ctx.applied); every other write gets them here.
 */

/** What a write through `subresource` may change, as keepOtherHalf has it (object-store.ts). */
function writePath(t: ResourceType, subresource: string): WritePath {
  const writes = subresource === 'status' ? 'status' : subresource ? t.subresourceWrites?.[subresource] : undefined;
  if (writes) return writes;
  return t.hasStatus ? 'main' : 'whole';
}

/** The tracking scope of a write of type t through subresource at `now`. */
export function trackScope(t: ResourceType, subresource: string, now: Date): TrackScope {
  return { schema: t.schema, apiVersion: apiVersionOf(t), subresource, time: rfc3339(now), ignore: ignoredFields(t.schema, writePath(t, subresource)) };
}

/** The field manager of a write: ?fieldManager, else the User-Agent's product (upstream's managerOrUserAgent). */
export function managerOf(ctx: WriteContext): string {
  return ctx.fieldManager || managerFromUserAgent(ctx.userAgent);
}

/**
 * Sets obj's managedFields for its write over current (null: a create), unless server-side apply
 * already did (ctx.applied); none is no managedFields field at all.
 */
export function trackFields(t: ResourceType, current: KObject | null, obj: KObject, ctx: WriteContext, now: Date): void {
  if (ctx.applied) return;
  const managedFields = managedFieldsAfterWrite(current, obj, managerOf(ctx), trackScope(t, ctx.subresource, now));
  if (managedFields) obj.metadata.managedFields = managedFields;
  else delete obj.metadata.managedFields;
}
