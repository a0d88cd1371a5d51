/**
 * The shared fake clock of the unit tests: time moves only in advance(), which fires due timers
 * and sleeps in time order and lets each continuation run before the next. It is both the
 * agent's Clock (now, sleep) and the informer's and work queue's Clock (now, after).
 */

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
}

/** Lets every pending promise chain run (microtasks and a few macrotask turns). */
export async function flush(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((r) => setImmediate(r));
}

export class FakeClock {
  private t: number;
  private seq = 0;
  private timers: Timer[] = [];
  /** Every sleep requested, in order (ms). */
  readonly requested: number[] = [];

  constructor(start = Date.UTC(2025, 0, 1, 0, 0, 0)) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  /** Calls fn once advance() reaches now + ms; the returned function cancels it. */
  after(ms: number, fn: () => void): () => void {
    const timer: Timer = { at: this.t + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((x) => x !== timer);
    };
  }

  /** Waits ms of fake time; resolves true when it passed, false as soon as the signal aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
    this.requested.push(ms);
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = () => {
        cancel();
        resolve(false);
      };
      const cancel = this.after(ms, () => {
        signal?.removeEventListener('abort', onAbort);
        resolve(true);
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Number of timers and sleeps waiting. */
  get pending(): number {
    return this.timers.length;
  }

  /** Delays still to run, from now, in time order. */
  delays(): number[] {
    return [...this.timers].sort((a, b) => a.at - b.at || a.seq - b.seq).map((x) => x.at - this.t);
  }

  /** Moves time forward by ms, firing each due timer in time order and letting its continuation run. */
  async advance(ms: number): Promise<void> {
    const target = this.t + ms;
    await flush();
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers[0];
      if (!next || next.at > target) break;
      this.timers.shift();
      this.t = Math.max(this.t, next.at);
      next.fn();
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
