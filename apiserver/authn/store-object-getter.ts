import { getOrNull } from '../api/errors';
import type { KObject } from '../api/types';
import type { ResourceRegistry } from '../registry/builtin';
import type { ResourceType } from '../registry/resource-type';
import type { ObjectStore } from '../store/object-store';
import type { BoundObjectGetter } from './service-account-token';

/** The core/v1 resource of each kind a token can name. */
export const BOUND_RESOURCES = { ServiceAccount: 'serviceaccounts', Pod: 'pods', Secret: 'secrets', Node: 'nodes' } as const;
export type BoundKind = keyof typeof BOUND_RESOURCES;

/** The registered type of a bound kind, or undefined when it is not registered. */
export function boundType(types: ResourceRegistry, kind: BoundKind): ResourceType | undefined {
  return types.lookup('', 'v1', BOUND_RESOURCES[kind]);
}

/**
 * Reads service accounts and the objects tokens are bound to straight from the store (the
 * freshest view). The TokenRequest handler uses it as is; authentication uses it behind the
 * watch-fed cache (CachedObjectGetter) for what the cache does not hold.
 */
export class StoreObjectGetter implements BoundObjectGetter {
  constructor(
    private readonly store: ObjectStore,
    private readonly types: ResourceRegistry,
  ) {}

  /** Resolves the object or null when it does not exist; rejects on store failure. */
  async get(kind: BoundKind, namespace: string, name: string): Promise<KObject | null> {
    const t = boundType(this.types, kind);
    if (!t) return null;
    return getOrNull(this.store.get(t, t.namespaced ? namespace : '', name));
  }
}
