/** Exponential back-off with a cap, as client-go's wait.Backoff is used by the kubelet's heartbeat loops. */
import type { Random } from '../platform/clock';

export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  /** Growth per step; default 2. */
  factor?: number;
  /** Adds up to this fraction of the delay at random (0 = none). */
  jitter?: number;
  random?: Random;
}

export class Backoff {
  private current: number;
  constructor(private readonly o: BackoffOptions) {
    this.current = o.initialMs;
  }

  /** The next delay in ms; each call grows the following one until maxMs. */
  next(): number {
    const base = this.current;
    this.current = Math.min(this.o.maxMs, this.current * (this.o.factor ?? 2));
    const j = this.o.jitter ?? 0;
    const delay = j > 0 ? base + base * j * (this.o.random ?? Math.random)() : base;
    return Math.min(delay, this.o.maxMs);
  }

  /** Starts over from initialMs (after a success). */
  reset(): void {
    this.current = this.o.initialMs;
  }
}

/** base plus up to fraction*base at random: wait.Jitter. */
export function jittered(base: number, fraction: number, random: Random = Math.random): number {
  return base + base * fraction * random();
}
