import { TokenBucket } from '../platform/token-bucket';
import { abortError } from './client-error';

/** Paces requests to the API server: wait() resolves when the next request may go. */
export interface RequestLimiter {
  /** Resolves when a request may be sent (FIFO among waiters); rejects with an AbortError when the signal aborts first. */
  wait(signal?: AbortSignal): Promise<void>;
}

/** client-go's defaults when a configuration asks for 0 (rest.Config QPS and Burst). */
const CLIENT_GO_DEFAULT_QPS = 5;
const CLIENT_GO_DEFAULT_BURST = 10;

/**
 * The agent's kubeAPIQPS / kubeAPIBurst, as the kubelet hands them to client-go: a token bucket
 * refilled at qps per second holding up to burst tokens, where a request without a token waits
 * for one (client-go's tokenBucketRateLimiter.Wait) instead of failing. 0 means client-go's
 * default (5 and 10), as upstream, since the kubelet passes the fields through unchanged.
 */
export class TokenBucketLimiter implements RequestLimiter {
  private readonly bucket: TokenBucket;
  private readonly waiters: Array<{ resolve: () => void; reject: (e: Error) => void; signal?: AbortSignal; onAbort?: () => void }> = [];
  private timer?: NodeJS.Timeout;

  constructor(
    qps: number,
    burst: number,
    /** Milliseconds, monotonic (performance.now by default). */
    now: () => number = () => performance.now(),
  ) {
    this.bucket = new TokenBucket(qps > 0 ? qps : CLIENT_GO_DEFAULT_QPS, Math.max(1, burst > 0 ? burst : CLIENT_GO_DEFAULT_BURST), now);
  }

  wait(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortError());
    if (this.waiters.length === 0 && this.bucket.allow()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const w: (typeof this.waiters)[number] = { resolve, reject, ...(signal ? { signal } : {}) };
      if (signal) {
        w.onAbort = () => {
          const i = this.waiters.indexOf(w);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(abortError());
        };
        signal.addEventListener('abort', w.onAbort, { once: true });
      }
      this.waiters.push(w);
      this.schedule();
    });
  }

  /** Lets waiters through while tokens last, then sleeps until the next token is due. */
  private schedule(): void {
    if (this.timer) return;
    while (this.waiters.length > 0 && this.bucket.allow()) {
      const w = this.waiters.shift()!;
      if (w.onAbort) w.signal!.removeEventListener('abort', w.onAbort);
      w.resolve();
    }
    if (this.waiters.length === 0) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.schedule();
      },
      Math.max(1, Math.ceil(this.bucket.msUntilToken())),
    );
  }
}
