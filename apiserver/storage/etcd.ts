import type { Etcd3, IKeyValue, IRangeRequest, IRangeResponse, ITxnRequest, IEvent } from 'etcd3';
import { isMessageTooLarge, newEtcdClient, storageErrorOf, type EtcdConnectOptions } from './etcd-client';
import { EtcdWatchStream } from './etcd-watch';
import { prefixEnd } from './key-range';
import { StorageError, type KeyValue, type ListOptions, type ListResult, type Storage, type StorageEvent } from './storage';

export type { EtcdConnectOptions } from './etcd-client';

/**
 * The clustered backend: every key lives in etcd under a prefix, and the Storage revision model is
 * etcd's own (resourceVersion = mod_revision, one cluster-wide counter, etcd compaction), so several
 * API servers on one etcd agree on every resourceVersion. Like kube-apiserver's etcd3 store, each
 * write is one txn guarded by a compare on the key's revisions, and reads at a revision are etcd
 * ranges at that revision. Nothing is cached here; a watch cache sits above.
 */
export class EtcdStorage implements Storage {
  private readonly prefix: string;
  private readonly prefixBytes: Buffer;
  private readonly pageSize: number;
  /** A lower bound of etcd's compacted revision (exact when last probed); see compactedRevision(). */
  private knownCompacted = 0;
  private closed = false;
  private readonly streams = new Set<EtcdWatchStream>();
  private readonly wakeWatchers = new Set<() => void>();

  private constructor(
    private readonly client: Etcd3,
    prefix: string,
    rangePageSize: number,
  ) {
    this.prefix = prefix;
    this.prefixBytes = Buffer.from(prefix, 'utf8');
    this.pageSize = rangePageSize;
  }

  /**
   * Builds a client for the cluster (reading the TLS files). It does not wait for etcd: an
   * unreachable cluster shows as Unavailable from each call, so the server can start, report not
   * ready and keep retrying (issue 7). Throws a plain Error for unusable options.
   */
  static async connect(opts: EtcdConnectOptions): Promise<EtcdStorage> {
    const pageSize = opts.rangePageSize ?? 1000;
    if (!(pageSize >= 1)) throw new Error('etcd: rangePageSize must be at least 1');
    const client = await newEtcdClient(opts);
    return new EtcdStorage(client, (opts.prefix ?? '/registry-svc').replace(/\/+$/, ''), Math.floor(pageSize));
  }

  /** Reads one key at the latest revision (or at opts.revision). Null when absent. Errors: Compacted, FutureRevision, Unavailable. */
  async get(key: string, opts: { revision?: number } = {}): Promise<KeyValue | null> {
    const res = await this.range({ key: this.encode(key), revision: opts.revision || 0 });
    return res.kvs.length > 0 ? this.toKeyValue(res.kvs[0]) : null;
  }

