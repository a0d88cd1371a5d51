/**
 * A bounded cache of token decisions with a time to live per entry, and one in-flight call per
 * key so a burst of requests with the same token makes one remote call (as upstream's
 * cached_token_authenticator with its singleflight group). Oldest entries go first when full.
 * The entries are common/ttl-cache.ts's, the TTL map the agent's caches use too.
 */
import { TtlCache } from '../../common/ttl-cache';

export class TokenDecisionCache<V> {
  private readonly entries: TtlCache<V>;
  private readonly inflight = new Map<string, Promise<{ value: V; ttlMs: number }>>();

  constructor(now: () => number, maxEntries = 4096) {
    this.entries = new TtlCache<V>(now, maxEntries);
  }

  /** Returns the cached value, or runs compute once for all concurrent callers; ttlMs 0 means not cached. Rejections are never cached. */
  async get(key: string, compute: () => Promise<{ value: V; ttlMs: number }>): Promise<V> {
    const hit = this.entries.get(key);
    if (hit !== undefined) return hit;
    let p = this.inflight.get(key);
    if (!p) {
      p = compute().finally(() => this.inflight.delete(key));
      this.inflight.set(key, p);
      p.then(
        (r) => this.entries.set(key, r.value, r.ttlMs),
        () => undefined,
      );
    }
    return (await p).value;
  }

  /** The cached value when one is held and fresh, without computing anything. */
  peek(key: string): V | undefined {
    return this.entries.get(key);
  }

  /** Entries held (for tests and metrics). */
  get size(): number {
    return this.entries.size;
  }
}
