import { ApiError, errors } from '../api/errors';
import type { KObject } from '../api/types';
import { NODE_LEASE_NAMESPACE } from '../api/well-known';
import type { AdmissionAttributes, AdmissionPlugin } from './admission';
import { TtlCache } from '../../common/ttl-cache';

/** How the plugin reads namespaces. */
export interface NamespaceReads {
  /** From the shared informer's cache (it may lag the store); undefined when not there or not synced. */
  cached(name: string): KObject | undefined;
  /** From the store; null when absent. */
  live(name: string): Promise<KObject | null>;
  now(): number;
}

/** How long a deleted namespace is looked up live, whatever the cache says (upstream's forceLiveLookupTTL). */
const FORCE_LIVE_LOOKUP_MS = 30_000;

/**
 * NamespaceLifecycle (as upstream's plugin of that name): new objects are refused in a namespace
 * that does not exist (404) or is terminating (403); the system namespaces cannot be deleted.
 * Namespaces are read from the informer's cache, live when the cache has none (one created a
 * moment ago) and, for 30 s after a namespace's delete passed here, live when the cache still
 * shows it active: upstream's lister, live fallback and force-live-lookup cache.
 */
export class NamespaceLifecycle implements AdmissionPlugin {
  readonly name = 'NamespaceLifecycle';
  static readonly immortal = new Set(['default', 'svc-system', 'svc-public', NODE_LEASE_NAMESPACE]);
  private readonly deleted: TtlCache<true>;

  constructor(private readonly namespaces: NamespaceReads) {
    this.deleted = new TtlCache(() => namespaces.now());
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.type.resource === 'namespaces' && a.type.group === '') {
      if (a.operation === 'DELETE') {
        if (NamespaceLifecycle.immortal.has(a.name)) throw errors.forbidden(`namespaces "${a.name}" is forbidden: this namespace may not be deleted`);
        this.deleted.set(a.name, true, FORCE_LIVE_LOOKUP_MS);
      }
      return;
    }
    if (!a.type.namespaced || a.operation !== 'CREATE') return;
    let ns = this.namespaces.cached(a.namespace);
    const stale = ns !== undefined && !ns.metadata.deletionTimestamp && this.deleted.get(a.namespace) !== undefined;
    if (!ns || stale) ns = (await this.namespaces.live(a.namespace)) ?? undefined;
    if (!ns) throw errors.notFound('namespaces', a.namespace);
    if (ns.metadata.deletionTimestamp) {
      // The cause, as upstream's: kubectl drain deletes a pod whose eviction is refused for it.
      throw new ApiError(
        'Forbidden',
        `${a.type.resource} "${a.name}" is forbidden: unable to create new content in namespace ${a.namespace} because it is being terminated`,
        { name: a.name, kind: a.type.resource, causes: [{ reason: 'NamespaceTerminating', message: `namespace ${a.namespace} is being terminated`, field: 'metadata.namespace' }] },
      );
    }
  }
}
