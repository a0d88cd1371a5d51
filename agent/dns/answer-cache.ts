/**
 * The cache of forwarded answers: keyed by name, type and class; size-bounded (least recently
 * used goes first); an entry lives for the smallest TTL of its records, capped, as CoreDNS's cache
 * plugin does in NodeLocal DNS's Corefile ("success 9984 30", "denial 9984 5"): positive answers
 * at most 30 s, negative ones (NXDOMAIN, NODATA) for the SOA's negative TTL (RFC 2308: the smaller
 * of the SOA record's TTL and its minimum field) at most 5 s. A negative answer without an SOA,
 * SERVFAIL and other errors, and answers with a zero TTL are not cached. Served answers carry
 * their TTLs decreased by the time spent in the cache.
 */
import type { Answer } from 'dns-packet';

export interface CacheLimits {
  /** Entries kept at most (NodeLocal DNS: 9984). */
  maxEntries: number;
  /** Longest life of a positive answer, seconds. */
  maxSuccessTtl: number;
  /** Longest life of a negative answer, seconds. */
  maxDenialTtl: number;
}

export const DEFAULT_CACHE_LIMITS: CacheLimits = { maxEntries: 9984, maxSuccessTtl: 30, maxDenialTtl: 5 };

/** What a cached answer holds: the parts of the upstream's response a client gets back. */
export interface CachedAnswer {
  rcode: string;
  answers: Answer[];
  authorities: Answer[];
  additionals: Answer[];
}

interface Entry {
  value: CachedAnswer;
  storedAt: number;
  expiresAt: number;
}

const ttlOf = (rr: Answer): number => ('ttl' in rr && typeof rr.ttl === 'number' ? rr.ttl : 0);

export const cacheKey = (name: string, type: string, klass = 'IN'): string => `${name.toLowerCase()}/${type}/${klass}`;

/** How long an upstream answer may be cached, seconds; 0: not at all. */
export function cacheSeconds(p: Pick<CachedAnswer, 'rcode' | 'answers' | 'authorities'>, limits: CacheLimits): number {
  const rcode = p.rcode;
  const answers = p.answers.filter((r) => r.type !== 'OPT');
  if (rcode === 'NOERROR' && answers.length > 0) return Math.min(limits.maxSuccessTtl, ...answers.map(ttlOf));
  if (rcode !== 'NOERROR' && rcode !== 'NXDOMAIN') return 0;
  const soa = p.authorities.find((r) => r.type === 'SOA');
  if (!soa || soa.type !== 'SOA') return 0;
  return Math.min(limits.maxDenialTtl, ttlOf(soa), soa.data.minimum ?? 0);
}

export class AnswerCache {
  private readonly entries = new Map<string, Entry>();
  hits = 0;
  misses = 0;

  constructor(
    private readonly limits: CacheLimits = DEFAULT_CACHE_LIMITS,
    /** Milliseconds since the epoch (injected so tests move time). */
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** The cached answer with TTLs aged, or undefined (expired entries are dropped). */
  get(key: string): CachedAnswer | undefined {
    const e = this.entries.get(key);
    const now = this.now();
    if (!e || e.expiresAt <= now) {
      if (e) this.entries.delete(key);
      this.misses++;
      return undefined;
    }
    // Most recently used last: Map keeps insertion order, so the first key is the eviction victim.
    this.entries.delete(key);
    this.entries.set(key, e);
    this.hits++;
    const aged = Math.floor((now - e.storedAt) / 1000);
    const age = (rrs: Answer[]) => rrs.map((r) => (r.type === 'OPT' ? r : { ...r, ttl: Math.max(0, ttlOf(r) - aged) }));
    return { rcode: e.value.rcode, answers: age(e.value.answers), authorities: age(e.value.authorities), additionals: age(e.value.additionals) };
  }

  /** Stores an upstream answer for as long as cacheSeconds allows; returns the seconds (0: not stored). */
  put(key: string, p: CachedAnswer): number {
    const seconds = cacheSeconds(p, this.limits);
    if (seconds <= 0 || this.limits.maxEntries <= 0) return 0;
    const now = this.now();
    const value: CachedAnswer = { ...p, additionals: p.additionals.filter((r) => r.type !== 'OPT') };
    this.entries.delete(key);
    this.entries.set(key, { value, storedAt: now, expiresAt: now + seconds * 1000 });
    while (this.entries.size > this.limits.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    return seconds;
  }
}
