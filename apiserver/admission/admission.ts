import { ApiError } from '../api/errors';
import type { KObject } from '../api/types';
import type { UserInfo } from '../authn/user';
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
 * An admission plugin: mutate runs in phase one, validate in phase two (Appendix B). Either may
 * throw an ApiError to reject the whole request. Reads never reach admission.
 */
export interface AdmissionPlugin {
  readonly name: string;
  /** May change attrs.object; must be idempotent (it can run again on a conflict retry). */
  mutate?(attrs: AdmissionAttributes): Promise<void>;
  /** Must not change anything. */
  validate?(attrs: AdmissionAttributes): Promise<void>;
}

/** Runs every plugin's mutate in order, then every plugin's validate. */
export class AdmissionChain {
  constructor(private readonly plugins: readonly AdmissionPlugin[]) {}

  /** Rejects with the first plugin's error. */
  async admit(attrs: AdmissionAttributes): Promise<void> {
    for (const p of this.plugins) if (p.mutate) await named(p, () => p.mutate!(attrs));
    for (const p of this.plugins) if (p.validate) await named(p, () => p.validate!(attrs));
  }
}

/** A rejection names the plugin that made it (Appendix B), keeping the plugin's own status code and reason. */
async function named(p: AdmissionPlugin, step: () => Promise<void>): Promise<void> {
  try {
    await step();
  } catch (err) {
    if (err instanceof ApiError && !err.message.includes(`admission plugin ${p.name}`)) {
      throw new ApiError(err.reason, `${err.message} (admission plugin ${p.name})`, err.details, err.code);
    }
    throw err;
  }
}
