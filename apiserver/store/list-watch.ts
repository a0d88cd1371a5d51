import { setMaxListeners } from 'node:events';
import type { Clock } from '../../common/informer/clock';
import { Informer, type EventHandler, type InformerLog } from '../../common/informer/informer';
import { runWorkers, WorkQueue } from '../../common/informer/work-queue';
import { ResourceExpiredError, type ListerWatcher, type ListResult, type WatchEvent, type WatchHint } from '../../common/informer/list-watch';
import { ApiError } from '../api/errors';
import type { KObject } from '../api/types';
import type { ResourceType } from '../registry/resource-type';
import { collectionPrefix } from './keys';
import { servedEvent, servedEventAsync } from './stored-object';
import type { ObjectStore } from './object-store';
import type { WatchCache } from './watch-cache';

const everything = { labelSelector: [], fieldSelector: [] };

export interface StoreListWatchOptions {
  /** One namespace of a namespaced type ('' or unset: every namespace), as upstream's informer factory WithNamespace. */
  namespace?: string;
  /**
   * Keeps only the objects it accepts, as a field selector would: a listed or changed object that
   * does not match is reported as DELETED (the informer ignores deletes of objects it never held).
   */
  match?: (obj: KObject) => boolean;
}

/**
 * The in-process ListerWatcher of svc-apiserver's own loops: lists through the ObjectStore (a
 * consistent read at the store's current revision) and watches the watch cache from the list's
 * revision. The watch cache's 410 (history gone) becomes ResourceExpiredError.
 */
export function storeListWatch(store: ObjectStore, cache: WatchCache, t: ResourceType, o: StoreListWatchOptions = {}): ListerWatcher<KObject> {
  const namespace = o.namespace ?? '';
  const match = o.match;
  return {
    async list(): Promise<ListResult<KObject>> {
      await cache.whenReady();
      const list = await store.list(t, namespace, everything);
      return { items: match ? list.items.filter(match) : list.items, resourceVersion: list.metadata.resourceVersion ?? '0' };
    },
    watch(from: string, signal: AbortSignal, _hint: WatchHint): AsyncIterable<WatchEvent<KObject>> {
      return follow(cache, t, namespace, Number(from) || 0, signal, match);
    },
  };
}

async function* follow(cache: WatchCache, t: ResourceType, namespace: string, from: number, signal: AbortSignal, match?: (obj: KObject) => boolean): AsyncGenerator<WatchEvent<KObject>> {
  try {
    for await (const stored of cache.watch(collectionPrefix(t, namespace), from, signal)) {
      const ev = t.converter ? await servedEventAsync(t, stored) : servedEvent(t, stored);
      if (!match || (ev.type !== 'DELETED' && match(ev.object))) yield { type: ev.type, object: ev.object, prevObject: ev.prevObject };
      else yield { type: 'DELETED', object: ev.object };
    }
  } catch (err) {
    if (err instanceof ApiError && err.code === 410) throw new ResourceExpiredError(err.message);
    throw err;
  }
}

/** A variant of a type's informer: what it keeps (match) and in what form (transform). Informers of the same type share only with the same view name. */
export interface InformerView {
  name: string;
  match?: (obj: KObject) => boolean;
  transform?: (obj: KObject) => KObject;
}

export interface StoreInformersOptions {
  log: InformerLog;
  /** Watch lifetime floor of every informer (--controller-watch-timeout); default client-go's 5 min. */
  minWatchTimeoutMs?: number;
  clock?: Clock;
  random?: () => number;
}

/**
 * svc-apiserver's shared informer factory (client-go's SharedInformerFactory): one informer per
 * resource (whatever the version asked for), namespace and view, shared by every loop that asks for it, so N loops following pods hold
 * one cache and one watch. start(signal) runs the informers asked for so far and, from then on,
 * each new one at once; the first start's signal stops them all.
 */
export class StoreInformers {
  private readonly informers = new Map<string, Informer<KObject>>();
  private readonly runs: Promise<void>[] = [];
  private signal?: AbortSignal;

  constructor(
    private readonly store: ObjectStore,
    private readonly cache: WatchCache,
    private readonly o: StoreInformersOptions,
  ) {}

