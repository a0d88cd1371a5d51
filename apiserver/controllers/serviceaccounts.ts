import type { Logger } from 'pino';
import { runWorkers, WorkQueue } from '../../common/informer/work-queue';
import { ApiError, isNotFound, isConflict, isAlreadyExists } from '../api/errors';
import type { KObject } from '../api/types';
import type { ResourceRegistry } from '../registry/builtin';
import type { ResourceType } from '../registry/resource-type';
import { StoreInformers, waitForCacheSync } from '../store/list-watch';
import type { ObjectStore } from '../store/object-store';
import type { WatchCache } from '../store/watch-cache';
import { controllerContext } from '../store/system-context';

const ctx = controllerContext('service-account-controller');

/**
 * Upstream's service account controller: every active namespace has a ServiceAccount named
 * `default`, created when the namespace appears and again if it is deleted.
 */
export class ServiceAccountsController {
  private readonly informers: StoreInformers;

  constructor(
    private readonly store: ObjectStore,
    cache: WatchCache,
    private readonly registry: ResourceRegistry,
    private readonly log: Logger,
    /** The process's shared informers; default a factory of its own over store and cache. */
    informers?: StoreInformers,
  ) {
    this.informers = informers ?? new StoreInformers(store, cache, { log });
  }

  /** Ensures `default` accounts until the signal aborts: for every namespace added or changed, and when a `default` account is deleted. */
  async run(signal: AbortSignal): Promise<void> {
    const namespaces = this.informers.informer(this.type('namespaces'));
    const accounts = this.informers.informer(this.type('serviceaccounts'));
    const queue = new WorkQueue();
    const enqueue = (ns: KObject) => queue.add(ns.metadata.name!);
    namespaces.addEventHandler({ onAdd: enqueue, onUpdate: (_old, ns) => enqueue(ns) }, { signal });
    accounts.addEventHandler({ onDelete: (sa) => sa.metadata.name === 'default' && queue.add(sa.metadata.namespace!) }, { signal });
    this.informers.start(signal);
    if (!(await waitForCacheSync(signal, namespaces, accounts))) return;
    await runWorkers(
      queue,
      async (name) => {
        // As upstream: nothing for a namespace gone or terminating, nor where the cache has `default` already.
        const ns = namespaces.get(name);
        if (!ns || ns.metadata.deletionTimestamp || accounts.get(`${name}/default`)) return;
        await this.sync(name);
      },
      signal,
      { onError: (ns, err) => this.log.warn({ err, namespace: ns }, 'creating the default service account failed; retrying') },
    );
  }

  private type(resource: string): ResourceType {
    const t = this.registry.lookup('', 'v1', resource);
    if (!t) throw new Error(`${resource} type not registered`);
    return t;
  }

  /** Creates svc account `default` in the namespace unless it exists or the namespace is going away. */
  async sync(namespace: string): Promise<void> {
    try {
      const ns = await this.store.get(this.type('namespaces'), '', namespace);
      if (ns.metadata.deletionTimestamp) return;
      await this.store.create(this.type('serviceaccounts'), namespace, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace } }, ctx);
    } catch (err) {
      if (isNotFound(err) || isConflict(err) || isAlreadyExists(err)) return;
      // A namespace that started terminating between the read and the create refuses new content.
      if (err instanceof ApiError && err.code === 403) return;
      throw err;
    }
  }
}
