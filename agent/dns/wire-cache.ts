/**
 * Encoded UDP answers to cluster queries, by the query's bytes after its id: a repeated question
 * (same name spelling, type, flags and EDNS record) is answered by copying the bytes and writing
 * the new id, without decoding or encoding (the bench's hot path: a pod asking for the same Service
 * again and again). An entry is valid only at the generation of the cluster records it was computed
 * at, so any Service or EndpointSlice change drops every entry at once. Only answers from the
 * cluster records are kept (they carry a fixed TTL); forwarded answers age, and their TTLs would be
 * wrong from a copy. When full, the cache starts empty again (a flood of distinct names cannot grow it).
 */
import type { Packet } from 'dns-packet';

/** Set by the query handler on a response computed from the cluster records alone: their generation then. */
export const CLUSTER_GENERATION = Symbol('svc.dns.clusterGeneration');

export type MarkedPacket = Packet & { [CLUSTER_GENERATION]?: number };

export class WireCache {
  private readonly entries = new Map<string, { buf: Buffer; generation: number }>();

  constructor(
    /** The cluster records' current generation. */
    private readonly generation: () => number,
    private readonly maxEntries = 10_000,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** The answer to this query with its id, or undefined. */
  get(query: Buffer): Buffer | undefined {
    if (query.length <= 12) return undefined;
    const e = this.entries.get(query.toString('latin1', 2));
    if (!e || e.generation !== this.generation()) return undefined;
    const out = Buffer.from(e.buf);
    out[0] = query[0];
    out[1] = query[1];
    return out;
  }

  /** Keeps the encoded answer to a query when the response is a cluster answer of the current generation. */
  put(query: Buffer, response: MarkedPacket, encoded: Buffer): void {
    const generation = response[CLUSTER_GENERATION];
    if (generation === undefined || generation !== this.generation() || query.length <= 12) return;
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(query.toString('latin1', 2), { buf: encoded, generation });
  }
}
