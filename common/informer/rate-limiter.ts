import type { Clock } from './clock';

/** How long a key waits before it is retried (client-go's workqueue.RateLimiter). */
export interface RateLimiter {
  /** The delay for this attempt; each call counts one more failure of the key. */
  when(key: string): number;
  /** Forgets the key's failures (it succeeded). */
  forget(key: string): void;
  /** Failures counted for the key. */
  numRequeues(key: string): number;
}

/** client-go's ItemExponentialFailureRateLimiter: base × 2^failures, capped at max, per key. */
export class ItemExponentialFailureRateLimiter implements RateLimiter {
  private readonly failures = new Map<string, number>();

  constructor(
    private readonly baseMs: number,
    private readonly maxMs: number,
  ) {}

  when(key: string): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    const delay = this.baseMs * 2 ** n;
    return Number.isFinite(delay) ? Math.min(delay, this.maxMs) : this.maxMs;
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }
}

/**
 * client-go's BucketRateLimiter over a token bucket (golang.org/x/time/rate): every retry, of
 * any key, takes a token; qps tokens are added per second up to burst; a retry without a token
 * waits until its token is due. It bounds the overall retry rate whatever the number of keys.
 */
export class BucketRateLimiter implements RateLimiter {
  private tokens: number;
  private last: number;

  constructor(
    private readonly qps: number,
    private readonly burst: number,
    private readonly clock: Clock,
  ) {
    this.tokens = burst;
    this.last = clock.now();
  }

  when(): number {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    // Reserve a token even when none is left: the debt is what later callers wait for.
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / this.qps) * 1000);
  }

  forget(): void {}

  numRequeues(): number {
    return 0;
  }
}

/** client-go's MaxOfRateLimiter: the longest delay of several limiters. */
export class MaxOfRateLimiter implements RateLimiter {
  private readonly limiters: RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    this.limiters = limiters;
  }

  when(key: string): number {
    let max = 0;
    for (const l of this.limiters) max = Math.max(max, l.when(key));
    return max;
  }

  forget(key: string): void {
    for (const l of this.limiters) l.forget(key);
  }

  numRequeues(key: string): number {
    let max = 0;
    for (const l of this.limiters) max = Math.max(max, l.numRequeues(key));
    return max;
  }
}

/** client-go's DefaultControllerRateLimiter: per key 5 ms doubling to 1000 s, overall 10 qps with a burst of 100. */
export function defaultControllerRateLimiter(clock: Clock): RateLimiter {
  return new MaxOfRateLimiter(new ItemExponentialFailureRateLimiter(5, 1000_000), new BucketRateLimiter(10, 100, clock));
}
