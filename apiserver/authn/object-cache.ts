import type { KObject } from '../api/types';
import type { ResourceType } from '../registry/resource-type';
import { typePrefix } from '../store/keys';
import type { TypedHandler } from '../store/list-watch';

/** What the cache keeps of a listed or changed object; undefined keeps nothing (the object is not wanted). */
export type Projection = (t: ResourceType, obj: KObject) => KObject | undefined;

/**
 * A watch-fed in-memory copy of some types' objects (feed it from informers with typedHandler), as upstream's
 * informer indexers behind listers. Each object is kept as the projection returns it, so a
 * cache that only needs identities keeps a few fields instead of whole pods and secrets.
 * Returned objects are shared with the cache: callers must not modify them.
 */
export class ObjectCache implements TypedHandler {
  /** type prefix → "namespace/name" → kept object. */
  private readonly byType = new Map<string, Map<string, KObject>>();

  constructor(private readonly project: Projection = (_t, o) => o) {}

  upsert(t: ResourceType, obj: KObject): void {
    const m = this.objects(t);
    const k = keyOf(t, obj.metadata.namespace ?? '', obj.metadata.name ?? '');
    const kept = this.project(t, obj);
    if (kept) m.set(k, kept);
    else m.delete(k);
  }

  remove(t: ResourceType, obj: KObject): void {
    this.byType.get(typePrefix(t))?.delete(keyOf(t, obj.metadata.namespace ?? '', obj.metadata.name ?? ''));
  }

  /** The kept object, or undefined when the cache does not hold it (absent, not wanted, or not listed yet). */
  get(t: ResourceType, namespace: string, name: string): KObject | undefined {
    return this.byType.get(typePrefix(t))?.get(keyOf(t, namespace, name));
  }

  /** How many objects are kept, over every type. */
  size(): number {
    let n = 0;
    for (const m of this.byType.values()) n += m.size;
    return n;
  }

  private objects(t: ResourceType): Map<string, KObject> {
    const p = typePrefix(t);
    let m = this.byType.get(p);
    if (!m) this.byType.set(p, (m = new Map<string, KObject>()));
    return m;
  }
}

function keyOf(t: ResourceType, namespace: string, name: string): string {
  return `${t.namespaced ? namespace : ''}/${name}`;
}

/**
 * The identity of an object: kind, name, namespace, uid and deletionTimestamp, which is all a
 * token binding check reads (upstream's metadata-only informers keep a similar subset).
 */
export function identityOnly(_t: ResourceType | undefined, o: KObject): KObject {
  const m = o.metadata;
  return {
    ...(o.apiVersion ? { apiVersion: o.apiVersion } : {}),
    ...(o.kind ? { kind: o.kind } : {}),
    metadata: {
      ...(m.name !== undefined ? { name: m.name } : {}),
      ...(m.namespace !== undefined ? { namespace: m.namespace } : {}),
      ...(m.uid !== undefined ? { uid: m.uid } : {}),
      ...(m.resourceVersion !== undefined ? { resourceVersion: m.resourceVersion } : {}),
      ...(m.deletionTimestamp !== undefined ? { deletionTimestamp: m.deletionTimestamp } : {}),
    },
  };
}
