import { ApiError } from '../api/errors';
import { reclaim, type AdmissionAttributes } from '../store/write-admission';
import { startReinvocation } from './reinvocation';

// The attributes are the store's (it calls admission on every write): defined at that consumer.
export type { AdmissionAttributes, Operation } from '../store/write-admission';

/**
 * An admission plugin: mutate runs in phase one, validate in phase two (Appendix B). Either may
 * throw an ApiError to reject the whole request. Reads never reach admission.
 */
export interface AdmissionPlugin {
  readonly name: string;
  /** Its rejections already name their source as upstream words them (a webhook, a policy): the chain adds no plugin name. */
  readonly namesItself?: boolean;
  /** May change attrs.object; must be idempotent (it can run again on a conflict retry). */
  mutate?(attrs: AdmissionAttributes): Promise<void>;
  /** Must not change anything. */
  validate?(attrs: AdmissionAttributes): Promise<void>;
}

/**
 * Runs every plugin's mutate in order, then every plugin's validate. When a webhook or mutating
 * policy changed the object in the mutating phase, every mutate runs once more (upstream's
 * reinvoker, ./reinvocation.ts): the built-in plugins all, webhooks and policies those with
 * reinvocationPolicy IfNeeded that a later change concerns.
 */
export class AdmissionChain {
  constructor(private readonly plugins: readonly AdmissionPlugin[]) {}

  /** Rejects with the first plugin's error, after undoing what earlier plugins charged (attrs.onRejected). */
  async admit(attrs: AdmissionAttributes): Promise<void> {
    try {
      const ctx = startReinvocation(attrs);
      for (const p of this.plugins) if (p.mutate) await named(p, () => p.mutate!(attrs));
      if (ctx.shouldReinvoke) {
        ctx.isReinvoke = true;
        for (const p of this.plugins) if (p.mutate) await named(p, () => p.mutate!(attrs));
      }
      for (const p of this.plugins) if (p.validate) await named(p, () => p.validate!(attrs));
    } catch (err) {
      await reclaim(attrs);
      throw err;
    }
  }

  /** The plugins' names, in the order they run. */
  names(): string[] {
    return this.plugins.map((p) => p.name);
  }
}

/** A rejection names the plugin that made it (Appendix B), keeping the plugin's own status code and reason. */
async function named(p: AdmissionPlugin, step: () => Promise<void>): Promise<void> {
  try {
    await step();
  } catch (err) {
    if (err instanceof ApiError && !p.namesItself && !err.message.includes(`admission plugin ${p.name}`)) {
      throw new ApiError(err.reason, `${err.message} (admission plugin ${p.name})`, err.details, err.code);
    }
    throw err;
  }
}
