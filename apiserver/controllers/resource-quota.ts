import type { Logger } from 'pino';
import { isDeepStrictEqual } from 'node:util';
import { realClock, sleepOn, type Clock } from '../../common/informer/clock';
import type { Informer } from '../../common/informer/informer';
import { NAMESPACE_INDEX } from '../../common/informer/indexer';
import { runWorkers, WorkQueue } from '../../common/informer/work-queue';
import { isConflict } from '../api/errors';
import type { KObject } from '../api/types';
import type { ResourceRegistry } from '../registry/builtin';
import { get, rec } from '../registry/obj-access';
import { evaluatorFor, scopeSelectorsOf, type QuotaEvaluator } from '../registry/quota/evaluators';
import { add, equalLists, formatResourceList, mask, parseResourceList, quantity, type ResourceList } from '../registry/quota/resource-list';
import type { ResourceType } from '../registry/resource-type';
import { StoreInformers, waitForCacheSync } from '../store/list-watch';
import type { ObjectStore } from '../store/object-store';
import { controllerContext } from '../store/system-context';
import type { WatchCache } from '../store/watch-cache';

const ctx = controllerContext('resourcequota-controller');

/** Upstream --resource-quota-sync-period: every quota is recounted this often besides the changes that trigger it. */
export const QUOTA_RESYNC_MS = 5 * 60_000;

export interface ResourceQuotaControllerOptions {
  log: Logger;
  informers?: StoreInformers;
  /** Time of the usage rules (pods past their grace period) and the queue's delays; default real time. */
  clock?: Clock;
  /** Full recount period; default QUOTA_RESYNC_MS. */
  resyncMs?: number;
}

/** The kinds counted for a quota's hard names, with their evaluators and the names each counts. */
interface Tracked {
  t: ResourceType;
  ev: QuotaEvaluator;
  names: string[];
}

/**
 * Upstream's resource quota controller: keeps every ResourceQuota's status — hard as the spec
 * says, used recounted from the objects of its namespace (those in its scopes) for every hard
 * name some kind counts (a name nothing counts keeps its last observation). A quota is recounted
 * when it changes, when an object of a kind it counts changes in its namespace (replenishment:
 * deletions and pods that finish give usage back), and every resync period. Objects are read
 * from informers made on first use for each kind a quota counts.
 */
export class ResourceQuotaController {
  private readonly informers: StoreInformers;
  private readonly clock: Clock;
  private readonly followed = new Map<string, Informer<KObject>>();

  constructor(
    private readonly store: ObjectStore,
    cache: WatchCache,
    private readonly registry: ResourceRegistry,
    private readonly opts: ResourceQuotaControllerOptions,
  ) {
    this.informers = opts.informers ?? new StoreInformers(store, cache, { log: opts.log });
    this.clock = opts.clock ?? realClock;
  }

  async run(signal: AbortSignal): Promise<void> {
    const quotaType = this.registry.lookup('', 'v1', 'resourcequotas')!;
    const quotas = this.informers.informer(quotaType);
    const queue = new WorkQueue({ clock: this.clock });
    const enqueue = (q: KObject) => queue.add(`${q.metadata.namespace ?? ''}/${q.metadata.name ?? ''}`);
    // As upstream: status changes are not followed (admission's charges and this controller's own
    // writes change only status; recounting on them would race a charged object not yet stored).
    const specChanged = (a: KObject, b: KObject) => !isDeepStrictEqual(a.spec, b.spec);
    quotas.addEventHandler({ onAdd: enqueue, onUpdate: (old, q) => void (specChanged(old, q) && enqueue(q)) }, { signal });
    this.informers.start(signal);
    if (!(await waitForCacheSync(signal, quotas))) return;
    void this.resync(quotas, enqueue, signal);
    const replenish = (t: ResourceType) => (obj: KObject) => {
      for (const q of quotas.store.byIndex(NAMESPACE_INDEX, obj.metadata.namespace ?? '')) {
        if (evaluatorFor(t).matchingResources(Object.keys(rec(get(q, 'spec', 'hard')) ?? {})).length > 0) enqueue(q);
      }
    };
    await runWorkers(
      queue,
      async (key) => {
        const q = quotas.get(key);
        if (q) await this.sync(q, quotaType, signal, (t, inf) => inf.addEventHandler({ onAdd: replenish(t), onUpdate: (_o, n) => replenish(t)(n), onDelete: replenish(t) }, { signal }));
      },
      signal,
      {
        // Admission charging a quota while it is recounted is routine: a conflict is retried quietly.
        onError: (key, err) => (isConflict(err) ? this.opts.log.debug({ quota: key }, 'quota changed while recounted; retrying') : this.opts.log.warn({ err, quota: key }, 'recounting the quota failed; retrying')),
      },
    );
  }