  /** The shared informer of the type (in one namespace, with a view), created on first use. */
  informer(t: ResourceType, o: { namespace?: string; view?: InformerView } = {}): Informer<KObject> {
    const namespace = t.namespaced ? (o.namespace ?? '') : '';
    // By group and resource, not version: every version of a resource lists and watches the same
    // keys. Two groups serving one stored resource (storedAs) hold objects in different forms, so
    // each has its own.
    const key = `${t.group}/${t.resource}/${namespace}|${o.view?.name ?? ''}`;
    let inf = this.informers.get(key);
    if (inf) return inf;
    const name = `${t.resource}${t.group ? '.' + t.group : ''}${namespace ? ' in ' + namespace : ''}${o.view ? ' (' + o.view.name + ')' : ''}`;
    inf = new Informer(storeListWatch(this.store, this.cache, t, { namespace, match: o.view?.match }), {
      name,
      log: this.o.log,
      clock: this.o.clock,
      random: this.o.random,
      minWatchTimeoutMs: this.o.minWatchTimeoutMs,
      transform: o.view?.transform,
    });
    this.informers.set(key, inf);
    if (this.signal && !this.signal.aborted) this.runs.push(inf.run(this.signal));
    return inf;
  }

  /** Runs every informer until the signal aborts. Later calls do nothing (the first signal governs). */
  start(signal: AbortSignal): void {
    if (this.signal) return;
    // One listener on the caller's signal; the informers (one per followed type, more with every
    // loop) listen on the factory's own, which therefore has no listener limit.
    const own = new AbortController();
    setMaxListeners(0, own.signal);
    if (signal.aborted) own.abort();
    else signal.addEventListener('abort', () => own.abort(), { once: true });
    this.signal = own.signal;
    for (const inf of this.informers.values()) this.runs.push(inf.run(own.signal));
  }

  /** Resolves once every started informer has stopped. */
  async stopped(): Promise<void> {
    await Promise.all(this.runs);
  }
}

/** Resolves true once every informer has synced, false when the signal aborts first (client-go's WaitForCacheSync). */
export async function waitForCacheSync(signal: AbortSignal, ...informers: Array<Pick<Informer<KObject>, 'whenSynced'>>): Promise<boolean> {
  if (signal.aborted) return false;
  // One abort listener however many informers (the garbage collector waits for one per type).
  const ac = new AbortController();
  setMaxListeners(0, ac.signal);
  const stop = () => ac.abort();
  signal.addEventListener('abort', stop, { once: true });
  try {
    const synced = await Promise.all(informers.map((i) => i.whenSynced(ac.signal)));
    return synced.every(Boolean);
  } finally {
    signal.removeEventListener('abort', stop);
    ac.abort(); // drops the waits of informers that never synced
  }
}

/**
 * The simplest control loop (client-go's one-informer controller): every object of type t added
 * or changed is queued by name and handed to handle as the informer's cache has it then (an object
 * gone meanwhile is skipped); a failed handle is retried with the queue's per-key back-off and
 * reported to onError. Runs until the signal aborts. For cluster-scoped types (keys are names).
 */
export async function followEach(
  informers: StoreInformers,
  t: ResourceType,
  signal: AbortSignal,
  handle: (obj: KObject) => Promise<void>,
  onError: (name: string, err: unknown) => void,
): Promise<void> {
  const informer = informers.informer(t);
  const queue = new WorkQueue();
  const enqueue = (obj: KObject) => queue.add(obj.metadata.name!);
  informer.addEventHandler({ onAdd: enqueue, onUpdate: (_old, obj) => enqueue(obj) }, { signal });
  informers.start(signal);
  if (!(await waitForCacheSync(signal, informer))) return;
  await runWorkers(
    queue,
    async (name) => {
      const obj = informer.get(name);
      if (obj) await handle(obj);
    },
    signal,
    { onError },
  );
}

/**
 * A consumer keeping derived state over several types (the RBAC policy, the node graph, the
 * scheduler's cache, the authenticators' object caches): it hears each type's objects as they
 * are listed, change, and go. Must not throw.
 */
export interface TypedHandler {
  /** An object was listed, added or changed (old: the version before, when known). */
  upsert(t: ResourceType, obj: KObject, old?: KObject): void;
  /** An object is gone (its last version). */
  remove(t: ResourceType, obj: KObject): void;
}

/**
 * The informer handler that feeds a TypedHandler objects of type t. Re-lists and resyncs hand back
 * objects at the resourceVersion already held; those are skipped, as derived state cannot change.
 */
export function typedHandler(t: ResourceType, h: TypedHandler): EventHandler<KObject> {
  return {
    onAdd: (obj) => h.upsert(t, obj),
    onUpdate: (old, obj) => {
      if (old.metadata.resourceVersion !== undefined && old.metadata.resourceVersion === obj.metadata.resourceVersion) return;
      h.upsert(t, obj, old);
    },
    onDelete: (obj) => h.remove(t, obj),
  };
}
