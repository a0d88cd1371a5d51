import { ApiError, errors } from '../api/errors';
import type { KObject } from '../api/types';
import { apiVersionOf, type ResourceType } from '../registry/resource-type';
import type { KeyValue } from '../storage/storage';
import { pruneUnknownFields } from '../validation/unknown-fields';
import { CorruptObjectError, decodeObject } from './watch-cache';
import type { CachedEvent } from './watch-history';

/**
 * The codec between objects and stored values, and the errors every store piece words alike.
 * Shared by ObjectStore, ListReader and Deleter; holds no state.
 */

/** The stored object; a value that cannot be decoded is a 500 naming its key (spec 2.5: the read error is reported). */
export function decodeStored(t: ResourceType, kv: KeyValue): KObject {
  return asServed(t, decodeRaw(kv));
}

/** The stored object as it is stored (no conversion); a value that cannot be decoded is a 500 naming its key. */
export function decodeRaw(kv: KeyValue): KObject {
  try {
    return decodeObject(kv.value, kv.modRevision);
  } catch (err) {
    if (!(err instanceof CorruptObjectError)) throw err;
    throw errors.internal(`failed to decode the stored object ${kv.key} at revision ${kv.modRevision}: ${err.message}`);
  }
}

/**
 * decodeStored for every type, converting through the type's converter (a conversion webhook)
 * when it has one; the types without one are answered synchronously.
 */
export function decodeServed(t: ResourceType, kv: KeyValue): KObject | Promise<KObject> {
  if (!t.converter) return decodeStored(t, kv);
  return servedMany(t, [decodeRaw(kv)]).then((objs) => objs[0]);
}

/**
 * Stored objects as type t serves them, those at another version converted in one call of the
 * type's converter (upstream's webhook converter batches a list the same way). The arguments are
 * not changed: shared cached objects may be passed.
 */
export async function servedMany(t: ResourceType, stored: KObject[]): Promise<KObject[]> {
  if (!t.converter) return stored.map((o) => asServed(t, structuredClone(o)));
  const converted = await t.converter.convert(stored, apiVersionOf(t));
  return converted.map((o, i) => asServed(t, o === stored[i] ? structuredClone(o) : o));
}

/** The bytes stored for an object of type t, converted to the storage version first when the type has a converter. */
export function encodeServed(t: ResourceType, input: KObject): Buffer | Promise<Buffer> {
  const c = t.converter;
  if (!c || input.apiVersion === c.storageApiVersion) return encodeStored(t, input);
  return c.convert([input], c.storageApiVersion).then(([stored]) => encodeStored(t, stored));
}

/** The type's form of a stored object: converted from its storage's form when it has one (ResourceType.storedAs), with the type's apiVersion and kind. */
export function asServed(t: ResourceType, stored: KObject): KObject {
  // A converter's conversion is asynchronous (servedMany); reaching here unconverted is a bug, not a silent relabelling.
  if (t.converter && stored.apiVersion !== apiVersionOf(t)) throw errors.internal(`${stored.apiVersion}, Kind=${t.kind} was read without its conversion to ${apiVersionOf(t)}`);
  const obj = t.storedAs ? t.storedAs.fromStorage(stored) : stored;
  obj.apiVersion = apiVersionOf(t);
  obj.kind = t.kind;
  if (t.pruneOnRead) pruneUnknownFields(obj, t.schema);
  t.readDefaults?.(obj);
  return obj;
}

/**
 * A watch event of the store (objects in their stored form) as type t serves it: the same event
 * for a type stored under its own keys, converted objects for a view (ResourceType.storedAs).
 */
export function servedEvent(t: ResourceType, ev: CachedEvent): CachedEvent {
  if (!t.storedAs && !t.readDefaults && !t.pruneOnRead) return ev;
  // A cached event's objects are shared by every watcher: defaults are filled in on a copy.
  const served = (o: KObject) => asServed(t, t.storedAs ? o : structuredClone(o));
  return { ...ev, object: served(ev.object), prevObject: ev.prevObject ? served(ev.prevObject) : undefined };
}

/**
 * servedEvent for every type: a type with a converter has both objects of the event converted in
 * one call, once per event and type however many watchers (as upstream's cacher per version), the
 * result shared by them (they do not change it).
 */
export function servedEventAsync(t: ResourceType, ev: CachedEvent): CachedEvent | Promise<CachedEvent> {
  if (!t.converter) return servedEvent(t, ev);
  let byType = convertedEvents.get(ev);
  if (!byType) {
    byType = new Map<string, Promise<CachedEvent>>();
    convertedEvents.set(ev, byType);
  }
  const key = apiVersionOf(t) + '/' + t.resource;
  let served = byType.get(key);
  if (!served) {
    const map = byType;
    served = servedMany(t, ev.prevObject ? [ev.object, ev.prevObject] : [ev.object]).then(
      ([object, prevObject]) => ({ ...ev, object, prevObject }),
      (err: unknown) => {
        // A failed conversion is not kept: a watch resumed over this event asks the webhook again.
        map.delete(key);
        throw err;
      },
    );
    byType.set(key, served);
  }
  return served;
}

/** Converted watch events by event (held while the event is) and served type. */
const convertedEvents = new WeakMap<CachedEvent, Map<string, Promise<CachedEvent>>>();

/**
 * An object the caller already has for a stored version (its key and revision), to use instead of
 * decoding the stored value: a protobuf answer whose message is cached needs no decoded object
 * (server/protobuf.ts cachedStandIn). Undefined: decode as usual.
 */
export type StoredVersion = (key: string, revision: number) => KObject | undefined;

/** The caller's object for kv when it has one (given its apiVersion and kind, as a decoded one), else the decoded object. */
export function reuseOrDecode(t: ResourceType, kv: KeyValue, stored: StoredVersion | undefined): KObject {
  // A stored version's cached encoding is of the storage's type: a view decodes and converts.
  const known = t.storedAs || t.readDefaults || t.pruneOnRead ? undefined : stored?.(kv.key, kv.modRevision);
  if (!known) return decodeStored(t, kv);
  known.apiVersion = apiVersionOf(t);
  known.kind = t.kind;
  return known;
}

/** The bytes stored for an object of type t (in its storage's form): resourceVersion is the write's revision, never stored. */
export function encodeStored(t: ResourceType, input: KObject): Buffer {
  const obj = t.storedAs ? t.storedAs.toStorage(input) : input;
  const meta = { ...obj.metadata };
  delete meta.resourceVersion;
  return Buffer.from(JSON.stringify({ ...obj, metadata: meta }));
}

/** 409 for a write based on an object that has changed since. */
export function modified(t: ResourceType, name: string): ApiError {
  return errors.conflict(t.resource, name, 'the object has been modified; please apply your changes to the latest version and try again', t.group);
}

/** 409 for a UID precondition that does not hold (body metadata.uid or DeleteOptions.preconditions.uid). */
export function uidPreconditionFailed(want: string, have: string | undefined): ApiError {
  return new ApiError('Conflict', `Precondition failed: UID in precondition: ${want}, UID in object meta: ${have}`);
}

/** How often a write based on a stale read is retried against the latest object before 409. */
export const MAX_CONFLICT_RETRIES = 8;
