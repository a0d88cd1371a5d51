import type { KeyValue, ListOptions, ListResult, Storage, StorageEvent } from '../storage/storage';
import type { CacheFollower } from './watch-cache';

/** One write of a key: its value from this revision on, or null when the write deleted it. */
interface Version {
  revision: number;
  kv: KeyValue | null;
}

/**
 * How long a revision stays answerable after the next write replaced its state (spec section 8:
 * list snapshots are kept 75 seconds; upstream's cacher keeps events, and its snapshots with them,
 * for its eventFreshDuration of 75 s).
 */
export const SNAPSHOT_RETAIN_MS = 75_000;

/** How often the store's compacted revision is read again (upstream's watch cache compactor polls every 15 s). */
export const COMPACTION_POLL_MS = 15_000;

export interface ListSnapshotsOptions {
  /** The clock of the retention and of the compaction poll (milliseconds). */
  now: () => number;
  /**
   * Told of each list answered from memory, with the resource prefix (/<group or core>/<resource>)
   * of the listed prefix (upstream's apiserver_cache_list_total{resource_prefix}).
   */
  onServed?: (resourcePrefix: string) => void;
}

/**
 * The ListFromCacheSnapshot gate (upstream KEP-4988, alpha in 1.33): lists at a specific older
 * revision — resourceVersionMatch=Exact and continue tokens, which are exact reads at the token's
 * revision — are answered from memory rather than the store. Upstream's cacher keeps a snapshot of
 * its object store per revision; svc's watch cache keeps events, not objects, so this keeps every
 * key of the store with the versions needed to read it at any revision from `since` (where it was
 * loaded from one full list) to the latest event it applied: a key-sorted array for prefix and
 * startAfter (binary search), per key its writes in revision order.
 *
 * Fed by the watch cache (CacheFollower): each store event in order, a restart when the cache
 * follows anew (it missed events: the state is dropped and read again), and the history's oldest
 * covered revision after each trim. The window's start (the floor) is the later of that revision
 * and the last write received more than SNAPSHOT_RETAIN_MS ago (or `since`, if later still): the
 * spec's 75 s, within what the watch cache holds (5 minutes, fewer under --watch-cache-max-bytes
 * or its event bound), so its memory is at most the history's writes plus one value per live key.
 * Older versions are pruned as the floor moves (on writes, trims and lists).
 * Anything else (revision 0, i.e. a consistent read of the latest; a revision outside the window;
 * before it has loaded) goes to the store, whose answers (410 Compacted, 504 future) stay as they were.
 *
 * A revision the store has compacted is not answered either (the store's 410 stays), as upstream
 * since 1.34 (its cacher reads etcd's compaction every 15 s and drops older snapshots): the
 * compacted revision is read again when a list would be answered and the last reading is older
 * than COMPACTION_POLL_MS, so another replica's compaction is seen within that time.
 */
export class ListSnapshots implements Pick<Storage, 'list'>, CacheFollower {
  /** Every key held, sorted; also keys forgotten since the last compaction of the array (not in versions: `dead` of them). */
  private keys: string[] = [];
  private dead = 0;
  private versions = new Map<string, Version[]>();
  /** The writes applied, in revision order with their receipt time, from `head` on those the floor has not passed yet. */
  private written: Array<{ revision: number; key: string; time: number }> = [];
  private head = 0;
  private state: 'idle' | 'loading' | 'ready' = 'idle';
  /** Events received while loading, applied after the loaded revision. */
  private buffered: StorageEvent[] = [];
  /** Counts loads, so that a load overtaken by a restart is discarded. */
  private generation = 0;
  private since = 0;
  private latest = 0;
  /** The window's start (see the class comment): no older revision is answered, versions older than needed for it are pruned. */
  private floor = 0;
  /** The store's compacted revision when last read, and when that was. */
  private compacted = 0;
  private compactionReadAt = -Infinity;

  constructor(
    private readonly storage: Pick<Storage, 'list' | 'compactedRevision'>,
    private readonly opts: ListSnapshotsOptions,
  ) {}

