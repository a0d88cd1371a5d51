import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Storage } from '../storage/storage';

/**
 * Keeps the store's history to the promised window (section 8: 5 minutes of watch history,
 * continue tokens valid 5 minutes) and no more. Like kube-apiserver's compactor it samples the
 * current revision periodically and compacts to the newest sample older than the window, which
 * works the same on every backend.
 */
export class Compactor {
  private readonly samples: Array<{ time: number; revision: number }> = [];

  constructor(
    private readonly storage: Storage,
    private readonly o: { retainMs: number; intervalMs: number; now: () => number; log: Logger },
  ) {}

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.tick();
      } catch (err) {
        this.o.log.warn({ err }, 'compaction failed; will retry');
      }
      // Rejects at once when the signal is (or was already) aborted.
      await sleep(this.o.intervalMs, undefined, { signal }).catch(() => undefined);
    }
  }

  /** One sampling step; compacts when a sample has aged past the window. */
  async tick(): Promise<void> {
    const now = this.o.now();
    this.samples.push({ time: now, revision: await this.storage.currentRevision() });
    let target = 0;
    while (this.samples.length > 0 && now - this.samples[0].time >= this.o.retainMs) target = this.samples.shift()!.revision;
    if (target > (await this.storage.compactedRevision())) {
      await this.storage.compact(target);
      this.o.log.debug({ revision: target }, 'compacted store history');
    }
  }
}
