import { closeSync, fchmodSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { prefixEnd, compareKeys } from './key-range';
import { configure, migrate, prepare, type HistoryRow, type LogRow, type Statements } from './sqlite-schema';
import { StorageError, type KeyValue, type ListOptions, type ListResult, type Storage, type StorageEvent } from './storage';
import { DEFAULT_BUFFER_BYTES, eventBytes, WatchHub } from './watch-hub';

export interface SqliteOpenOptions {
  /** FULL (default): every acknowledged write is fsynced. NORMAL: faster, may lose the last writes on power loss. */
  synchronous?: 'FULL' | 'NORMAL';
  /** Wall clock in ms, recorded with each write for oldestRevisionAfter(). */
  now?: () => number;
  /** Live events a watcher may have queued before it falls back to re-reading the log (default 1000). */
  watchBufferLimit?: number;
  /** Bytes of events a watcher may have queued, or read in one page of the log (default DEFAULT_BUFFER_BYTES, 16 MiB). */
  watchBufferBytes?: number;
}

/**
 * The embedded default backend: a kine-style revision log in one SQLite file (see sqlite-schema.ts).
 * better-sqlite3 is synchronous, so every read and every write (its optimistic-concurrency check and
 * its append) runs to completion inside one JavaScript turn; that keeps the revision counter held
 * here exact and lets watchers be fed in-process right after each commit, with no polling.
 *
 * Group commit: writes issued during one event-loop turn are applied in order at the end of it
 * (setImmediate) inside one SQLite transaction, so N concurrent writers share one fsync, the way
 * etcd batches its backend commits. Each write is still atomic and checked against the state its
 * predecessors left; none resolves before the shared commit is durable.
 */
export class SqliteStorage implements Storage {
  private rev: number;
  private compacted: number;
  private closed = false;
  private readonly hub: WatchHub;
  private readonly applyBatch: (batch: PendingWrite[]) => Outcome[];
  private readonly compactTx: (from: number, to: number) => void;
  private pending: PendingWrite[] = [];
  private flushScheduled = false;
  private probeStmt: Database.Statement<[number]> | undefined;

  private constructor(
    private readonly db: Database.Database,
    private readonly st: Statements,
    private readonly now: () => number,
    watchBufferLimit: number,
    watchBufferBytes: number,
  ) {
    this.rev = st.sequence.get()?.seq ?? 0;
    this.compacted = st.metaGet.get('compact_revision')?.value ?? 0;
    this.hub = new WatchHub(
      { readAfter: (p, after, limit, maxBytes) => this.readAfter(p, after, limit, maxBytes), compactedRevision: () => this.compacted },
      watchBufferLimit,
      watchBufferBytes,
    );
    this.applyBatch = db.transaction((batch: PendingWrite[]) => {
      let next = this.rev + 1;
      return batch.map((w): Outcome => {
        try {
          const ev = this.write(w, next);
          next += 1;
          return ev;
        } catch (e) {
          if (e instanceof StorageError) return e;
          // A write appends one row, so a failed statement (undone by SQLite's statement rollback)
          // leaves the batch intact; but some errors (disk full, I/O) roll back the whole
          // transaction, and then no write of the batch may be reported as done.
          if (!db.inTransaction) throw e;
          return unavailable(e);
        }
      });
    });
    this.compactTx = db.transaction((from: number, to: number) => {
      st.compactSuperseded.run({ from, to });
      st.compactTombstones.run({ from, to });
      st.metaSet.run(to, 'compact_revision');
    });
  }

  /**
   * Opens (creating if needed) the store at path: the parent directory is created with mode 0700 and
   * a new database file with 0600, since it holds every secret in the cluster. Throws
   * StorageError('Unavailable') when another process has the file open.
   */
  static open(path: string, opts: SqliteOpenOptions = {}): SqliteStorage {
    if (path !== ':memory:') {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      try {
        const fd = openSync(path, 'wx', 0o600);
        fchmodSync(fd, 0o600); // the mode given to open is masked by the umask
        closeSync(fd);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
    }
    let db: Database.Database | undefined;
    try {
      db = new Database(path, { timeout: 0 });
      configure(db, opts.synchronous ?? 'FULL');
      migrate(db);
      return new SqliteStorage(db, prepare(db), opts.now ?? Date.now, opts.watchBufferLimit ?? 1000, opts.watchBufferBytes ?? DEFAULT_BUFFER_BYTES);
    } catch (e) {
      db?.close();
      if ((e as { code?: unknown }).code === 'SQLITE_BUSY') {
        throw new StorageError('Unavailable', `store ${path} is in use by another process`);
      }
      throw e;
    }
  }

  /** Reads one key at the latest revision (or at opts.revision). Null when absent. Errors: Compacted, FutureRevision. */
  get(key: string, opts: { revision?: number } = {}): Promise<KeyValue | null> {
    return this.guard(() => {
      const row = opts.revision ? this.st.atRevision.get(key, this.checkReadable(opts.revision)) : this.st.latest.get(key);
      return row && !row.deleted ? toKeyValue(row) : null;
    });
  }

  /** Keys with the prefix in byte order, consistent at one revision. Errors: Compacted, FutureRevision. */
  list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    return this.guard(() => {
      const rev = opts.revision ? this.checkReadable(opts.revision) : this.rev;
      // SQLite binds a JS number as a double and refuses a LIMIT it cannot convert to an integer exactly.
      const limit = opts.limit && opts.limit > 0 ? Math.min(Math.floor(opts.limit), Number.MAX_SAFE_INTEGER) : -1;
      const hi = prefixEnd(prefix);
      const after = opts.startAfter !== undefined && compareKeys(opts.startAfter, prefix) >= 0;
      const stmt = after ? this.st.listAfter : this.st.listFrom;
      const rows = stmt.all({ lo: after ? (opts.startAfter as string) : prefix, hi, rev, limit });
      let remaining = 0;
      if (limit > 0 && rows.length === limit) {
        remaining = this.st.countAfter.get({ lo: rows[rows.length - 1].key, hi, rev })?.n ?? 0;
      }
      return { items: rows.map(toKeyValue), revision: rev, remaining };
    });
  }

  /** Creates a key; durable when it resolves. Errors: AlreadyExists. */
  async create(key: string, value: Buffer): Promise<KeyValue> {
    return this.enqueue({ key, value, expected: undefined, mode: 'create' });
  }

  /** Replaces a key's value if its modRevision equals expectedRevision; durable when it resolves. Errors: NotFound, Conflict. */
  async update(key: string, value: Buffer, expectedRevision: number): Promise<KeyValue> {
    return this.enqueue({ key, value, expected: expectedRevision, mode: 'update' });
  }

  /** Deletes a key (only at expectedRevision when given); returns the deleted value at the deletion's revision. Errors: NotFound, Conflict. */
  async delete(key: string, expectedRevision?: number): Promise<KeyValue> {
    return this.enqueue({ key, value: EMPTY, expected: expectedRevision, mode: 'delete' });
  }

  /** Events for the prefix after fromRevision, replayed from the log then live, until the signal aborts. Errors (from the iterator): Compacted, Unavailable on close. */
  watch(prefix: string, fromRevision: number, signal: AbortSignal): AsyncIterable<StorageEvent> {
    return this.hub.watch(prefix, fromRevision, signal);
  }

  /** The latest revision. */
  currentRevision(): Promise<number> {
    return this.guard(() => this.rev);
  }

  /** Oldest revision still readable. */
  compactedRevision(): Promise<number> {
    return this.guard(() => this.compacted);
  }

  /**
   * Drops history before the revision, keeping every key's value as of it, so lists and gets at
   * revision and later still work. At or below the compacted revision it does nothing (so a
   * periodic compactor needs no bookkeeping). Errors: FutureRevision.
   */
  compact(revision: number): Promise<void> {
    return this.guard(() => {
      this.flush(true); // writes issued before the compaction are ordered before it
      if (revision > this.rev) throw future(revision, this.rev);
      if (revision <= this.compacted) return;
      this.compactTx(this.compacted, revision);
      this.compacted = revision;
    });
  }

  /**
   * The first revision written at or after timeMs (current revision + 1 when none), never at or
   * below the compacted revision. compact(oldestRevisionAfter(now - retainMs) - 1) keeps readable
   * every revision that was current within the last retainMs (spec 8: 5 minutes of watch history).
   */
  oldestRevisionAfter(timeMs: number): number {
    if (this.closed) throw closedError();
    return this.st.firstWrittenSince.get({ after: this.compacted, t: timeMs })?.revision ?? this.rev + 1;
  }

  /**
   * A durable write of one meta row (write_probe, the time) outside the revision log: no revision,
   * no watch event. It needs a WAL frame like any write, so it fails (Unavailable) when the file
   * cannot grow (disk full) or be written. The store-write readiness check uses it to see the
   * store recover (storage/write-health.ts).
   */
  probeWrite(): Promise<void> {
    return this.guard(() => {
      this.probeStmt ??= this.db.prepare<[number]>(`INSERT INTO meta (name, value) VALUES ('write_probe', ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value`);
      this.probeStmt.run(this.now());
    });
  }

  /** Commits writes already issued, ends watchers (they throw Unavailable) and closes the file; later calls fail with Unavailable. */
  // eslint-disable-next-line @typescript-eslint/require-await -- async on purpose: a failing final flush must reach the caller as a rejection, as the Storage contract has it
  async close(): Promise<void> {
    if (this.closed) return;
    this.flush(true);
    this.closed = true;
    this.hub.close();
    this.db.close();
  }

  private enqueue(w: Omit<PendingWrite, 'resolve' | 'reject'>): Promise<KeyValue> {
    if (this.closed) return Promise.reject(closedError());
    return new Promise<KeyValue>((resolve, reject) => {
      this.pending.push({ ...w, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /**
   * Applies pending writes in one transaction, then publishes and settles them in order. A batch is
   * bounded so that a huge burst does not hold the event loop; the rest waits for the next turn
   * unless all is set.
   */
  private flush(all = false): void {
    this.flushScheduled = false;
    if (this.pending.length === 0) return;
    do {
      const batch = this.pending.splice(0, MAX_BATCH);
      let outcomes: Outcome[];
      try {
        outcomes = this.applyBatch(batch);
      } catch (e) {
        // The commit itself failed: nothing in the batch happened.
        for (const w of batch) w.reject(unavailable(e));
        continue;
      }
      for (let i = 0; i < batch.length; i++) {
        const o = outcomes[i];
        if (o instanceof StorageError) {
          batch[i].reject(o);
          continue;
        }
        this.rev = o.revision;
        this.hub.publish(o);
        batch[i].resolve({ key: o.key, value: o.value, createRevision: o.createRevision, modRevision: o.revision });
      }
    } while (all && this.pending.length > 0);
    if (this.pending.length > 0 && !this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** One write inside the batch transaction: check against the current row, then append one row. */
  private write(w: PendingWrite, revision: number): StorageEvent {
    const { key, value, expected, mode } = w;
    const cur = this.st.latest.get(key);
    const live = cur && !cur.deleted ? cur : undefined;
    const now = this.now();
    if (mode === 'create') {
      if (live) throw new StorageError('AlreadyExists', `key ${key} already exists`);
      this.st.insert.run(revision, key, 1, 0, revision, cur?.revision ?? 0, value, now);
      return { type: 'put', key, value, revision, createRevision: revision };
    }
    if (!live) throw new StorageError('NotFound', `key ${key} not found`);
    if (expected !== undefined && live.revision !== expected) {
      throw new StorageError('Conflict', `key ${key} is at revision ${live.revision}, not ${expected}`, toKeyValue(live));
    }
    if (mode === 'update') {
      this.st.insert.run(revision, key, 0, 0, live.create_revision, live.revision, value, now);
      return { type: 'put', key, value, prevValue: live.value, revision, createRevision: live.create_revision };
    }
    // The tombstone keeps the deleted value: a delete event carries it, like etcd's prevKV.
    this.st.insert.run(revision, key, 0, 1, live.create_revision, live.revision, live.value, now);
    return { type: 'delete', key, value: live.value, prevValue: live.value, revision, createRevision: live.create_revision };
  }

  /** A page of the log for the watch hub: at most limit events, and beyond the first at most maxBytes of them. */
  private readAfter(prefix: string, after: number, limit: number, maxBytes: number): { events: StorageEvent[]; complete: boolean } {
    const events: StorageEvent[] = [];
    let bytes = 0;
    for (const row of this.st.history.iterate({ after, lo: prefix, hi: prefixEnd(prefix), limit })) {
      const ev = toEvent(row);
      bytes += eventBytes(ev);
      if (events.length > 0 && bytes > maxBytes) return { events, complete: false };
      events.push(ev);
    }
    return { events, complete: events.length < limit };
  }

  /** Validates a requested read revision against the retained window and returns it. */
  private checkReadable(revision: number): number {
    if (revision > this.rev) throw future(revision, this.rev);
    if (revision < this.compacted) {
      throw new StorageError('Compacted', `required revision ${revision} has been compacted (oldest is ${this.compacted})`);
    }
    return revision;
  }

  /** Runs one synchronous operation: refuses after close and reports SQLite failures as Unavailable. */
  /** Runs a read on the open database behind the async Storage contract: its result resolves, a failure rejects (as a StorageError). */
  private guard<T>(fn: () => T): Promise<T> {
    if (this.closed) return Promise.reject(closedError());
    try {
      return Promise.resolve(fn());
    } catch (e) {
      return Promise.reject(e instanceof StorageError ? e : unavailable(e));
    }
  }
}

type WriteMode = 'create' | 'update' | 'delete';

interface PendingWrite {
  key: string;
  value: Buffer;
  expected: number | undefined;
  mode: WriteMode;
  resolve: (kv: KeyValue) => void;
  reject: (e: StorageError) => void;
}

type Outcome = StorageEvent | StorageError;

const MAX_BATCH = 1000;
const EMPTY = Buffer.alloc(0);

function unavailable(e: unknown): StorageError {
  return new StorageError('Unavailable', `sqlite: ${e instanceof Error ? e.message : String(e)}`);
}

function toKeyValue(row: LogRow): KeyValue {
  return { key: row.key, value: row.value, createRevision: row.create_revision, modRevision: row.revision };
}

function toEvent(row: HistoryRow): StorageEvent {
  const ev: StorageEvent = {
    type: row.deleted ? 'delete' : 'put',
    key: row.key,
    value: row.value,
    revision: row.revision,
    createRevision: row.create_revision,
  };
  if (row.deleted) ev.prevValue = row.value;
  else if (!row.created && row.prev_value) ev.prevValue = row.prev_value;
  return ev;
}

function future(revision: number, current: number): StorageError {
  return new StorageError('FutureRevision', `required revision ${revision} is a future revision (current is ${current})`);
}

function closedError(): StorageError {
  return new StorageError('Unavailable', 'storage is closed');
}
