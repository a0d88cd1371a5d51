import { StorageError, type KeyValue, type ListOptions, type ListResult, type Storage, type StorageEvent } from './storage';

/** What the store-write check needs of a backend to see it recover without waiting for a client's write. */
export interface WriteProbe {
  /**
   * Writes a few bytes durably outside the object keys: no revision, no watch event. Rejects when
   * the store cannot write (disk full, I/O error). The SQLite backend has one; etcd has none.
   */
  probeWrite(): Promise<void>;
}

export interface StoreWriteHealthOptions {
  /** Milliseconds, for the probe interval (injected clock). */
  now: () => number;
  /** The backend's probe; without one only the next durable write clears a failure. */
  probe?: WriteProbe;
  /** Free bytes where the store writes (statfs of its directory); undefined when unknown. */
  freeBytes?: () => Promise<number | undefined>;
  /** Below this much free space a failed store is not probed: it is not ready again until the largest write fits. */
  minFreeBytes: number;
  /** At most one probe per this many milliseconds, however often /readyz is asked. */
  probeIntervalMs: number;
  /** Told when writes start failing (with why) and when they work again (undefined). */
  onChange?: (failure: string | undefined) => void;
}

/**
 * Whether the store accepts writes, for the readiness check store-write: a write that fails with
 * Unavailable (SQLite: disk full, I/O error; etcd: unreachable, no space) marks the store failed,
 * a durable write clears it. While failed, a /readyz check probes at most once per interval: once
 * the store's directory has minFreeBytes free again, a tiny write outside the object keys tells
 * whether it writes. So a healthy store is never written to by /readyz, a full one is not
 * reported ready because one small write squeezed into space SQLite already owned, and readiness
 * comes back with the disk without waiting for a client to write. Upstream's readyz has no such
 * check (its etcd check reads); etcd itself refuses writes with its NOSPACE alarm.
 */
export class StoreWriteHealth {
  private failure: string | undefined;
  private lastProbe = Number.NEGATIVE_INFINITY;
  private probing: Promise<void> | undefined;

  constructor(private readonly o: StoreWriteHealthOptions) {}

  /** A write failed: only Unavailable counts (a conflict or a missing key is an answer, not a failure). */
  writeFailed(err: unknown): void {
    if (!(err instanceof StorageError) || err.code !== 'Unavailable') return;
    this.set(err.message);
  }

  /** A write was durable: the store writes. */
  writeSucceeded(): void {
    this.set(undefined);
  }

  /** The readiness check: undefined while the store writes, else why not. Never rejects. */
  async check(): Promise<string | undefined> {
    if (this.failure === undefined) return undefined;
    const now = this.o.now();
    if (this.o.probe && now - this.lastProbe >= this.o.probeIntervalMs) {
      this.lastProbe = now;
      this.probing ??= this.recover(this.o.probe).finally(() => (this.probing = undefined));
    }
    await this.probing;
    return this.failure === undefined ? undefined : `store writes fail: ${this.failure}`;
  }

  private async recover(probe: WriteProbe): Promise<void> {
    const free = await this.o.freeBytes?.().catch(() => undefined);
    if (free !== undefined && free < this.o.minFreeBytes) {
      this.set(`${free} bytes free where the store writes, ${this.o.minFreeBytes} needed`);
      return;
    }
    try {
      await probe.probeWrite();
      this.set(undefined);
    } catch (err) {
      this.set(err instanceof Error ? err.message : String(err));
    }
  }

  private set(failure: string | undefined): void {
    const changed = (failure === undefined) !== (this.failure === undefined);
    this.failure = failure;
    if (changed) this.o.onChange?.(failure);
  }
}

/**
 * A Storage decorator that tells a StoreWriteHealth the outcome of every write (create, update,
 * delete); everything else, results and errors pass through untouched.
 */
export class WriteTrackingStorage implements Storage {
  constructor(
    private readonly inner: Storage,
    private readonly health: StoreWriteHealth,
  ) {}

  get(key: string, opts?: { revision?: number }): Promise<KeyValue | null> {
    return this.inner.get(key, opts);
  }

  list(prefix: string, opts?: ListOptions): Promise<ListResult> {
    return this.inner.list(prefix, opts);
  }

  create(key: string, value: Buffer): Promise<KeyValue> {
    return this.tracked(this.inner.create(key, value));
  }

  update(key: string, value: Buffer, expectedRevision: number): Promise<KeyValue> {
    return this.tracked(this.inner.update(key, value, expectedRevision));
  }

  delete(key: string, expectedRevision?: number): Promise<KeyValue> {
    return this.tracked(this.inner.delete(key, expectedRevision));
  }

  watch(prefix: string, fromRevision: number, signal: AbortSignal): AsyncIterable<StorageEvent> {
    return this.inner.watch(prefix, fromRevision, signal);
  }

  currentRevision(): Promise<number> {
    return this.inner.currentRevision();
  }

  compactedRevision(): Promise<number> {
    return this.inner.compactedRevision();
  }

  compact(revision: number): Promise<void> {
    return this.inner.compact(revision);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private async tracked(write: Promise<KeyValue>): Promise<KeyValue> {
    try {
      const kv = await write;
      this.health.writeSucceeded();
      return kv;
    } catch (err) {
      this.health.writeFailed(err);
      throw err;
    }
  }
}
