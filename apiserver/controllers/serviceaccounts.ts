import type { Logger } from 'pino';
import { ApiError } from '../api/errors';
import type { ResourceRegistry } from '../registry/builtin';
import type { ResourceType } from '../registry/resource-type';
import type { ObjectStore } from '../store/object-store';
import { typePrefix } from '../store/keys';
import type { WatchCache } from '../store/watch-cache';
import { controllerContext } from '../store/system-context';
import { WorkQueue } from './work-queue';

const ctx = controllerContext('service-account-controller');
const everything = { labelSelector: [], fieldSelector: [] };

/**
 * Upstream's service account controller: every active namespace has a ServiceAccount named
 * `default`, created when the namespace appears and again if it is deleted.
 */
export class ServiceAccountsController {
  private readonly queue = new WorkQueue();

  constructor(
    private readonly store: ObjectStore,
    private readonly cache: WatchCache,
    private readonly registry: ResourceRegistry,
    private readonly log: Logger,
  ) {}

  /** Ensures `default` accounts until the signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    await this.cache.whenReady();
    const from = this.cache.currentRevision();
    for (const ns of (await this.store.list(this.type('namespaces'), '', everything)).items) this.queue.add(ns.metadata.name!);
    void this.follow(from, signal);
    await this.queue.run(signal, (ns) => this.sync(ns), (ns, err) => this.log.warn({ err, namespace: ns }, 'creating the default service account failed; retrying'));
  }

  private async follow(from: number, signal: AbortSignal): Promise<void> {
    try {
      const nsPrefix = typePrefix(this.type('namespaces'));
      const saPrefix = typePrefix(this.type('serviceaccounts'));
      for await (const ev of this.cache.watch('/core/', from, signal)) {
        if (ev.key.startsWith(nsPrefix) && ev.type !== 'DELETED') this.queue.add(ev.object.metadata.name!);
        if (ev.key.startsWith(saPrefix) && ev.type === 'DELETED' && ev.object.metadata.name === 'default') this.queue.add(ev.object.metadata.namespace!);
      }
    } catch (err) {
      if (!signal.aborted) this.log.error({ err }, 'service account watch ended');
    }
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
      if (err instanceof ApiError && (err.code === 404 || err.code === 409)) return;
      // A namespace that started terminating between the read and the create refuses new content.
      if (err instanceof ApiError && err.code === 403) return;
      throw err;
    }
  }
}
