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
  /** The request's fieldManager (sent to webhooks in the request options). */
  fieldManager?: string;
  /** Warnings for the client (webhook and policy warnings): admission appends, the handler sends them as Warning headers. */
  warnings?: string[];
  /** Audit annotations admission produced (webhooks' `<hook>/<key>`, policies', pod-security.kubernetes.io/*): the request's audit event carries them. */
  auditAnnotations?: Record<string, string>;
  /**
   * Side effects admission made that must be undone if the write does not happen after all
   * (Appendix B: quota usage charged by the ResourceQuota plugin). A plugin adds an undo; the
   * chain runs them when a later plugin rejects the write, the store when validation or storage
   * refuses it (reclaim).
   */
  onRejected?: Array<() => Promise<void>>;
}

/** Runs (once) the undos admission registered, newest first; an undo that fails is passed over (the quota controller recounts). */
export async function reclaim(attrs: AdmissionAttributes): Promise<void> {
  const undos = attrs.onRejected?.splice(0) ?? [];
  for (const undo of undos.reverse()) {
    try {
      await undo();
    } catch {
      // Best effort: what is left over is corrected by the next recount.
    }
  }
}

/** Runs the write that follows a successful admission; if it throws, admission's side effects are reclaimed first. */
export async function afterAdmission<T>(attrs: AdmissionAttributes, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    await reclaim(attrs);
    throw err;
  }
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
