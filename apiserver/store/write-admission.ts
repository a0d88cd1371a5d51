import type { KObject } from '../api/types';
import type { UserInfo } from '../api/user';
import type { ResourceType } from '../registry/resource-type';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** What admission sees of a write (Appendix B). object is mutable in the mutating phase only. */
export interface AdmissionAttributes {
  operation: Operation;
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
 * Admission as the store needs it (defined here, at its consumer, so the store never sees the
 * plugins): called for every create, update and delete after defaulting and before validation;
 * may change attrs.object, and rejects with an ApiError to refuse the write. Main wires in
 * admission/'s AdmissionChain.
 */
export interface WriteAdmission {
  admit(attrs: AdmissionAttributes): Promise<void>;
}
