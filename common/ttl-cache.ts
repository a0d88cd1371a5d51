/**
 * A small map whose entries expire after a per-entry TTL on an injected clock; bounded in size
 * (the oldest entry goes first when full). Both daemons cache authentication and authorization
 * answers in it: the agent's token reviews and SubjectAccessReviews (agent/server/), the API
 * server's token decisions (apiserver/authn/token-cache.ts adds one in-flight call per key on top).
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();

  constructor(
    private readonly now: () => number,
    private readonly maxEntries = 4096,
  ) {}

  /** The live value for key, or undefined when absent or expired. */
  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expires <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  /** Stores value for ttlMs; a ttl of 0 or less stores nothing. Evicts the oldest entry when full. */
  set(key: string, value: V, ttlMs: number): void {
    if (ttlMs <= 0) return;
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, expires: this.now() + ttlMs });
  }

  get size(): number {
    return this.entries.size;
  }
}