  /**
   * Keys with the prefix in byte order at one revision. Never one unbounded etcd range: the list is
   * read in ranges of at most rangePageSize keys (1,000), each starting after the last key of the
   * previous one and all pinned to the revision of the first, so a 10k-object list never meets a
   * gRPC message limit (see etcdChannelOptions) and never needs one huge buffer. etcd's range
   * count is the number of keys from the range start, so remaining needs no extra call.
   * Errors: Compacted, FutureRevision, Unavailable.
   */
  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    const want = opts.limit && opts.limit > 0 ? Math.floor(opts.limit) : Infinity;
    const end = prefixEnd(this.prefix + prefix);
    let start = this.encode(prefix);
    if (opts.startAfter !== undefined) {
      const after = Buffer.concat([this.encode(opts.startAfter), ZERO]); // the smallest key > startAfter
      if (Buffer.compare(after, start) > 0) start = after;
    }
    let revision = opts.revision || 0;
    let page = this.pageSize;
    const items: KeyValue[] = [];
    let remaining = 0;
    if (Buffer.compare(start, end) >= 0) {
      // startAfter is past the prefix: nothing to return, but the revision is still checked and learned.
      const res = await this.range({ key: end, revision, count_only: true });
      return { items, revision: revision || Number(res.header.revision), remaining };
    }
    for (;;) {
      const limit = Math.min(page, want - items.length);
      let res: IRangeResponse;
      try {
        res = await this.range({ key: start, range_end: end, revision, limit }, false);
      } catch (e) {
        // A page of unusually large objects: ask for fewer keys (one value always fits).
        if (isMessageTooLarge(e) && limit > 1) {
          page = Math.ceil(limit / 2);
          continue;
        }
        throw storageErrorOf(e);
      }
      if (revision === 0) revision = Number(res.header.revision);
      for (const kv of res.kvs) items.push(this.toKeyValue(kv));
      remaining = Number(res.count) - res.kvs.length;
      if (!res.more || res.kvs.length === 0 || items.length >= want) break;
      start = Buffer.concat([res.kvs[res.kvs.length - 1].key, ZERO]);
    }
    return { items, revision, remaining };
  }

  /** Creates a key in one txn (create_revision == 0 → put); durable when it resolves. Errors: AlreadyExists, Unavailable. */
  async create(key: string, value: Buffer): Promise<KeyValue> {
    const k = this.encode(key);
    const res = await this.txn({
      compare: [{ key: k, target: 'Create', result: 'Equal', create_revision: 0 }],
      success: [{ request_put: { key: k, value } }],
      failure: [],
    });
    if (!res.succeeded) throw new StorageError('AlreadyExists', `key ${key} already exists`);
    const rev = Number(res.header.revision);
    return { key, value, createRevision: rev, modRevision: rev };
  }

  /**
   * Replaces a key if its mod_revision is expectedRevision, in one txn whose failure branch reads
   * the key, so a Conflict carries the current value without another round trip (as
   * kube-apiserver's GuaranteedUpdate does). Errors: NotFound, Conflict, Unavailable.
   */
  async update(key: string, value: Buffer, expectedRevision: number): Promise<KeyValue> {
    const k = this.encode(key);
    const res = await this.txn({
      compare: [
        // A missing key compares as all zeros; the first compare keeps expectedRevision 0 from creating it.
        { key: k, target: 'Create', result: 'Greater', create_revision: 0 },
        { key: k, target: 'Mod', result: 'Equal', mod_revision: expectedRevision },
      ],
      success: [{ request_put: { key: k, value, prev_kv: true } }],
      failure: [{ request_range: { key: k } }],
    });
    if (!res.succeeded) throw this.mismatch(key, res.responses[0]?.response_range?.kvs[0], expectedRevision);
    const prev = res.responses[0]?.response_put?.prev_kv;
    return { key, value, createRevision: Number(prev?.create_revision), modRevision: Number(res.header.revision) };
  }

  /** Deletes a key (only at expectedRevision when given) and returns its last value at the deletion's revision. Errors: NotFound, Conflict, Unavailable. */
  async delete(key: string, expectedRevision?: number): Promise<KeyValue> {
    const k = this.encode(key);
    const res = await this.txn({
      compare: [
        { key: k, target: 'Create', result: 'Greater', create_revision: 0 },
        ...(expectedRevision === undefined ? [] : [{ key: k, target: 'Mod' as const, result: 'Equal' as const, mod_revision: expectedRevision }]),
      ],
      success: [{ request_delete_range: { key: k, prev_kv: true } }],
      failure: [{ request_range: { key: k } }],
    });
    if (!res.succeeded) throw this.mismatch(key, res.responses[0]?.response_range?.kvs[0], expectedRevision);
    const prev = res.responses[0]?.response_delete_range?.prev_kvs[0];
    if (!prev) throw new StorageError('Unavailable', `etcd: delete of ${key} returned no previous value`);
    return { key, value: prev.value, createRevision: Number(prev.create_revision), modRevision: Number(res.header.revision) };
  }

  /**
   * Events for the prefix strictly after fromRevision, from an etcd watch with prev_kv. The watch
   * starts at fromRevision itself (its events are skipped) rather than fromRevision + 1, so etcd's
   * own check "start < compacted revision" is exactly the interface's "fromRevision < compacted
   * revision" → Compacted. A broken stream (member restart, network) is re-opened from the last
   * delivered revision, so events are neither lost nor repeated, like clientv3's watch; only when
   * that history was compacted meanwhile does the iterator throw Compacted. After close() it throws
   * Unavailable.
   */
  watch(prefix: string, fromRevision: number, signal: AbortSignal): AsyncIterable<StorageEvent> {
    return { [Symbol.asyncIterator]: () => this.follow(prefix, fromRevision, signal) };
  }

  /** The latest revision: the header of a linearizable count-only range (one round trip). Errors: Unavailable. */
  async currentRevision(): Promise<number> {
    const res = await this.range({ key: this.prefixBytes, count_only: true });
    return Number(res.header.revision);
  }

  /**
   * The oldest readable revision. etcd has no call that reports it and writing it into a key (as
   * kube-apiserver's compact_rev_key does) would take a revision, so it is found by reads: a
   * count-only range at the last known value succeeds exactly when no one (another replica) has
   * compacted further since, the usual case and one round trip; otherwise a binary search over the
   * newer revisions finds the first one etcd still serves. Errors: Unavailable.
   */
  async compactedRevision(): Promise<number> {
    const known = this.knownCompacted;
    if (await this.readableAt(Math.max(known, 1))) return known;
    let bad = Math.max(known, 1); // refused with Compacted
    let good = await this.currentRevision(); // the head is always readable
    while (good - bad > 1) {
      const mid = Math.floor((bad + good) / 2);
      if (await this.readableAt(mid)) good = mid;
      else bad = mid;
    }
    this.knownCompacted = Math.max(this.knownCompacted, good);
    return good;
  }

  /**
   * etcd compaction to the revision: every key's value as of it stays readable. At or below the
   * compacted revision etcd answers ErrCompacted, which is success here (a periodic compactor needs
   * no bookkeeping). Errors: FutureRevision beyond the head, Unavailable.
   */
  async compact(revision: number): Promise<void> {
    this.assertOpen();
    try {
      await this.client.kv.compact({ revision, physical: false });
    } catch (e) {
      const err = storageErrorOf(e);
      if (err.code !== 'Compacted') throw err;
    }
    this.knownCompacted = Math.max(this.knownCompacted, revision);
  }

  /** Ends every watcher (their iterators throw Unavailable) and the client; later calls fail with Unavailable. */
  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    for (const s of this.streams) s.close();
    for (const wake of this.wakeWatchers) wake();
    this.client.close();
    return Promise.resolve();
  }

  private async *follow(prefix: string, fromRevision: number, signal: AbortSignal): AsyncGenerator<StorageEvent> {
    let last = fromRevision;
    let failures = 0;
    let current: EtcdWatchStream | null = null;
    let sleeping: (() => void) | null = null;
    const interrupt = (): void => {
      current?.close();
      sleeping?.();
    };
    signal.addEventListener('abort', interrupt);
    this.wakeWatchers.add(interrupt);
    try {
      while (!signal.aborted) {
        this.assertOpen();
        try {
          current = await EtcdWatchStream.open(this.client, {
            key: this.encode(prefix),
            range_end: prefixEnd(this.prefix + prefix),
            // etcd reads start_revision 0 as "from now"; nothing precedes revision 1 anyway.
            start_revision: Math.max(last, 1),
            prev_kv: true,
            // etcd replays history in responses of up to 1,000 revisions, which can be far larger
            // than grpc.max_receive_message_length; with fragment it splits any response over its
            // --max-request-bytes (1.5 MiB) into several. Events are self-contained, so each
            // fragment is handled as it comes, with no reassembly.
            fragment: true,
          });
        } catch {
          current = null; // could not even start a stream (client closing, auth): retried below
        }
        const stream = current;
        // Skip what precedes the resume point (the start revision itself, see watch()). Within one
        // stream etcd sends each revision once and in order, so nothing else is filtered: a txn that
        // wrote several keys under one revision (not done here, but by other etcd clients) keeps
        // all its events.
        const floor = last;
        if (stream) {
          this.streams.add(stream);
          try {
            if (signal.aborted || this.closed) stream.close();
            for (;;) {
              const got = await stream.next();
              if (Array.isArray(got)) {
                for (const ev of got) {
                  const e = this.toEvent(ev);
                  if (e.revision <= floor) continue;
                  last = e.revision;
                  yield e;
                }
                continue;
              }
              if (got.kind === 'compacted') {
                throw new StorageError('Compacted', `required revision ${last} has been compacted (oldest is ${got.compactRevision})`);
              }
              if (got.kind === 'refused') throw new StorageError('Unavailable', `etcd refused the watch: ${got.reason}`);
              // Re-opening would fetch the same oversize response again.
              if (got.kind === 'broken' && isMessageTooLarge(got.error)) throw storageErrorOf(got.error);
              break; // closed (abort or close()), or broken: reconnect below
            }
          } finally {
            stream.close();
            this.streams.delete(stream);
            current = null;
          }
          if (stream.established) failures = 0; // etcd was there: retry soon
        }
        if (signal.aborted) return;
        this.assertOpen();
        // Back off while etcd is away (100 ms doubling to 2 s), resuming as soon as it answers.
        const delay = Math.min(2000, 100 * 2 ** Math.min(failures, 5));
        failures += 1;
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, delay);
          sleeping = () => (clearTimeout(t), resolve());
        });
        sleeping = null;
      }
    } finally {
      signal.removeEventListener('abort', interrupt);
      this.wakeWatchers.delete(interrupt);
    }
  }

  private toEvent(ev: IEvent): StorageEvent {
    const key = this.decode(ev.kv.key);
    const revision = Number(ev.kv.mod_revision);
    if (ev.type === 'Delete') {
      // etcd's delete event carries a tombstone (key and revision only); the value and the
      // creation revision come from prev_kv, which the watch requests.
      const prev = ev.prev_kv;
      const value = prev ? prev.value : EMPTY;
      return { type: 'delete', key, value, prevValue: value, revision, createRevision: prev ? Number(prev.create_revision) : 0 };
    }
    const createRevision = Number(ev.kv.create_revision);
    const e: StorageEvent = { type: 'put', key, value: ev.kv.value, revision, createRevision };
    // A create has no previous value even if the key existed before (deleted then created again).
    if (createRevision !== revision && ev.prev_kv) e.prevValue = ev.prev_kv.value;
    return e;
  }

  private async readableAt(revision: number): Promise<boolean> {
    try {
      await this.range({ key: this.prefixBytes, revision, count_only: true });
      return true;
    } catch (e) {
      if (e instanceof StorageError && e.code === 'Compacted') return false;
      throw e;
    }
  }

  /** Why a guarded write failed: the key is gone (NotFound) or at another revision (Conflict). */
  private mismatch(key: string, cur: IKeyValue | undefined, expected: number | undefined): StorageError {
    if (!cur) return new StorageError('NotFound', `key ${key} not found`);
    const kv = this.toKeyValue(cur);
    return new StorageError('Conflict', `key ${key} is at revision ${kv.modRevision}, not ${expected}`, kv);
  }

  /** One linearizable range; with mapErrors false the raw error is thrown (list inspects it). */
  private async range(req: IRangeRequest, mapErrors = true): Promise<IRangeResponse> {
    this.assertOpen();
    try {
      return await this.client.kv.range({ ...req, serializable: false });
    } catch (e) {
      throw mapErrors ? storageErrorOf(e) : e;
    }
  }

  private async txn(req: ITxnRequest) {
    this.assertOpen();
    try {
      return await this.client.kv.txn(req);
    } catch (e) {
      throw storageErrorOf(e);
    }
  }

  private encode(key: string): Buffer {
    return Buffer.concat([this.prefixBytes, Buffer.from(key, 'utf8')]);
  }

  private decode(key: Buffer): string {
    return key.subarray(this.prefixBytes.length).toString('utf8');
  }

  private toKeyValue(kv: IKeyValue): KeyValue {
    return {
      key: this.decode(kv.key),
      value: kv.value,
      createRevision: Number(kv.create_revision),
      modRevision: Number(kv.mod_revision),
    };
  }

  private assertOpen(): void {
    if (this.closed) throw new StorageError('Unavailable', 'storage is closed');
  }
}

const ZERO = Buffer.from([0]);
const EMPTY = Buffer.alloc(0);
