/**
 * The agent's view of the API server: typed CRUD, list and watch over resource paths. Implemented
 * over HTTP by HttpApiClient, and in memory by the test fake. Every method rejects with ClientError
 * (GoneError for 410) or, when the caller's signal aborts, with an AbortError.
 */
import type { KList, KObject, WatchEventType } from '../../apiserver/api/types';
import type { ResourceRef } from './resources';

export type PatchType = 'merge' | 'strategic' | 'json';

export const patchContentTypes: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  json: 'application/json-patch+json',
};

export interface RequestOptions {
  namespace?: string;
  /** Cancels the request; the call then rejects with AbortError. */
  signal?: AbortSignal;
  /** Per-request timeout override in ms. */
  timeoutMs?: number;
}

export interface GetOptions extends RequestOptions {
  /** '' or unset: most recent; '0': any (served from the cache, spec 4.6). */
  resourceVersion?: string;
}

export interface WriteOptions extends RequestOptions {
  subresource?: string;
  /** fieldManager query parameter. */
  fieldManager?: string;
}

export interface ListOptions extends RequestOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
}

export interface WatchOptions extends RequestOptions {
  labelSelector?: string;
  fieldSelector?: string;
  /** Start after this version; unset starts with synthetic ADDED events for existing objects. */
  resourceVersion?: string;
  allowWatchBookmarks?: boolean;
  /** Server-side lifetime of the watch; the stream ends normally after it. */
  timeoutSeconds?: number;
}

export interface WatchEvent<T extends KObject = KObject> {
  type: Exclude<WatchEventType, 'ERROR'>;
  object: T;
}

export interface ApiClient {
  /** Reads one object. Idempotent. */
  get<T extends KObject = KObject>(r: ResourceRef, name: string, opts?: GetOptions): Promise<T>;
  /** Creates an object (POST to the collection); resolves to the server's copy. Rejects AlreadyExists (409) when the name is taken. */
  create<T extends KObject = KObject>(r: ResourceRef, obj: T, opts?: WriteOptions): Promise<T>;
  /** Replaces an object (PUT); resourceVersion in obj is a precondition (409 Conflict when stale). */
  update<T extends KObject = KObject>(r: ResourceRef, obj: T, opts?: WriteOptions): Promise<T>;
  /** Patches an object or sub-resource with a patch document of the given type; resolves to the result. */
  patch<T extends KObject = KObject>(r: ResourceRef, name: string, type: PatchType, patch: unknown, opts?: WriteOptions): Promise<T>;
  /** Deletes an object; resolves once the server accepted the delete. */
  delete(r: ResourceRef, name: string, opts?: RequestOptions): Promise<void>;
  /** Lists a collection (one page when limit is set). */
  list<T extends KObject = KObject>(r: ResourceRef, opts?: ListOptions): Promise<KList<T>>;
  /**
   * Opens one watch stream. The iterable yields events until the server ends the stream (it ends
   * normally), the signal aborts (it ends normally), or the server reports an error (it throws
   * ClientError; GoneError when the start version has expired, so the caller re-lists).
   */
  watch<T extends KObject = KObject>(r: ResourceRef, opts?: WatchOptions): AsyncIterable<WatchEvent<T>>;
  /** Drops every pooled connection and dials afresh; in-flight requests on the old ones fail. Never rejects. */
  redial(): Promise<void>;
}

/** A client whose TLS client identity can be replaced in place (certificate rotation). */
export interface CredentialSwappable {
  /** Uses this certificate and key for all new connections; existing connections drain and close. */
  useClientCertificate(certPem: string, keyPem: string): void;
}
