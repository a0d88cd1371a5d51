import type { Logger } from 'pino';
import { realClock, type Clock } from '../../common/informer/clock';
import { runWorkers, WorkQueue } from '../../common/informer/work-queue';
import { isConflict } from '../api/errors';
import type { KObject } from '../api/types';
import type { ResourceRegistry } from '../registry/builtin';
import type { ResourceType } from '../registry/resource-type';
import { StoreInformers, waitForCacheSync, type InformerView } from '../store/list-watch';
import type { ObjectStore } from '../store/object-store';
import type { WatchCache } from '../store/watch-cache';

/** Upstream kube-apiserver's --event-ttl default. */
export const DEFAULT_EVENT_TTL_MS = 60 * 60 * 1000;

export interface EventTtlOptions {
  /** How long an event lives after its last write (--event-ttl). */
  ttlMs: number;
  log: Logger;
  clock?: Clock;
  /** The process's shared informers; default a factory of its own over store and cache. */
  informers?: StoreInformers;
}

/**
 * The time of an event's last write as the server recorded it: its creation, or the latest
 * managedFields time (every write that changes a field stamps its manager's entry). Only server
 * times count, never the event's own timestamps, which a client could set anywhere.
 */
export function lastWriteMs(o: KObject): number {
  let last = Date.parse(o.metadata.creationTimestamp ?? '') || 0;
  for (const m of o.metadata.managedFields ?? []) {
    const t = Date.parse(m.time ?? '');
    if (!Number.isNaN(t) && t > last) last = t;
  }
  return last;
}

/** The events the TTL follows, as only what it needs: name, namespace, resourceVersion and the last write. */
const EXPIRY_VIEW: InformerView = {
  name: 'event-ttl',
  transform: (o) => ({
    metadata: { name: o.metadata.name, namespace: o.metadata.namespace, resourceVersion: o.metadata.resourceVersion, uid: o.metadata.uid },
    lastWriteMs: lastWriteMs(o),
  }),
};

/**
 * Removes events once `ttlMs` has passed since their last write (kube-apiserver's --event-ttl,
 * default 1 h). Upstream attaches an etcd lease to each event write, so an event lives TTL after
 * its last write whatever the API server does; here a loop follows the stored events and removes
 * each when its time comes. The expiry is computed from what is stored (lastWriteMs), so nothing
 * is lost across a restart or a change of leader: the new loop's first list finds every event
 * whose time passed meanwhile and removes it at once. Removal is conditional on the version the
 * loop judged: an event written again meanwhile is judged again.
 */
export class EventTtlController {
  private readonly informers: StoreInformers;
  private readonly clock: Clock;

  constructor(
    private readonly store: ObjectStore,
    cache: WatchCache,
    private readonly registry: ResourceRegistry,
    private readonly o: EventTtlOptions,
  ) {
    this.informers = o.informers ?? new StoreInformers(store, cache, { log: o.log });
    this.clock = o.clock ?? realClock;
  }

  async run(signal: AbortSignal): Promise<void> {
    const t = this.eventType();
    const events = this.informers.informer(t, { view: EXPIRY_VIEW });
    const queue = new WorkQueue({ clock: this.clock });
    const schedule = (e: KObject) => queue.addAfter(keyOf(e), this.expiry(e) - this.clock.now());
    events.addEventHandler({ onAdd: schedule, onUpdate: (_old, e) => schedule(e) }, { signal });
    this.informers.start(signal);
    if (!(await waitForCacheSync(signal, events))) return;
    await runWorkers(
      queue,
      async (key) => {
        const e = events.get(key);
        if (!e) return;
        const left = this.expiry(e) - this.clock.now();
        if (left > 0) return queue.addAfter(key, left);
        await this.remove(t, e);
      },
      signal,
      { onError: (key, err) => this.o.log.warn({ err, event: key }, 'removing an expired event failed; retrying') },
    );
  }

  private expiry(e: KObject): number {
    return (typeof e.lastWriteMs === 'number' ? e.lastWriteMs : 0) + this.o.ttlMs;
  }

  private async remove(t: ResourceType, e: KObject): Promise<void> {
    try {
      await this.store.remove(t, e.metadata.namespace ?? '', e.metadata.name!, e.metadata.resourceVersion);
      this.o.log.debug({ event: keyOf(e) }, 'removed expired event');
    } catch (err) {
      // Written again since it was judged: the informer brings the new version, judged afresh.
      if (!isConflict(err)) throw err;
    }
  }

  private eventType(): ResourceType {
    const t = this.registry.lookup('', 'v1', 'events');
    if (!t) throw new Error('events type not registered');
    return t;
  }
}

function keyOf(e: KObject): string {
  return `${e.metadata.namespace}/${e.metadata.name}`;
}
