/**
 * One job that brings the world in line with informers' caches as a whole (the network proxy's
 * rules, the NetworkPolicy rules), driven by a work queue with a single key, as upstream
 * kube-proxy's BoundedFrequencyRunner: request() asks for a sync; syncs start at least
 * minIntervalMs apart, requests meanwhile fold into the next one; a failed sync is retried with
 * the queue's back-off (the caller's runWorkers), and until one succeeds the change counts as
 * pending, which pendingMs() reports for a readiness check.
 */
import type { WorkQueue } from './work-queue';

const KEY = 'sync';

export interface PacedSyncOptions {
  queue: WorkQueue;
  now(): number;
  minIntervalMs: number;
  /** Brings the world in line; rejects when that failed (the key is retried). */
  sync(): Promise<void>;
}

export class PacedSync {
  private lastStart = Number.NEGATIVE_INFINITY;
  private pendingSince: number | undefined;

  constructor(private readonly o: PacedSyncOptions) {}

  /** Asks for a sync: now, or when minIntervalMs has passed since the last one started. */
  request(): void {
    this.pendingSince ??= this.o.now();
    this.o.queue.add(KEY);
  }

  /** The worker's body (runWorkers(queue, () => paced.runOnce(), ...)): one sync, or a postponement. */
  async runOnce(): Promise<void> {
    const now = this.o.now();
    const wait = this.lastStart + this.o.minIntervalMs - now;
    if (wait > 0) {
      this.o.queue.addAfter(KEY, wait);
      return;
    }
    this.lastStart = now;
    const pendingAt = this.pendingSince;
    this.pendingSince = undefined;
    try {
      await this.o.sync();
    } catch (e) {
      this.pendingSince ??= pendingAt ?? now;
      throw e;
    }
  }

  /** How long a requested change has waited for a successful sync (ms), or undefined when none waits. */
  pendingMs(): number | undefined {
    return this.pendingSince === undefined ? undefined : this.o.now() - this.pendingSince;
  }
}
