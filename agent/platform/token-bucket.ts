/**
 * Token bucket (golang.org/x/time/rate's model): the bucket holds up to `burst` tokens and refills
 * at `qps` per second. allow() takes a token or refuses at once (the pod resources endpoint);
 * msUntilToken() tells a caller that waits instead when to try again (the API client's pacing).
 */
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
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Milliseconds until a token will be there (0 when one is there now); takes nothing. */
  msUntilToken(): number {
    this.refill();
    return this.tokens >= 1 ? 0 : ((1 - this.tokens) * 1000) / this.qps;
  }

  private refill(): void {
    const t = this.now();
    // A clock stepping backwards adds nothing (and takes nothing away).
    if (t > this.last) this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) * this.qps) / 1000);
    this.last = Math.max(this.last, t);
  }
}