  /** The store's list, answered from memory for a revision in the window (see the class comment). */
  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    const rev = opts.revision ?? 0;
    // answers() again after the read: a restart may have come meanwhile.
    if (this.answers(rev) && rev >= (await this.compactedRevision()) && this.answers(rev)) {
      this.opts.onServed?.(resourcePrefix(prefix));
      return this.read(prefix, rev, opts.limit, opts.startAfter);
    }
    return this.storage.list(prefix, opts);
  }

  /** The store's compacted revision, read again when the last reading is older than COMPACTION_POLL_MS; Infinity (the store answers) when it cannot be read. */
  private async compactedRevision(): Promise<number> {
    const now = this.opts.now();
    if (now - this.compactionReadAt < COMPACTION_POLL_MS) return this.compacted;
    try {
      this.compacted = await this.storage.compactedRevision();
      this.compactionReadAt = now;
      return this.compacted;
    } catch {
      return Infinity;
    }
  }

  /** True when a list at rev is answered from memory now. */
  answers(rev: number): boolean {
    this.age();
    return this.state === 'ready' && rev > 0 && rev >= Math.max(this.since, this.floor) && rev <= this.latest;
  }

  /** The revisions answered from memory now (for tests and logs); undefined before loading. */
  window(): { from: number; to: number } | undefined {
    this.age();
    return this.state === 'ready' ? { from: Math.max(this.since, this.floor), to: this.latest } : undefined;
  }

  /** Keys held (live or deleted within the window) and versions held across them. */
  size(): { keys: number; versions: number } {
    let versions = 0;
    for (const vs of this.versions.values()) versions += vs.length;
    return { keys: this.versions.size, versions };
  }

  /** Moves the window's start on by the clock (writes and trims move it too). */
  private age(): void {
    if (this.state === 'ready') this.prune(this.opts.now());
  }

  restart(): void {
    const gen = ++this.generation;
    this.keys = [];
    this.dead = 0;
    this.versions = new Map();
    this.written = [];
    this.head = 0;
    this.buffered = [];
    this.floor = 0;
    this.state = 'loading';
    // One full read at the latest revision R; events up to R are in it, later ones are applied.
    this.storage.list('/', {}).then(
      (res) => {
        if (gen === this.generation) this.load(res);
      },
      () => {
        // The store did not answer: lists go to it meanwhile, and the next event tries again.
        if (gen === this.generation) this.state = 'idle';
      },
    );
  }

  event(ev: StorageEvent): void {
    if (this.state === 'loading') this.buffered.push(ev);
    else if (this.state === 'idle') this.restart();
    else this.apply(ev);
  }

  trimmed(coveredFrom: number): void {
    if (coveredFrom <= this.floor) return;
    this.floor = coveredFrom;
    if (this.state === 'ready') this.prune(this.opts.now());
  }

  private load(res: ListResult): void {
    // The list is in key order: the sorted array as it comes.
    this.keys = res.items.map((kv) => kv.key);
    for (const kv of res.items) this.versions.set(kv.key, [{ revision: kv.modRevision, kv }]);
    this.since = res.revision;
    this.latest = res.revision;
    this.state = 'ready';
    const buffered = this.buffered;
    this.buffered = [];
    for (const ev of buffered) this.apply(ev);
    this.prune(this.opts.now());
  }

  /** Applies one event after the loaded revision (earlier ones are in the load). */
  private apply(ev: StorageEvent): void {
    if (ev.revision <= this.latest) return;
    this.latest = ev.revision;
    const kv: KeyValue | null =
      ev.type === 'delete' ? null : { key: ev.key, value: ev.value, createRevision: ev.createRevision, modRevision: ev.revision };
    const vs = this.versions.get(ev.key);
    if (vs) vs.push({ revision: ev.revision, kv });
    else {
      this.versions.set(ev.key, [{ revision: ev.revision, kv }]);
      const i = this.lowerBound(ev.key);
      // A forgotten key written again takes its old place back.
      if (this.keys[i] === ev.key) this.dead--;
      else this.keys.splice(i, 0, ev.key);
    }
    const now = this.opts.now();
    this.written.push({ revision: ev.revision, key: ev.key, time: now });
    this.prune(now);
  }

  /**
   * Moves the floor past writes received more than SNAPSHOT_RETAIN_MS before now; then for each
   * write at or below the floor not yet pruned for, its key keeps only the newest version
   * at or below the floor and those after it, and is forgotten when that is a deletion and nothing
   * came after. A key's older versions become prunable only when a later write of it falls to the
   * floor, so visiting those writes is enough: a prune costs the writes trimmed, not the store's size.
   * Forgotten keys leave the sorted array in batches, once they are half of it.
   */
  private prune(now: number): void {
    const q = this.written;
    let h = this.head;
    for (; h < q.length && (q[h].revision <= this.floor || now - q[h].time > SNAPSHOT_RETAIN_MS); h++) {
      if (q[h].revision > this.floor) this.floor = q[h].revision;
      const key = q[h].key;
      const vs = this.versions.get(key);
      if (!vs) continue;
      let keep = 0;
      while (keep + 1 < vs.length && vs[keep + 1].revision <= this.floor) keep++;
      if (keep > 0) vs.splice(0, keep);
      if (vs.length === 1 && vs[0].kv === null && vs[0].revision <= this.floor) {
        this.versions.delete(key);
        this.dead++;
      }
    }
    this.head = h;
    if (h > 1024 && h * 2 > q.length) {
      this.written = q.slice(h);
      this.head = 0;
    }
    if (this.dead > 0 && this.dead * 2 >= this.keys.length) {
      this.keys = this.keys.filter((k) => this.versions.has(k));
      this.dead = 0;
    }
  }

  /** The storage's list at rev (see ListResult): keys in order within prefix after startAfter, at most limit, and the count after the last. */
  private read(prefix: string, rev: number, limit: number | undefined, startAfter: string | undefined): ListResult {
    const max = limit && limit > 0 ? Math.floor(limit) : Infinity;
    let i = this.lowerBound(prefix);
    if (startAfter !== undefined) i = Math.max(i, this.upperBound(startAfter));
    const items: KeyValue[] = [];
    let remaining = 0;
    for (; i < this.keys.length && this.keys[i].startsWith(prefix); i++) {
      const vs = this.versions.get(this.keys[i]);
      const kv = vs ? valueAt(vs, rev) : null;
      if (!kv) continue;
      if (items.length < max) items.push(kv);
      else remaining++;
    }
    return { items, revision: rev, remaining };
  }

  /** Index of the first key >= key. */
  private lowerBound(key: string): number {
    return this.search((k) => compareKeys(k, key) < 0);
  }

  /** Index of the first key > key. */
  private upperBound(key: string): number {
    return this.search((k) => compareKeys(k, key) <= 0);
  }

  /** The first index whose key is not before (binary search over the sorted keys). */
  private search(before: (k: string) => boolean): number {
    let lo = 0;
    let hi = this.keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (before(this.keys[mid])) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** The key's value at rev: its newest write at or before rev, null when that deleted it or there is none. */
function valueAt(vs: Version[], rev: number): KeyValue | null {
  for (let i = vs.length - 1; i >= 0; i--) if (vs[i].revision <= rev) return vs[i].kv;
  return null;
}

/**
 * The stores' key order: UTF-8 bytes (storage/key-range.ts compareKeys), without encoding. UTF-16
 * code units order as code points except that surrogates (U+D800–DFFF, halves of code points
 * above U+FFFF) sort below U+E000–FFFF; moving them above gives code point order, which is UTF-8's.
 */
export function compareKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x += x >= 0xe000 ? -0x800 : 0x2000;
      y += y >= 0xe000 ? -0x800 : 0x2000;
    }
    return x - y;
  }
  return a.length - b.length;
}

/** /<group or core>/<resource> of a listed prefix (bounded: the metric's label), or the prefix itself when shorter. */
function resourcePrefix(prefix: string): string {
  const parts = prefix.split('/', 3);
  return parts.length === 3 ? `/${parts[1]}/${parts[2]}` : prefix;
}
