/**
 * Token bucket, as upstream's pod resources endpoint (golang.org/x/time/rate with
 * DefaultQPS = 100 and DefaultBurstTokens = 10): the bucket holds up to `burst` tokens, refills at
 * `qps` per second, and each call takes one or is refused. Refusal never waits.
 */
export const DEFAULT_QPS = 100;
export const DEFAULT_BURST = 10;

export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly qps: number,
    private readonly burst: number,
    /** Milliseconds, monotonic enough for rate keeping (performance.now by default). */
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(qps > 0) || !(burst >= 1)) throw new Error(`invalid rate limit: qps ${qps}, burst ${burst}`);
    this.tokens = burst;
    this.last = now();
  }

  /** Takes a token if one is there; true when the call may proceed. */
  allow(): boolean {
    const t = this.now();
    // A clock stepping backwards adds nothing (and takes nothing away).
    if (t > this.last) this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) * this.qps) / 1000);
    this.last = Math.max(this.last, t);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
