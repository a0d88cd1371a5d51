import type { KObject } from '../api/types';
import type { ResourceRegistry } from '../registry/builtin';
import type { ObjectCache } from './object-cache';
import type { BoundObjectGetter } from './service-account-token';
import { boundType, type BoundKind } from './store-object-getter';

/**
 * Answers from the watch-fed cache and falls back to a live read on a miss, as upstream's
 * service account token getter (pkg/controller/serviceaccount/tokengetter.go: the informer
 * lister first, a GET through the client when the lister does not have the object). The
 * fallback covers an object created a moment ago that the watch has not delivered yet, and
 * the time before the first list. Live answers are not put into the cache: only the watch
 * writes it, so a deletion it has delivered can never be undone by a slower read.
 *
 * Differences from reading the store every time (what svc did before): a deleted object is
 * still found until the watch delivers its deletion (milliseconds; upstream has the same
 * informer lag), so revocation by deletion is eventual, not on the very next request; and an
 * object deleted and re-created under the same name keeps its old uid here for that same lag.
 * A token for an absent object reads the store on every use (as upstream: the lister misses).
 */
export class CachedObjectGetter implements BoundObjectGetter {
  constructor(
    private readonly cache: ObjectCache,
    private readonly types: ResourceRegistry,
    private readonly live: BoundObjectGetter,
  ) {}

  /** Resolves the cached object (shared: do not modify), else the live read's answer. */
  async get(kind: BoundKind, namespace: string, name: string): Promise<KObject | null> {
    const t = boundType(this.types, kind);
    const hit = t ? this.cache.get(t, namespace, name) : undefined;
    return hit ?? this.live.get(kind, namespace, name);
  }
}
