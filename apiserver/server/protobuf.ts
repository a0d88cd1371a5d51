import type { ObjectSchema } from '../api/schema';
import { isObject } from '../api/types';
import { EncodedCache, standIn, type CachedEncoding } from '../codec/encoded-cache';
import { hasProtobuf } from '../codec/plan';
import { listSchemaOf, statusSchema } from '../registry/meta-schemas';
import type { ResourceType } from '../registry/resource-type';
import { objectKey } from '../store/keys';
import type { StoredVersion } from '../store/stored-object';

/**
 * The schema a response body is written with as protobuf: a Status, the request's kind or its
 * list. Anything else (a Table, discovery, OpenAPI) has no protobuf form here and goes out as JSON,
 * which clients read by its Content-Type.
 */
export function protobufSchemaFor(type: ResourceType | undefined, body: unknown): ObjectSchema | undefined {
  if (!type || !hasProtobuf(type.schema)) return isObject(body) && body.kind === 'Status' ? statusSchema : undefined;
  return responseSchemaFor(type, body);
}

/**
 * The schema of a response body: a Status, the request's kind or its list; undefined for anything
 * else (a Table, a review answer of another kind), which CBOR writes without one.
 */
export function responseSchemaFor(type: ResourceType | undefined, body: unknown): ObjectSchema | undefined {
  if (!isObject(body)) return undefined;
  if (body.kind === 'Status') return statusSchema;
  if (!type) return undefined;
  if (body.kind === type.kind) return type.schema;
  if (body.kind === type.listKind) return listSchemaOf(type.schema);
  return undefined;
}

/**
 * The protobuf of objects gets and lists returned unchanged (see EncodedCache), one cache per
 * store: versions are named by storage key and revision, which only one store keeps apart. 32 MiB
 * holds about 20,000 small pods. A store whose revisions went back under a running server (etcd
 * restored from a snapshot) needs the server restarted, as upstream asks of its API servers.
 */
const caches = new WeakMap<object, EncodedCache>();
const CACHE_BYTES = 32 * 1024 * 1024;

function cacheOf(store: object): EncodedCache {
  let c = caches.get(store);
  if (!c) caches.set(store, (c = new EncodedCache(CACHE_BYTES)));
  return c;
}

/** How a get or list of type t from store names the stored versions it answers: storage key and resourceVersion. */
export function readsOf(store: object, t: ResourceType): CachedEncoding {
  return {
    cache: cacheOf(store),
    keyOf: (o) => {
      // A view's encoding must not be taken for its storage type's (they share storage keys).
      if (t.storedAs) return undefined;
      const m = o.metadata;
      if (!isObject(m) || typeof m.name !== 'string' || typeof m.resourceVersion !== 'string' || m.resourceVersion === '') return undefined;
      return versionKey(objectKey(t, typeof m.namespace === 'string' ? m.namespace : '', m.name), m.resourceVersion);
    },
  };
}

function versionKey(storageKey: string, revision: string | number): string {
  return `${storageKey}@${revision}`;
}

/**
 * For a get or list answered in protobuf (StoredVersion): a stand-in for each stored version
 * whose message store's cache holds, so that it is neither decoded nor encoded again.
 */
export function cachedStandIns(store: object): StoredVersion {
  const cache = cacheOf(store);
  return (key, revision) => {
    const message = cache.get(versionKey(key, revision));
    return message ? standIn(message) : undefined;
  };
}
