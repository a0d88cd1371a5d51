/**
 * A bounded cache of token decisions with a time to live per entry, and one in-flight call per
 * key so a burst of requests with the same token makes one remote call (as upstream's
 * cached_token_authenticator with its singleflight group). Oldest entries go first when full.
 */
export class TokenDecisionCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();
  private readonly inflight = new Map<string, Promise<{ value: V; ttlMs: number }>>();

  constructor(
    private readonly now: () => number,
    private readonly maxEntries = 4096,
  ) {}

  /** Returns the cached value, or runs compute once for all concurrent callers; ttlMs 0 means not cached. Rejections are never cached. */
  async get(key: string, compute: () => Promise<{ value: V; ttlMs: number }>): Promise<V> {
    const hit = this.entries.get(key);
    if (hit) {
      if (hit.expires > this.now()) return hit.value;
      this.entries.delete(key);
    }
    let p = this.inflight.get(key);
    if (!p) {
      p = compute().finally(() => this.inflight.delete(key));
      this.inflight.set(key, p);
      p.then(
        (r) => {
          if (r.ttlMs > 0) this.set(key, r.value, r.ttlMs);
        },
        () => undefined,
      );
    }
    return (await p).value;
  }

  /** The cached value when one is held and fresh, without computing anything. */
  peek(key: string): V | undefined {
    const hit = this.entries.get(key);
    return hit && hit.expires > this.now() ? hit.value : undefined;
  }

  private set(key: string, value: V, ttlMs: number): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, expires: this.now() + ttlMs });
  }

  /** Entries held (for tests and metrics). */
  get size(): number {
    return this.entries.size;
  }
}