  /** Upstream's resync: every quota recounted each period (what was charged for writes that never happened is given back here). */
  private async resync(quotas: Informer<KObject>, enqueue: (q: KObject) => void, signal: AbortSignal): Promise<void> {
    while (await sleepOn(this.clock, this.opts.resyncMs ?? QUOTA_RESYNC_MS, signal)) {
      for (const q of quotas.store.list()) enqueue(q);
    }
  }

  /** The kinds that count some of these names (upstream: the evaluators matching the quota's hard resources). */
  tracked(names: readonly string[]): Tracked[] {
    const out: Tracked[] = [];
    // Each stored resource once: its versions (autoscaling/v2 and v1 HorizontalPodAutoscalers) hold the same objects.
    const seen = new Set<string>();
    for (const t of this.registry.all()) {
      if (!t.namespaced || seen.has(`${t.group}/${t.resource}`)) continue;
      seen.add(`${t.group}/${t.resource}`);
      const ev = evaluatorFor(t);
      const counted = ev.matchingResources(names);
      if (counted.length > 0) out.push({ t, ev, names: counted });
    }
    return out;
  }

  /** The informer of a kind, made (and watched for replenishment) on first use. */
  private async follow(t: ResourceType, signal: AbortSignal, watch: (t: ResourceType, inf: Informer<KObject>) => void): Promise<Informer<KObject>> {
    const key = `${t.group}/${t.resource}`;
    let inf = this.followed.get(key);
    if (!inf) {
      inf = this.informers.informer(t);
      this.followed.set(key, inf);
      watch(t, inf);
    }
    await inf.whenSynced(signal);
    return inf;
  }

  /** Upstream syncResourceQuota: hard from the spec, used recounted; written only when either changed. */
  async sync(quota: KObject, quotaType: ResourceType, signal: AbortSignal, watch: (t: ResourceType, inf: Informer<KObject>) => void): Promise<void> {
    const hard = parseResourceList(get(quota, 'spec', 'hard'));
    const names = Object.keys(hard);
    const ns = quota.metadata.namespace ?? '';
    const scopes = scopeSelectorsOf(quota);
    const nowMs = this.clock.now();
    let counted: ResourceList = {};
    for (const { t, ev, names: tracked } of this.tracked(names)) {
      const inf = await this.follow(t, signal, watch);
      let sum: ResourceList = Object.fromEntries(tracked.map((n) => [n, quantity(0)]));
      for (const obj of inf.store.byIndex(NAMESPACE_INDEX, ns)) {
        if (scopes.every((s) => ev.matchesScope(s, obj))) sum = add(sum, mask(ev.usage(obj, nowMs), tracked));
      }
      counted = add(counted, sum);
    }
    // Names nothing counts keep what was observed before (upstream preserves the past usage).
    const used = mask({ ...parseResourceList(get(quota, 'status', 'used')), ...counted }, names);
    const statusHard = parseResourceList(get(quota, 'status', 'hard'));
    if (equalLists(statusHard, hard) && equalLists(parseResourceList(get(quota, 'status', 'used')), used)) return;
    const next: KObject = { ...structuredClone(quota), status: { hard: formatResourceList(hard), used: formatResourceList(used) } };
    // At the version read: admission charging the quota meanwhile makes this a conflict, recounted from the queue.
    await this.store.update(quotaType, ns, quota.metadata.name ?? '', () => next, { ...ctx, subresource: 'status' });
  }
}
