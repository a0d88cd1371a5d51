import type { BackWriter } from './back-writer';
import { WIRE_BYTES } from './back-writer';
import { encoderOf } from './encoder-gen';
import { VersionIndex } from './version-index';
import type { FieldPlan, MessagePlan } from './plan';

/**
 * The protobuf messages of stored object versions, so that an object read again unchanged (a get,
 * or an item of a list, by any client asking for protobuf) is copied instead of encoded again, as
 * the watch cache keeps each event's JSON (watch-cache.ts render) and upstream's cacher keeps an
 * object's serialized forms (CachingObject). The caller names a version (server/protobuf.ts: by
 * the revision of its write, which names one version of one key): the store never writes two
 * contents under one revision, so an entry cannot go stale. Only stored versions may be put here: what a read returned unchanged, or the
 * stored object a create answers (ObjectStore.create returns the stored value decoded), never a
 * dry-run's answer. The oldest entries go first once the bytes pass the bound (insertion order:
 * refreshing the order on every hit cost more than it saved).
 */
/** How a caller names a stored version (server/protobuf.ts: the store's revision of the write). */
export type VersionKey = string | number;

/**
 * Messages are copied into chunks of this size (a larger message gets a chunk of its own size),
 * one after the other, each after its length (4 bytes, little-endian).
 */
const CHUNK_BYTES = 1 << 20;
/** Where an entry lies is one small integer (a Smi: no heap number per entry): chunk slot and offset. */
const OFFSET_BITS = 22;
const OFFSET_MASK = (1 << OFFSET_BITS) - 1;
/** 8 bits of slot: at most 256 chunks hold entries at once (2^30 - 1, the largest Smi, bounds the pair). */
const SLOTS = 256;
/** A message whose length and offset do not fit OFFSET_BITS is not kept (about 4 MiB; stored objects are far smaller). */
const MAX_MESSAGE = OFFSET_MASK - 4;

interface Chunk {
  buf: Buffer;
  /** Entries still held in it; a chunk no longer written to is dropped when none is left. */
  live: number;
}

/**
 * Why chunks and not a Buffer per entry: each entry's own Buffer (from Node's 8 KiB allocation
 * pool, pinning the pool slab it shares with short-lived buffers) was a heap object that survived
 * the young generation and was promoted and then traced by every full collection, and a create
 * paid its allocation; that retained memory was what a protobuf create cost above JSON's. An entry
 * is now a Map value that is a small integer, and its bytes a copy into the current chunk. A chunk
 * is never written over: a message handed out (a stand-in of a list that is answered later) stays
 * valid after its entry is evicted, and the chunk is freed once nothing refers to it.
 */
export class EncodedCache {
  /** key → slot << OFFSET_BITS | offset of the entry's length prefix in its chunk. */
  private readonly entries = new VersionIndex();
  /**
   * The keys in insertion order from `head` on: the eviction order. Evicting by iterating the Map
   * from its start cost a walk over every entry deleted since the Map last rehashed (V8 keeps them
   * as holes), about 17 µs a set once a full cache evicted on every set.
   */
  private order: VersionKey[] = [];
  private head = 0;
  private size = 0;
  private readonly chunks: Array<Chunk | undefined> = new Array<Chunk | undefined>(SLOTS).fill(undefined);
  /** The slot written to, and where its free space starts. */
  private slot = -1;
  private used = 0;

  constructor(private readonly maxBytes: number) {}

  /** Bytes held now (the messages' own). */
  get bytes(): number {
    return this.size;
  }

  get count(): number {
    return this.entries.size;
  }

  /** The message kept under key: a view of the chunk it was copied to (never written over). */
  get(key: VersionKey): Buffer | undefined {
    const at = this.entries.get(key);
    if (at < 0) return undefined;
    const buf = this.chunks[at >>> OFFSET_BITS]!.buf;
    const offset = (at & OFFSET_MASK) + 4;
    return buf.subarray(offset, offset + buf.readUInt32LE(offset - 4));
  }

  /** Keeps a copy of bytes under key (unless one is kept already, or it is over the bound). */
  set(key: VersionKey, bytes: Uint8Array): void {
    const n = bytes.length;
    if (n > this.maxBytes || n > MAX_MESSAGE || this.entries.get(key) >= 0) return;
    const at = this.place(n + 4);
    const chunk = this.chunks[this.slot]!;
    chunk.buf.writeUInt32LE(n, at);
    chunk.buf.set(bytes, at + 4);
    chunk.live++;
    this.entries.add(key, (this.slot << OFFSET_BITS) | at);
    this.order.push(key);
    this.size += n;
    while (this.size > this.maxBytes) this.evictOldest();
    // The evicted keys' slots are dropped once they are half the array (amortised O(1) a set).
    if (this.head >= 1024 && this.head * 2 >= this.order.length) {
      this.order = this.order.slice(this.head);
      this.head = 0;
    }
  }

  /** The offset of n free bytes in the current chunk, starting a new chunk when they do not fit. */
  private place(n: number): number {
    const current = this.slot < 0 ? undefined : this.chunks[this.slot];
    if (current && current.buf.length - this.used >= n) {
      const at = this.used;
      this.used += n;
      return at;
    }
    if (current && current.live === 0) this.chunks[this.slot] = undefined;
    const next = (this.slot + 1) % SLOTS;
    // Every slot holds entries (only with tiny messages under a large bound): the oldest go.
    while (this.chunks[next] !== undefined) this.evictOldest();
    this.chunks[next] = { buf: Buffer.allocUnsafeSlow(Math.max(CHUNK_BYTES, n)), live: 0 };
    this.slot = next;
    this.used = n;
    return 0;
  }

