import type { KObject } from '../api/types';
import type { UserInfo } from '../api/user';
import type { ResourceType } from '../registry/resource-type';
import type { AdmissionAttributes, Operation } from './write-admission';

/** Who writes and how (4.4 write options). */
export interface WriteContext {
  user: UserInfo;
  dryRun: boolean;
  fieldManager?: string;
  userAgent?: string;
  subresource: string;
  /** Server-side apply wrote the object's managedFields (apply/field-manager.ts); the store keeps them. */
  applied?: boolean;
  /** Where admission's warnings for the client go (the handler sends them as Warning headers); absent for internal writes. */
  warnings?: string[];
  /** Where admission's audit annotations go; absent for internal writes. */
  auditAnnotations?: Record<string, string>;
}

export function writeAttributes(
  operation: Operation,
  t: ResourceType,
  namespace: string,
  name: string,
  ctx: WriteContext,
  object?: KObject,
  oldObject?: KObject,
): AdmissionAttributes {
  return { operation, type: t, namespace, name, subresource: ctx.subresource, object, oldObject, user: ctx.user, dryRun: ctx.dryRun, fieldManager: ctx.fieldManager, warnings: ctx.warnings, auditAnnotations: ctx.auditAnnotations };
}
