/**
 * The revision-based store every backend implements (SQLite by default, etcd for clusters).
 * Like etcd: one cluster-wide revision counter that every write increments; each key records the
 * revision of its last write (modRevision). Keys are strings such as "/pods/default/web".
 * Values are opaque bytes (serialized objects). One conformance suite in test/conformance runs
 * against every backend.
 */

export interface KeyValue {
  key: string;
  value: Buffer;
  /** Revision of the write that created the key (stable across updates). */
  createRevision: number;
  /** Revision of the last write to the key; the object's resourceVersion. */
  modRevision: number;
}

export interface ListOptions {
  /** Return at most this many keys (0 or absent: all). */
  limit?: number;
  /** Return only keys strictly greater than this one (continuation). */
  startAfter?: string;
  /** Read the state as of this revision (0 or absent: latest). Compacted → StorageError Compacted. */
  revision?: number;
}

export interface ListResult {
  items: KeyValue[];
  /** The revision the list was read at. */
  revision: number;
  /** Keys in the prefix after the last returned item, at that revision. */
  remaining: number;
}

export type StorageEventType = 'put' | 'delete';

export interface StorageEvent {
  type: StorageEventType;
  key: string;
  /** The new value for put; for delete, the value just before deletion. */
  value: Buffer;
  /** For put of an existing key and for delete: the value before this write. */
  prevValue?: Buffer;
  /** The revision of this write. For a delete it is the deletion's revision. */
  revision: number;
  createRevision: number;
}

export type StorageErrorCode = 'NotFound' | 'AlreadyExists' | 'Conflict' | 'Compacted' | 'FutureRevision' | 'Unavailable';

export class StorageError extends Error {
  constructor(
    readonly code: StorageErrorCode,
    message: string,
    /** For Conflict: the current KeyValue, so callers can retry without another read. */
    readonly current?: KeyValue,
  ) {
    super(message);
  }
}

export interface Storage {
  /** Reads one key at the latest revision (or at opts.revision). Null when absent. Never blocks on writers. */
  get(key: string, opts?: { revision?: number }): Promise<KeyValue | null>;
  /** Keys with the prefix in key order, consistent at one revision. Errors: Compacted, FutureRevision. */
  list(prefix: string, opts?: ListOptions): Promise<ListResult>;
  /** Creates a key; durable when it resolves. Errors: AlreadyExists. Returns the new revision. */
  create(key: string, value: Buffer): Promise<KeyValue>;
  /**
   * Replaces a key's value if its modRevision still equals expectedRevision (optimistic concurrency).
   * Durable when it resolves. Errors: NotFound, Conflict (with the current value).
   */
  update(key: string, value: Buffer, expectedRevision: number): Promise<KeyValue>;
  /**
   * Deletes a key, if expectedRevision is given only when it matches. Returns the deleted value
   * with the deletion's revision as modRevision. Errors: NotFound, Conflict.
   */
  delete(key: string, expectedRevision?: number): Promise<KeyValue>;
  /**
   * Events for keys with the prefix, strictly after fromRevision, in revision order, until the
   * signal aborts. fromRevision older than the compacted revision → the iterator throws Compacted.
   */
  watch(prefix: string, fromRevision: number, signal: AbortSignal): AsyncIterable<StorageEvent>;
  /** The latest revision (a consistent read of the store's counter). */
  currentRevision(): Promise<number>;
  /** Oldest revision still readable; list/watch below it fail with Compacted. */
  compactedRevision(): Promise<number>;
  /** Drops history before the revision (the latest value of every live key is kept). */
  compact(revision: number): Promise<void>;
  /** Releases connections and files. */
  close(): Promise<void>;
}
