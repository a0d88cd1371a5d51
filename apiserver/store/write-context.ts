import type { KObject } from '../api/types';
import type { UserInfo } from '../authn/user';
import type { ResourceType } from '../registry/resource-type';

/** Who writes and how (4.4 write options). */
export interface WriteContext {
  user: UserInfo;
  dryRun: boolean;
  fieldManager?: string;
  userAgent?: string;
  subresource: string;
}

export type WriteOperation = 'CREATE' | 'UPDATE' | 'DELETE';

/** What the store shows admission of one write (the fields of admission's AdmissionAttributes). */
export interface WriteAttributes {
  operation: WriteOperation;
  type: ResourceType;
  namespace: string;
  name: string;
  subresource: string;
  object?: KObject;
  oldObject?: KObject;
  user: UserInfo;
  dryRun: boolean;
}

/**
 * The admission chain as the store uses it: admit may change attrs.object (mutating phase) and
 * rejects the write with an ApiError. Declared here, at the consumer, so the store does not
 * import the admission layer above it; admission's AdmissionChain fits it.
 */
export interface Admitter {
  admit(attrs: WriteAttributes): Promise<void>;
}

export function writeAttributes(
  operation: WriteOperation,
  t: ResourceType,
  namespace: string,
  name: string,
  ctx: WriteContext,
  object?: KObject,
  oldObject?: KObject,
): WriteAttributes {
  return { operation, type: t, namespace, name, subresource: ctx.subresource, object, oldObject, user: ctx.user, dryRun: ctx.dryRun };
}
