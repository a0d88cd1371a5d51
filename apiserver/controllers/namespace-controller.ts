import type { Logger } from 'pino';
import { runWorkers, WorkQueue } from '../../common/informer/work-queue';
import { getOrNull, isNotFound } from '../api/errors';
import type { KObject } from '../api/types';
import type { ResourceRegistry } from '../registry/builtin';
import type { ResourceType } from '../registry/resource-type';
import { StoreInformers, waitForCacheSync } from '../store/list-watch';
import type { ObjectStore } from '../store/object-store';
import type { WatchCache } from '../store/watch-cache';
import { controllerContext } from '../store/system-context';

const ctx = controllerContext('namespace-controller');
const everything = { labelSelector: [], fieldSelector: [] };
/** Upstream's namespaceDeletionGracePeriod. */
export const NAMESPACE_DELETION_DELAY_MS = 5000;

/**
 * Namespace deletion (3. States: a namespace-scoped object is deleted when its namespace is):
 * for a terminating namespace, delete everything inside it, wait for finalizers to finish, then
 * remove the namespace itself. Like upstream's namespace controller it re-checks until empty.
 */
export class NamespaceController {
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

  async run(signal: AbortSignal): Promise<void> {
    const informer = this.informers.informer(this.nsType());
    const queue = new WorkQueue();
    // As upstream's namespace controller (namespaceDeletionGracePeriod): a terminating namespace
    // is emptied only 5 s after its deletion is seen, which leaves a client deleting the
    // namespace and then its contents (kubectl delete -f of a file that lists the namespace
    // first) time to delete them itself, rather than finding them gone (NotFound).
    const enqueue = (ns: KObject) => {
      if (ns.metadata.deletionTimestamp) queue.addAfter(ns.metadata.name!, NAMESPACE_DELETION_DELAY_MS);
    };
    informer.addEventHandler({ onAdd: enqueue, onUpdate: (_old, ns) => enqueue(ns) }, { signal });
    this.informers.start(signal);
    if (!(await waitForCacheSync(signal, informer))) return;
    await runWorkers(
      queue,
      async (name) => {
        // The namespace as the informer has it: gone or not terminating means nothing to do.
        const ns = informer.get(name);
        if (ns?.metadata.deletionTimestamp) await this.cleanUp(queue, ns);
      },
      signal,
      { onError: (name, err) => this.log.warn({ err, namespace: name }, 'namespace cleanup failed; retrying') },
    );
  }

  private nsType(): ResourceType {
    const t = this.registry.lookup('', 'v1', 'namespaces');
    if (!t) throw new Error('namespaces type not registered');
    return t;
  }

  /** Whether the pod is bound to a node that does not exist (no agent will ever confirm its deletion). */
  private async nodeGone(pod: KObject): Promise<boolean> {
    const nodeName = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
    if (!nodeName) return false; // unscheduled pods go at once anyway (the pod deletion strategy)
    const nodes = this.registry.lookup('', 'v1', 'nodes');
    return nodes !== undefined && (await getOrNull(this.store.get(nodes, '', nodeName))) === null;
  }

  /** Deletes what the terminating namespace holds; once it is empty (and unfinalized), the namespace itself. */
  private async cleanUp(queue: WorkQueue, ns: KObject): Promise<void> {
    const nsType = this.nsType();
    const name = ns.metadata.name!;
    let remaining = 0;
    for (const t of this.registry.all()) {
      // A type served from another's storage holds that type's objects: emptied through it.
      if (!t.namespaced || t.storedAs) continue;
      const items = (await this.store.list(t, name, everything)).items;
      remaining += items.length;
      for (const obj of items) {
        if (obj.metadata.deletionTimestamp && (obj.metadata.finalizers ?? []).length > 0) continue; // waiting on its finalizers
        try {
          // As upstream's namespace deleter: each object with its own grace period, so a pod on a
          // node stays Terminating until its node has stopped it and confirms (a client deleting
          // the same pod meanwhile gets it back, not a 404). Only a pod whose node is gone goes at
          // once: nobody would ever confirm it (upstream's pod GC removes such orphans).
          const gracePeriodSeconds = t.resource === 'pods' && (await this.nodeGone(obj)) ? 0 : undefined;
          await this.store.delete(t, name, obj.metadata.name!, { gracePeriodSeconds, propagationPolicy: 'Background' }, ctx);
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      }
    }
    if (remaining > 0) {
      queue.addAfter(name, 1000);
      return;
    }
    // Empty: drop the namespace's own finalizer and the object, unless a metadata finalizer still holds it.
    if ((ns.metadata.finalizers ?? []).length > 0) {
      queue.addAfter(name, 1000);
      return;
    }
    await this.store.remove(nsType, '', name, ns.metadata.resourceVersion);
    this.log.info({ namespace: name }, 'namespace deleted');
  }
}
