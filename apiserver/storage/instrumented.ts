import type { KeyValue, ListOptions, ListResult, Storage, StorageEvent } from './storage';

/** Where store latencies go (ApiMetrics implements it). */
export interface StoreLatencyRecorder {
  /** Records one finished store call; failed when it threw (any StorageError, including Conflict). */
  recordStore(operation: string, type: string, seconds: number, failed: boolean): void;
}

/**
 * A Storage decorator that times every call and hands the latency to a recorder, the way
 * upstream's etcd3 store feeds etcd_request_duration_seconds. Behaviour is exactly the wrapped
 * store's: results and errors pass through untouched. Watches are not timed (they are streams);
 * close() neither. The clock is injected (milliseconds, e.g. performance.now).
 */
export class InstrumentedStorage implements Storage {
  constructor(
    private readonly inner: Storage,
    private readonly recorder: StoreLatencyRecorder,
    private readonly now: () => number,
  ) {}

  /** As the wrapped store's get; timed as operation "get". */
  get(key: string, opts?: { revision?: number }): Promise<KeyValue | null> {
    return this.timed('get', key, () => this.inner.get(key, opts));
  }

  /** As the wrapped store's list; timed as operation "list". */
  list(prefix: string, opts?: ListOptions): Promise<ListResult> {
    return this.timed('list', prefix, () => this.inner.list(prefix, opts));
  }

  /** As the wrapped store's create; timed as operation "create". */
  create(key: string, value: Buffer): Promise<KeyValue> {
    return this.timed('create', key, () => this.inner.create(key, value));
  }

  /** As the wrapped store's update; timed as operation "update". */
  update(key: string, value: Buffer, expectedRevision: number): Promise<KeyValue> {
    return this.timed('update', key, () => this.inner.update(key, value, expectedRevision));
  }

  /** As the wrapped store's delete; timed as operation "delete". */
  delete(key: string, expectedRevision?: number): Promise<KeyValue> {
    return this.timed('delete', key, () => this.inner.delete(key, expectedRevision));
  }

  /** The wrapped store's watch, untimed. */
  watch(prefix: string, fromRevision: number, signal: AbortSignal): AsyncIterable<StorageEvent> {
    return this.inner.watch(prefix, fromRevision, signal);
  }

  /** As the wrapped store's; timed as operation "currentRevision" (the readyz check and the watch cache call it). */
  currentRevision(): Promise<number> {
    return this.timed('currentRevision', '', () => this.inner.currentRevision());
  }

  /** As the wrapped store's; timed as operation "compactedRevision". */
  compactedRevision(): Promise<number> {
    return this.timed('compactedRevision', '', () => this.inner.compactedRevision());
  }

  /** As the wrapped store's; timed as operation "compact". */
  compact(revision: number): Promise<void> {
    return this.timed('compact', '', () => this.inner.compact(revision));
  }

  /** Closes the wrapped store. */
  close(): Promise<void> {
    return this.inner.close();
  }

  private async timed<T>(operation: string, key: string, fn: () => Promise<T>): Promise<T> {
    const start = this.now();
    let failed = true;
    try {
      const out = await fn();
      failed = false;
      return out;
    } finally {
      this.recorder.recordStore(operation, storeType(key), Math.max(0, this.now() - start) / 1000, failed);
    }
  }
}

/**
 * The metric's type label for a key or prefix: the group-resource, as upstream labels it since
 * 1.26 ("configmaps", "leases.coordination.svc.io"). Keys are /<group or core>/<resource>/... (see
 * store/keys.ts); anything shorter (the watch cache's "/") is "".
 */
export function storeType(key: string): string {
  const parts = key.split('/');
  if (parts.length < 3 || !parts[1] || !parts[2]) return '';
  return parts[1] === 'core' ? parts[2] : `${parts[2]}.${parts[1]}`;
}
