import type { Logger } from 'pino';
import type { ResourceRegistry } from '../registry/builtin';
import type { ResourceType } from '../registry/resource-type';
import { StoreInformers, typedHandler, type InformerView } from '../store/list-watch';
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
  /** The process's shared informers; default a factory of its own over store and cache, started by run(). */
  informers?: StoreInformers;
}

/** What the service account lookup keeps: identities (the informer itself keeps only those, not whole pods and secrets). */
const IDENTITIES: InformerView = { name: 'identity', transform: (o) => identityOnly(undefined, o) };
/** What the bootstrap token lookup keeps: the token Secrets, whole. */
const BOOTSTRAP_TOKENS: InformerView = { name: 'bootstrap-tokens', match: (o) => !!o.metadata.name?.startsWith(BOOTSTRAP_TOKEN_SECRET_PREFIX) };

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
  private readonly informers: StoreInformers;
  private readonly owned: boolean;
  /** Each followed type with its informer options and the cache it feeds. */
  private readonly follows: Array<{ t: ResourceType; namespace?: string; view: InformerView; cache: ObjectCache }> = [];

  constructor(d: LookupCacheDeps, want: { serviceAccounts: boolean; bootstrapTokens: boolean }) {
    const live = new StoreObjectGetter(d.store, d.registry);
    const types = (kinds: Array<keyof typeof BOUND_RESOURCES>): ResourceType[] =>
      kinds.map((k) => {
        const t = boundType(d.registry, k);
        if (!t) throw new Error(`${BOUND_RESOURCES[k]}/v1 is not registered`);
        return t;
      });
    this.owned = !d.informers;
    this.informers = d.informers ?? new StoreInformers(d.store, d.cache, { log: d.log.child({ component: 'authn-informer' }) });

    // The informers project and filter (views); the caches hold the very objects they keep.
    const identities = new ObjectCache();
    this.boundObjects = new CachedObjectGetter(identities, d.registry, live);
    if (want.serviceAccounts) for (const t of types(['ServiceAccount', 'Pod', 'Secret', 'Node'])) this.follows.push({ t, view: IDENTITIES, cache: identities });

    const tokens = new ObjectCache();
    this.bootstrapSecrets = new CachedObjectGetter(tokens, d.registry, live);
    if (want.bootstrapTokens) for (const t of types(['Secret'])) this.follows.push({ t, namespace: BOOTSTRAP_TOKEN_NAMESPACE, view: BOOTSTRAP_TOKENS, cache: tokens });
  }

  /** True once every cache has been listed (until then misses are read live: correct, only slower). */
  hasSynced(): boolean {
    return this.follows.every((f) => this.informer(f).hasSynced());
  }

  /** Follows the watches until the signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    for (const f of this.follows) this.informer(f).addEventHandler(typedHandler(f.t, f.cache), { signal });
    this.informers.start(signal);
    if (this.owned) await this.informers.stopped();
    else await new Promise<void>((r) => (signal.aborted ? r() : signal.addEventListener('abort', () => r(), { once: true })));
  }

  private informer(f: { t: ResourceType; namespace?: string; view: InformerView }) {
    return this.informers.informer(f.t, { namespace: f.namespace, view: f.view });
  }
}