  private evictOldest(): void {
    const oldest = this.order[this.head++];
    const at = this.entries.get(oldest);
    const slot = at >>> OFFSET_BITS;
    const chunk = this.chunks[slot]!;
    this.size -= chunk.buf.readUInt32LE(at & OFFSET_MASK);
    this.entries.delete(oldest);
    if (--chunk.live === 0 && slot !== this.slot) this.chunks[slot] = undefined;
  }
}

type Json = Record<string, unknown>;

/** A cache and how the objects of one read name their versions in it (undefined: not a stored version). */
export interface CachedEncoding {
  cache: EncodedCache;
  keyOf(obj: Json): VersionKey | undefined;
  /**
   * The object is a version just written (a create's answer): no entry can exist for it yet, so
   * it is not looked up, only kept (a lookup of a key never seen cost about 1 µs a create).
   */
  fresh?: boolean;
}

const ENCODED = Symbol('protobuf message');

/**
 * An item of a list that stands for a stored version whose message the cache holds, so that the
 * list needs no decoded object for it (ListQuery.stored). Only the protobuf encoder can write it:
 * anything else that tried (JSON) fails loudly instead of writing an empty object.
 */
export function standIn(message: Buffer): { metadata: Record<string, never> } {
  return { metadata: {}, [ENCODED]: message, toJSON: refuseJson } as { metadata: Record<string, never> };
}

/** An own property of every stand-in (a copy made by spreading keeps it), one function for all. */
function refuseJson(): never {
  throw new Error('a protobuf stand-in item was rendered as JSON');
}

/** A list message's items field (2: repeated item messages) when it is the plan's last field. */
const listItems = new WeakMap<MessagePlan, FieldPlan | null>();

function itemsFieldOf(plan: MessagePlan): FieldPlan | null {
  let f = listItems.get(plan);
  if (f === undefined) {
    const last = plan.fields[plan.fields.length - 1];
    const c = last?.codec;
    f = last && last.key === 'items' && c?.k === 'array' && !c.wrapped && c.item.k === 'message' ? last : null;
    listItems.set(plan, f);
  }
  return f;
}

/**
 * Writes obj's message content as encoderOf(plan) would, taking the object (or, for a list, each
 * item) from the cache when it is there and putting what it encodes into it.
 */
export function writeCached(w: BackWriter, plan: MessagePlan, obj: Json, reads: CachedEncoding): void {
  const items = itemsFieldOf(plan);
  if (!items || !Array.isArray(obj.items)) {
    writeVersion(w, plan, obj, reads);
    return;
  }
  const itemPlan = (items.codec as { item: { plan: MessagePlan } }).item.plan;
  const list = obj.items as unknown[];
  const tag = (items.no << 3) | WIRE_BYTES;
  // The messages known already, looked up once: their total makes room for the whole list at
  // once (a list of 10,000 pods is about 14 MB; growing by doubling copied and allocated twice that).
  const known = new Array<Buffer | undefined>(list.length);
  const keys = new Array<VersionKey | undefined>(list.length);
  let size = 0;
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    if (typeof item !== 'object' || item === null || Array.isArray(item)) continue;
    const given = (item as { [ENCODED]?: Buffer })[ENCODED];
    const key = given ? undefined : reads.keyOf(item as Json);
    const m = given ?? (key === undefined ? undefined : reads.cache.get(key));
    known[i] = m;
    keys[i] = key;
    if (m) size += m.length + 6;
  }
  w.room(size);
  // Items are the last field, so (writing backwards) they go first, from the last one.
  for (let i = list.length - 1; i >= 0; i--) {
    const item = list[i];
    if (item === null || item === undefined) continue;
    // Not an object: the generated encoder refuses it, naming the field.
    if (typeof item !== 'object' || Array.isArray(item)) encoderOf(plan)(w, { items: [item] });
    const mark = w.mark();
    const m = known[i];
    if (m) w.raw(m);
    else encodeAndKeep(w, itemPlan, item as Json, keys[i], reads.cache);
    w.lengthSince(mark);
    w.varint(tag);
  }
  const { items: _items, ...rest } = obj;
  encoderOf(plan)(w, rest);
}

function writeVersion(w: BackWriter, plan: MessagePlan, obj: Json, reads: CachedEncoding): void {
  const given = (obj as { [ENCODED]?: Buffer })[ENCODED];
  const key = given ? undefined : reads.keyOf(obj);
  const hit = given ?? (key === undefined || reads.fresh ? undefined : reads.cache.get(key));
  if (hit) w.raw(hit);
  else encodeAndKeep(w, plan, obj, key, reads.cache);
}

/** Encodes obj and keeps a copy of its message under key (when it names a version). */
function encodeAndKeep(w: BackWriter, plan: MessagePlan, obj: Json, key: VersionKey | undefined, cache: EncodedCache): void {
  const mark = w.mark();
  encoderOf(plan)(w, obj);
  if (key !== undefined) cache.set(key, w.buf.subarray(w.pos, w.pos + (w.mark() - mark)));
}
