import type { Logger } from 'pino';
import { Informer } from '../authz/informer';
import type { ResourceRegistry } from '../registry/builtin';
import type { ResourceType } from '../registry/resource-type';
import type { ObjectStore } from '../store/object-store';
import type { WatchCache } from '../store/watch-cache';
import { BOOTSTRAP_TOKEN_NAMESPACE, BOOTSTRAP_TOKEN_SECRET_PREFIX } from './bootstrap-token';
import { CachedObjectGetter } from './cached-object-getter';
import { identityOnly, ObjectCache } from './object-cache';
import type { BoundObjectGetter } from './service-account-token';
import { BOUND_RESOURCES, boundType, StoreObjectGetter } from './store-object-getter';

export interface LookupCacheDeps {
  store: ObjectStore;
  cache: WatchCache;
  registry: ResourceRegistry;
  log: Logger;
}

/**
 * The watch-fed caches behind the authenticators that look objects up on every request, as
 * upstream feeds them from shared informers instead of reading storage per request:
 *
 * - service account lookup (--service-account-lookup): ServiceAccounts, and the Pods, Secrets and
 *   Nodes tokens can be bound to, of every namespace. Only their identity is kept (name,
 *   namespace, uid, deletionTimestamp: all the binding check reads), a few hundred bytes per
 *   object instead of whole pod specs and secret data. Upstream keeps full typed objects; we
 *   differ on purpose to keep memory small. The node authorizer's graph (authz/node-graph.ts)
 *   is not reused: it exists only with --authorization-mode=Node and keeps neither uids nor
 *   deletion marks.
 * - bootstrap tokens: the Secrets of svc-system named bootstrap-token-*, whole (the data is what
 *   is checked); the informer lists and watches svc-system only.
 *
 * Every miss is answered by a live store read (CachedObjectGetter), so the caches change how fast
 * a deletion takes effect (the watch lag) but never whether a just-created object is found. Each
 * replica follows its own watch cache, which follows the shared storage (SQLite or etcd), so
 * several replicas behave the same.
 */
export class AuthnLookupCaches {
  /** Service account lookup getter: cached, live on a miss. */
  readonly boundObjects: BoundObjectGetter;
  /** Bootstrap token Secret getter: cached, live on a miss. */
  readonly bootstrapSecrets: BoundObjectGetter;
  private readonly informers: Informer[] = [];

  constructor(d: LookupCacheDeps, want: { serviceAccounts: boolean; bootstrapTokens: boolean }) {
    const live = new StoreObjectGetter(d.store, d.registry);
    const types = (kinds: Array<keyof typeof BOUND_RESOURCES>): ResourceType[] =>
      kinds.map((k) => {
        const t = boundType(d.registry, k);
        if (!t) throw new Error(`${BOUND_RESOURCES[k]}/v1 is not registered`);
        return t;
      });
    const log = d.log.child({ component: 'authn-informer' });

    const identities = new ObjectCache(identityOnly);
    this.boundObjects = new CachedObjectGetter(identities, d.registry, live);
    if (want.serviceAccounts) this.informers.push(new Informer(d.store, d.cache, types(['ServiceAccount', 'Pod', 'Secret', 'Node']), identities, log));

    const tokens = new ObjectCache((_t, o) => (o.metadata.name?.startsWith(BOOTSTRAP_TOKEN_SECRET_PREFIX) ? o : undefined));
    this.bootstrapSecrets = new CachedObjectGetter(tokens, d.registry, live);
    if (want.bootstrapTokens) this.informers.push(new Informer(d.store, d.cache, types(['Secret']), tokens, log, undefined, BOOTSTRAP_TOKEN_NAMESPACE));
  }

  /** True once every cache has been listed (until then misses are read live: correct, only slower). */
  hasSynced(): boolean {
    return this.informers.every((i) => i.hasSynced());
  }

  /** Follows the watches until the signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    await Promise.all(this.informers.map((i) => i.run(signal)));
  }
}
