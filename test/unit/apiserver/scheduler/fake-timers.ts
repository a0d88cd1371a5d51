/** Timers for tests: nothing fires until advance() moves the shared fake clock past it. */
import type { Timers } from '../../../../apiserver/scheduler/timers';
import type { FakeClock } from '../controllers/store-fixture';

interface Pending {
  at: number;
  ms: number;
  fn: () => void;
}

export class FakeTimers implements Timers {
  private pending: Pending[] = [];
  private waiters: Array<() => void> = [];
  private cancelWaiters: Array<() => void> = [];

  constructor(private readonly clock: FakeClock) {}

  after(ms: number, fn: () => void): () => void {
    const p: Pending = { at: this.clock.ms + ms, ms, fn };
    this.pending.push(p);
    for (const w of this.waiters.splice(0)) w();
    return () => {
      if (!this.pending.includes(p)) return;
      this.pending = this.pending.filter((x) => x !== p);
      for (const w of this.cancelWaiters.splice(0)) w();
    };
  }

  /** Delays (ms) of the timers not yet fired, in the order they were set. */
  delays(): number[] {
    return this.pending.map((p) => p.ms);
  }

  /** Resolves the next time after() is called. */
  nextTimer(): Promise<void> {
    return new Promise((r) => this.waiters.push(r));
  }

  /** Resolves the next time a pending timer is cancelled. */
  nextCancel(): Promise<void> {
    return new Promise((r) => this.cancelWaiters.push(r));
  }

  /** Moves the clock forward, firing every timer that comes due, earliest first. */
  advance(ms: number): void {
    this.clock.advance(ms);
    const due = this.pending.filter((p) => p.at <= this.clock.ms).sort((a, b) => a.at - b.at);
    this.pending = this.pending.filter((p) => p.at > this.clock.ms);
    for (const p of due) p.fn();
  }
}
