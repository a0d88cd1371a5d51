/**
 * The one failure policy of the node's heartbeat loops (the Lease renewal and the node status
 * sync), as the kubelet applies to both: every attempt's outcome goes to the observer (the
 * heartbeat metrics) and to the loop's progress tracker (the watchdog's health signal); failures
 * are counted per loop and logged on one line; every few consecutive failures the API
 * connections are dropped and redialed (kubelet: closeAllConns on repeated heartbeat failure), so
 * a half-dead connection cannot outlive the node-monitor grace period; a loop that retries within
 * an attempt (the Lease) gets an exponential back-off, reset by a success. One `HeartbeatPolicy`
 * is shared by the loops of a node; each loop holds its own `LoopFailures` (its counter, its
 * back-off, its messages).
 */
import { ClientError } from '../client/client-error';
import type { Log } from '../platform/logger';
import { Backoff } from './backoff';
import type { HeartbeatHealth, TrackedLoop } from './heartbeat-health';
import type { HeartbeatObserver } from './heartbeat-observer';
import type { ProgressTracker } from './progress';

export interface HeartbeatPolicyOptions {
  /** Told the outcome of every heartbeat attempt (metrics); optional. */
  observer?: HeartbeatObserver;
  /** Drops and redials the API connections; called after a loop's redialAfterFailures consecutive failures (and every as many after). */
  onRepeatedFailure?: () => Promise<void>;
  /** The watchdog's health signal; loops are watched once `watch` is called for them. */
  health?: HeartbeatHealth;
}

/** What differs between the loops sharing a policy. */
export interface LoopFailureOptions {
  kind: 'lease' | 'status';
  log: Log;
  nodeName: string;
  progress?: ProgressTracker;
  redialAfterFailures: number;
  /** Retry within the attempt after this back-off (the Lease); without it the loop tries again at its next tick. */
  backoff?: { initialMs: number; maxMs: number };
  /** The log lines: a failed attempt, the redial, and (optionally) the first success after failures. */
  messages: { failed: string; redial: string; recovered?: string };
}

/** One loop's view of the shared policy: its consecutive failures and back-off. */
export class LoopFailures {
  private consecutive = 0;
  private readonly backoff: Backoff | undefined;

  constructor(
    private readonly policy: HeartbeatPolicyOptions,
    readonly o: LoopFailureOptions,
  ) {
    this.backoff = o.backoff ? new Backoff({ initialMs: o.backoff.initialMs, maxMs: o.backoff.maxMs }) : undefined;
  }

  /** Consecutive failed attempts so far (0 after a success). */
  get consecutiveFailures(): number {
    return this.consecutive;
  }

  /** An attempt succeeded: the count and back-off start over, progress and the observer are told. */
  succeeded(): void {
    const { o } = this;
    if (this.consecutive > 0 && o.messages.recovered) o.log.info({ node: o.nodeName, after: this.consecutive }, o.messages.recovered);
    this.consecutive = 0;
    this.backoff?.reset();
    o.progress?.succeeded();
    this.policy.observer?.heartbeat(o.kind, true);
  }

  /**
   * An attempt failed (not aborted): counts it, tells progress and the observer, logs it, and
   * redials every redialAfterFailures consecutive failures. Resolves the back-off delay before
   * the next try for a loop with a back-off, else undefined (it tries again at its next tick).
   */
  async failed(e: unknown): Promise<number | undefined> {
    const { o } = this;
    this.consecutive++;
    o.progress?.mark();
    this.policy.observer?.heartbeat(o.kind, false);
    const retryInMs = this.backoff?.next();
    o.log.warn(
      {
        node: o.nodeName,
        consecutiveFailures: this.consecutive,
        ...(retryInMs !== undefined ? { retryInMs } : {}),
        code: e instanceof ClientError ? e.status : undefined,
        error: (e as Error).message,
      },
      o.messages.failed,
    );
    if (this.policy.onRepeatedFailure && this.consecutive % o.redialAfterFailures === 0) {
      o.log.warn({ node: o.nodeName, consecutiveFailures: this.consecutive }, o.messages.redial);
      await this.policy.onRepeatedFailure();
    }
    return retryInMs;
  }
}

export class HeartbeatPolicy {
  constructor(private readonly o: HeartbeatPolicyOptions = {}) {}

  /** The failure handling of one loop under this policy. */
  loop(options: LoopFailureOptions): LoopFailures {
    return new LoopFailures(this.o, options);
  }

  /**
   * Starts the health signal's watch over a loop (call when the loop starts: before that its
   * progress is not kept). A loop without a progress tracker, or a policy without a health
   * signal, is not watched.
   */
  watch(loop: LoopFailures, bounds: Omit<TrackedLoop, 'progress'>): void {
    if (loop.o.progress) this.o.health?.track({ progress: loop.o.progress, ...bounds });
  }
}
