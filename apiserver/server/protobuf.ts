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
 *
 * A message holds group names (metadata.managedFields[].apiVersion is spelled in the group the
 * client asked under, see server/group-alias.ts), so one version has one entry per name it was
 * read under: the revision for the canonical name, its negation for the k8s.io name (a type is
 * served under at most those two). The revision alone let a read under one name copy bytes
 * encoded for the other.
 */
const caches = new WeakMap<object, EncodedCache>();
const CACHE_BYTES = 32 * 1024 * 1024;

function cacheOf(store: object): EncodedCache {
  let c = caches.get(store);
  if (!c) caches.set(store, (c = new EncodedCache(CACHE_BYTES)));
  return c;
}

/** The cache key of a stored version (its revision) as read under servedGroup (RequestInfo.servedGroup: set for a k8s.io name). */
function keyFor(revision: number, servedGroup: string | undefined): number {
  return servedGroup ? -revision : revision;
}

/**
 * How a get or list of type t from store names the stored versions it answers: the revision of
 * their write (metadata.resourceVersion), and the group name the client used (servedGroup, see
 * keyFor). fresh: the answer is a version just written (a create's), see CachedEncoding.
 */
export function readsOf(store: object, t: ResourceType, fresh = false, servedGroup?: string): CachedEncoding {
  return {
    cache: cacheOf(store),
    fresh,
    keyOf: (o) => {
      // A view's encoding must not be taken for its storage type's (they share storage keys).
      if (t.storedAs) return undefined;
      const m = o.metadata;
      const revision = isObject(m) && typeof m.resourceVersion === 'string' ? revisionOf(m.resourceVersion) : undefined;
      return revision === undefined ? undefined : keyFor(revision, servedGroup);
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
 * whose message store's cache holds for the group name asked under (servedGroup, see keyFor), so
 * that it is neither decoded nor encoded again.
 */
export function cachedStandIns(store: object, servedGroup?: string): StoredVersion {
  const cache = cacheOf(store);
  return (_key, revision) => {
    const message = cache.get(keyFor(revision, servedGroup));
    return message ? standIn(message) : undefined;
  };
}
