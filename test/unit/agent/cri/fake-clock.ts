/** A manual clock for the CRI tests: time moves only in advance(), which runs due sleepers in order. */
import type { Clock } from '../../../../agent/platform/clock';

interface Sleeper {
  at: number;
  resolve: (ok: boolean) => void;
}

export class FakeClock implements Clock {
  private t: number;
  private sleepers: Sleeper[] = [];

  constructor(start = 1_700_000_000_000) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const s: Sleeper = {
        at: this.t + Math.max(0, ms),
        resolve: (ok) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(ok);
        },
      };
      const onAbort = () => {
        this.sleepers = this.sleepers.filter((x) => x !== s);
        s.resolve(false);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.sleepers.push(s);
    });
  }

  /** Number of pending sleeps (to wait until code under test has gone to sleep). */
  get pending(): number {
    return this.sleepers.length;
  }

  /** Moves time forward by ms, waking sleepers at their due times and letting their continuations run. */
  async advance(ms: number): Promise<void> {
    const target = this.t + ms;
    for (;;) {
      await settle();
      this.sleepers.sort((a, b) => a.at - b.at);
      const next = this.sleepers[0];
      if (!next || next.at > target) break;
      this.sleepers.shift();
      this.t = Math.max(this.t, next.at);
      next.resolve(true);
    }
    this.t = target;
    await settle();
  }
}

/** Lets pending promise continuations (and I/O callbacks already queued) run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}
