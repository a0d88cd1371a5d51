import type { Logger } from 'pino';
import type { KObject } from '../api/types';
import type { ResourceType } from '../registry/resource-type';
import { collectionPrefix } from '../store/keys';
import type { ObjectStore } from '../store/object-store';
import type { WatchCache } from '../store/watch-cache';

/** Receives one type's objects: a full (re)list, then changes. Must not throw. */
export interface InformerHandler {
  /** Called before a (re)list replaces every object of the type. */
  reset(t: ResourceType): void;
  /** An object was listed, added or changed (old is the previous version when known). */
  upsert(t: ResourceType, obj: KObject, old?: KObject): void;
  /** An object is gone (obj is its last version). */
  remove(t: ResourceType, obj: KObject): void;
}

const everything = { labelSelector: [], fieldSelector: [] };

/**
 * List-then-watch over the in-process store and watch cache, as upstream's shared informers do
 * for the RBAC authorizer and the node graph: every type is listed once, then followed from the
 * list's revision; when the watch breaks (history expired, 410) the type is listed again.
 */
export class Informer {
  private synced = 0;
  private markSynced!: () => void;
  private readonly syncedP = new Promise<void>((r) => (this.markSynced = r));

  constructor(
    private readonly store: ObjectStore,
    private readonly cache: WatchCache,
    private readonly types: readonly ResourceType[],
    private readonly handler: InformerHandler,
    private readonly log: Logger,
    private readonly retryMs = 500,
    /**
     * Restricts namespaced types to this one namespace ('' = every namespace), as upstream's
     * informer factory WithNamespace: a cache that needs one namespace's objects (the bootstrap
     * token Secrets of svc-system) neither lists nor keeps the rest. Cluster-scoped types ignore it.
     */
    private readonly namespace = '',
  ) {}

  /** Follows every type until the signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    await this.cache.whenReady();
    await Promise.all(this.types.map((t) => this.follow(t, signal)));
  }

  /** True once every type has been listed. */
  hasSynced(): boolean {
    return this.synced >= this.types.length;
  }

  /** Resolves once every type has been listed. */
  whenSynced(): Promise<void> {
    return this.syncedP;
  }

  private async follow(t: ResourceType, signal: AbortSignal): Promise<void> {
    let first = true;
    while (!signal.aborted) {
      try {
        const list = await this.store.list(t, this.namespace, everything);
        this.handler.reset(t);
        for (const o of list.items) this.handler.upsert(t, o);
        if (first) {
          first = false;
          if (++this.synced === this.types.length) this.markSynced();
        }
        const from = Number(list.metadata.resourceVersion ?? 0);
        for await (const ev of this.cache.watch(collectionPrefix(t, this.namespace), from, signal)) {
          if (ev.type === 'DELETED') this.handler.remove(t, ev.object);
          else this.handler.upsert(t, ev.object, ev.prevObject);
        }
      } catch (err) {
        if (signal.aborted) return;
        this.log.warn({ err, resource: t.resource }, 'informer watch ended; listing again');
        await new Promise((r) => setTimeout(r, this.retryMs));
      }
    }
  }
}
