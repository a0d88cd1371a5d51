import { sameApiVersion } from '../api/group-names';
import type { ObjectSchema } from '../api/schema';
import type { KObject } from '../api/types';
import { isObject } from '../api/types';
import { compareValues } from './compare';
import { difference, type FieldSet } from './field-set';
import { goJson } from './path-element';
import { fieldSetOf } from './to-field-set';

/**
 * The upgrade path from client-side apply (Appendix C; upstream's lastAppliedManager and
 * lastAppliedUpdater). Only the manager named "kubectl" (kubectl apply --server-side's default)
 * takes part, so any other name opts out, as upstream:
 *
 * - its apply may take, without force, the fields of the object's last-applied-configuration
 *   annotation whose value the object still has (they were applied client-side);
 * - after its apply, an object that carries the annotation gets it rewritten to the applied
 *   configuration, so that going back to client-side apply diffs against what was applied.
 */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';
export const UPGRADING_MANAGER = 'kubectl';

/** Upstream's TotalAnnotationSizeLimitB: a rewritten annotation that would pass it is dropped instead. */
const ANNOTATIONS_LIMIT_BYTES = 256 * 1024;

/**
 * The fields an upgrading apply may take from their owners: those of the last-applied
 * configuration whose value the live object still has. Undefined when the object has no usable
 * annotation (absent, not JSON, another API version, not of the kind's structure).
 */
export function allowedByLastApplied(live: KObject, schema: ObjectSchema, apiVersion: string): FieldSet | undefined {
  const text = live.metadata.annotations?.[LAST_APPLIED_ANNOTATION];
  if (!text) return undefined;
  try {
    const last: unknown = JSON.parse(text);
    if (!isObject(last) || !sameApiVersion(last.apiVersion, apiVersion)) return undefined;
    const set = fieldSetOf(last, schema);
    const diff = compareValues(last, live, schema);
    return difference(difference(difference(set, diff.modified), diff.added), diff.removed);
  } catch {
    return undefined;
  }
}

/**
 * After an upgrading apply: when obj carries the annotation, it becomes the applied
 * configuration without that annotation, as Go's JSON encoder writes an unstructured object
 * (keys sorted, a final newline); dropped if the annotations would grow past their limit.
 */
export function rewriteLastApplied(obj: KObject, config: KObject): void {
  if (!obj.metadata.annotations?.[LAST_APPLIED_ANNOTATION]) return;
  // The merged object shares unchanged values with the live one: copy before writing.
  const annotations = { ...obj.metadata.annotations };
  obj.metadata = { ...obj.metadata, annotations };
  const applied = structuredClone(config);
  const own = applied.metadata?.annotations;
  if (own) delete own[LAST_APPLIED_ANNOTATION];
  annotations[LAST_APPLIED_ANNOTATION] = `${goJson(applied)}\n`;
  let size = 0;
  for (const [k, v] of Object.entries(annotations)) size += Buffer.byteLength(k) + Buffer.byteLength(v);
  if (size > ANNOTATIONS_LIMIT_BYTES) delete annotations[LAST_APPLIED_ANNOTATION];
}
