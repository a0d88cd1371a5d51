import type { Logger } from 'pino';
import { ApiError } from '../api/errors';
import type { KObject } from '../api/types';
import type { ResourceRegistry } from '../registry/builtin';
import type { ResourceType } from '../registry/resource-type';
import type { ObjectStore } from '../store/object-store';
import { typePrefix } from '../store/keys';
import type { WatchCache } from '../store/watch-cache';
import { controllerContext } from '../store/system-context';
import { WorkQueue } from './work-queue';

const ctx = controllerContext('namespace-controller');
const everything = { labelSelector: [], fieldSelector: [] };

/**
 * Namespace deletion (3. States: a namespace-scoped object is deleted when its namespace is):
 * for a terminating namespace, delete everything inside it, wait for finalizers to finish, then
 * remove the namespace itself. Like upstream's namespace controller it re-checks until empty.
 */
export class NamespaceController {
  private readonly queue = new WorkQueue();

  constructor(
    private readonly store: ObjectStore,
    private readonly cache: WatchCache,
    private readonly registry: ResourceRegistry,
    private readonly log: Logger,
  ) {}

  async run(signal: AbortSignal): Promise<void> {
    const nsType = this.nsType();
    await this.cache.whenReady();
    const from = this.cache.currentRevision();
    const list = await this.store.list(nsType, '', everything);
    for (const ns of list.items) if (ns.metadata.deletionTimestamp) this.queue.add(ns.metadata.name!);
    void this.follow(nsType, from, signal);
    await this.queue.run(signal, (name) => this.sync(name), (name, err) => this.log.warn({ err, namespace: name }, 'namespace cleanup failed; retrying'));
  }

  private async follow(nsType: ResourceType, from: number, signal: AbortSignal): Promise<void> {
    try {
      for await (const ev of this.cache.watch(typePrefix(nsType), from, signal)) {
        if (ev.type !== 'DELETED' && ev.object.metadata.deletionTimestamp) this.queue.add(ev.object.metadata.name!);
      }
    } catch (err) {
      if (!signal.aborted) this.log.error({ err }, 'namespace watch ended');
    }
  }

  private nsType(): ResourceType {
    const t = this.registry.lookup('', 'v1', 'namespaces');
    if (!t) throw new Error('namespaces type not registered');
    return t;
  }

  private async sync(name: string): Promise<void> {
    const nsType = this.nsType();
    let ns: KObject;
    try {
      ns = await this.store.get(nsType, '', name);
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return;
      throw err;
    }
    if (!ns.metadata.deletionTimestamp) return;
    let remaining = 0;
    for (const t of this.registry.all()) {
      if (!t.namespaced) continue;
      const items = (await this.store.list(t, name, everything)).items;
      remaining += items.length;
      for (const obj of items) {
        if (obj.metadata.deletionTimestamp && (obj.metadata.finalizers ?? []).length > 0) continue; // waiting on its finalizers
        try {
          // Pods go at once: the namespace is going away, there is nobody to wait for.
          await this.store.delete(t, name, obj.metadata.name!, { gracePeriodSeconds: t.resource === 'pods' ? 0 : undefined, propagationPolicy: 'Background' }, ctx);
        } catch (err) {
          if (!(err instanceof ApiError && err.code === 404)) throw err;
        }
      }
    }
    if (remaining > 0) {
      this.queue.addAfter(name, 1000);
      return;
    }
    // Empty: drop the namespace's own finalizer and the object, unless a metadata finalizer still holds it.
    if ((ns.metadata.finalizers ?? []).length > 0) {
      this.queue.addAfter(name, 1000);
      return;
    }
    await this.store.remove(nsType, '', name, ns.metadata.resourceVersion);
    this.log.info({ namespace: name }, 'namespace deleted');
  }
}
