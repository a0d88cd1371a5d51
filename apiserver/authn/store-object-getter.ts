import { ApiError } from '../api/errors';
import type { KObject } from '../api/types';
import type { ResourceRegistry } from '../registry/builtin';
import type { ObjectStore } from '../store/object-store';
import type { BoundObjectGetter } from './service-account-token';

const RESOURCES = { ServiceAccount: 'serviceaccounts', Pod: 'pods', Secret: 'secrets', Node: 'nodes' } as const;

/** Reads service accounts and the objects tokens are bound to straight from the store (the freshest view, so revocation is immediate). */
export class StoreObjectGetter implements BoundObjectGetter {
  constructor(
    private readonly store: ObjectStore,
    private readonly types: ResourceRegistry,
  ) {}

  /** Resolves the object or null when it does not exist; rejects on store failure. */
  async get(kind: keyof typeof RESOURCES, namespace: string, name: string): Promise<KObject | null> {
    const t = this.types.lookup('', 'v1', RESOURCES[kind]);
    if (!t) return null;
    try {
      return await this.store.get(t, t.namespaced ? namespace : '', name);
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return null;
      throw err;
    }
  }
}
