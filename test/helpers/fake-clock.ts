/**
 * The test clock both daemons' unit tests share: an agent Clock (now, sleep) driven by the test.
 * Time moves only in advance(), which wakes due sleeps in time order (ties in request order) and
 * lets each continuation run before the next; nothing depends on real timers.
 */
import type { Clock } from '../../agent/platform/clock';

interface Sleeper {
  at: number;
  seq: number;
  resolve: (elapsed: boolean) => void;
}

/** Lets every pending promise chain run (microtasks, I/O callbacks already queued and a few macrotask turns). */
export async function flush(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((r) => setImmediate(r));
}

export class FakeClock implements Clock {
  private t: number;
  private seq = 0;
  private sleepers: Sleeper[] = [];
  /** Every sleep requested, in order (ms). */
  readonly requested: number[] = [];

  constructor(start = Date.UTC(2025, 0, 1, 0, 0, 0)) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
    this.requested.push(ms);
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = () => {
        this.sleepers = this.sleepers.filter((x) => x !== s);
        resolve(false);
      };
      const s: Sleeper = {
        at: this.t + Math.max(0, ms),
        seq: this.seq++,
        resolve: (elapsed) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(elapsed);
        },
      };
      this.sleepers.push(s);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Number of sleeps waiting. */
  get pending(): number {
    return this.sleepers.length;
  }

  /** Moves time forward by ms, waking each due sleeper in time order and letting its continuation run. */
  async advance(ms: number): Promise<void> {
    const target = this.t + ms;
    await flush();
    for (;;) {
      this.sleepers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.sleepers[0];
      if (!next || next.at > target) break;
      this.sleepers.shift();
      this.t = Math.max(this.t, next.at);
      next.resolve(true);
      await flush();
    }
    this.t = target;
    await flush();
  }

  /** Advances in steps until `cond` holds or `maxMs` passes; returns whether it held. */
  async advanceUntil(cond: () => boolean, maxMs: number, stepMs = 100): Promise<boolean> {
    for (let waited = 0; waited <= maxMs; waited += stepMs) {
      if (cond()) return true;
      await this.advance(stepMs);
    }
    return cond();
  }
}
