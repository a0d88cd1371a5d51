/**
 * The consumer-side contract of a list-watch source (client-go's cache.ListerWatcher), which the
 * informer follows: one for the API server's in-process store (apiserver/store/list-watch.ts),
 * one for the agent's REST client (agent/client/list-watch.ts). Objects are only required to carry
 * the metadata the informer reads, so this module depends on neither daemon.
 */

/** The metadata the informer and its indexer read. */
export interface ObjectMeta {
  name?: string;
  namespace?: string;
  resourceVersion?: string;
  uid?: string;
}

/** Any object with metadata (KObject and the agent's Pod satisfy it). */
export interface MetaObject {
  metadata: ObjectMeta;
}

/** What a list returns: every object, and the resourceVersion the list is consistent at. */
export interface ListResult<T> {
  items: T[];
  resourceVersion: string;
}

/**
 * One watch event. BOOKMARK carries only a newer resourceVersion (its object has metadata alone).
 * prevObject, when the source knows it, is the version before a MODIFIED or DELETED; the informer
 * does not need it (it keeps its own copy).
 */
export interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';
  object: T;
  prevObject?: T;
}

/**
 * Where an informer lists and watches one collection.
 *
 * - list(signal): the whole collection and the resourceVersion it was read at. Rejects on failure
 *   (the informer retries with back-off).
 * - watch(fromResourceVersion, signal, hint): the changes strictly after that version, in order.
 *   The iterable ends normally when the source ends the stream (a server-side timeout, hint.timeoutMs
 *   if the source forwards it) or when signal aborts; it throws ResourceExpiredError when that
 *   version is no longer available (HTTP 410 Gone, "too old resource version"), and anything else
 *   on other failures. Every end makes the informer list again.
 */
export interface ListerWatcher<T extends MetaObject> {
  list(signal: AbortSignal): Promise<ListResult<T>>;
  watch(fromResourceVersion: string, signal: AbortSignal, hint: WatchHint): AsyncIterable<WatchEvent<T>>;
}

export interface WatchHint {
  /** How long the informer lets this watch run before it ends it itself; a remote source may ask its server to end it then (timeoutSeconds). */
  timeoutMs: number;
}

/**
 * The defined signal for "the requested resourceVersion is gone" (410 Gone / Expired), thrown by a
 * ListerWatcher's watch. Adapters translate their own error (the apiserver's ApiError 410, the
 * agent's GoneError) into this one.
 */
export class ResourceExpiredError extends Error {
  readonly code = 410;
  constructor(message: string) {
    super(message);
    this.name = 'ResourceExpiredError';
  }
}

/** True for a ResourceExpiredError (also across module copies: checked by name and code). */
export function isResourceExpired(err: unknown): boolean {
  return err instanceof ResourceExpiredError || (err instanceof Error && err.name === 'ResourceExpiredError' && (err as { code?: unknown }).code === 410);
}

/** client-go's MetaNamespaceKeyFunc: "namespace/name", or "name" for a cluster-scoped object. */
export function objectKey(obj: MetaObject): string {
  const ns = obj.metadata.namespace;
  return ns ? `${ns}/${obj.metadata.name ?? ''}` : (obj.metadata.name ?? '');
}

/** client-go's SplitMetaNamespaceKey: the namespace ('' when cluster-scoped) and name of a key. */
export function splitKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { namespace: '', name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
