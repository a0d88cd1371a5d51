import type { ObjectSchema } from '../api/schema';
import { isObject } from '../api/types';
import { EncodedCache, standIn, type CachedEncoding } from '../codec/encoded-cache';
import { hasProtobuf } from '../codec/plan';
import { listSchemaOf, statusSchema } from '../registry/meta-schemas';
import type { ResourceType } from '../registry/resource-type';
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
 * store: versions are named by the revision of their write, which only one store keeps apart.
 * 32 MiB holds about 20,000 small pods. A store whose revisions went back under a running server
 * (etcd restored from a snapshot) needs the server restarted, as upstream asks of its API servers.
 *
 * The revision alone names a version: every write of both storages (storage/storage.ts create,
 * update, delete) is a transaction on one key, so one revision is one version of one key, and a
 * type never reads another type's keys through the cache (views do not use it, see readsOf). A
 * number keeps the entries cheap: a key string per version (storage key and revision) cost a
 * create about 1 µs to build, hash and keep.
 */
const caches = new WeakMap<object, EncodedCache>();
const CACHE_BYTES = 32 * 1024 * 1024;

function cacheOf(store: object): EncodedCache {
  let c = caches.get(store);
  if (!c) caches.set(store, (c = new EncodedCache(CACHE_BYTES)));
  return c;
}

/**
 * How a get or list of type t from store names the stored versions it answers: the revision of
 * their write (metadata.resourceVersion). fresh: the answer is a version just written (a
 * create's), see CachedEncoding.
 */
export function readsOf(store: object, t: ResourceType, fresh = false): CachedEncoding {
  return {
    cache: cacheOf(store),
    fresh,
    keyOf: (o) => {
      // A view's encoding must not be taken for its storage type's (they share storage keys).
      if (t.storedAs) return undefined;
      const m = o.metadata;
      return isObject(m) && typeof m.resourceVersion === 'string' ? revisionOf(m.resourceVersion) : undefined;
    },
  };
}

/** The revision a resourceVersion names as the stores write it (a decimal without leading zeros), else undefined. */
export function revisionOf(rv: string): number | undefined {
  const n = rv.length;
  // 15 digits stay exact in a double; a store's revisions are far below.
  if (n === 0 || n > 15 || rv.charCodeAt(0) === 0x30) return undefined;
  for (let i = 0; i < n; i++) {
    const c = rv.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return undefined;
  }
  return Number(rv);
}

/**
 * For a get or list answered in protobuf (StoredVersion): a stand-in for each stored version
 * whose message store's cache holds, so that it is neither decoded nor encoded again.
 */
export function cachedStandIns(store: object): StoredVersion {
  const cache = cacheOf(store);
  return (_key, revision) => {
    const message = cache.get(revision);
    return message ? standIn(message) : undefined;
  };
}
