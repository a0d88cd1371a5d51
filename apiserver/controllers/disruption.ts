import type { Logger } from 'pino';
import { realClock, type Clock } from '../../common/informer/clock';
import type { Informer } from '../../common/informer/informer';
import { NAMESPACE_INDEX } from '../../common/informer/indexer';
import { runWorkers, WorkQueue } from '../../common/informer/work-queue';
import { NOOP_RECORDER, type EventObjectRef, type EventRecorder } from '../../common/events/recorder';
import { isConflict } from '../api/errors';
import type { KObject } from '../api/types';
import type { ResourceRegistry } from '../registry/builtin';
import { rec } from '../registry/obj-access';
import type { ResourceType } from '../registry/resource-type';
import { conditionsAreUpToDate, DISRUPTION_ALLOWED, disruptedPods, pdbCounts, pdbCoversPod, setMetaCondition, SYNC_FAILED, updateDisruptionAllowedCondition } from '../registry/types/pdb-status';
import { StoreInformers, waitForCacheSync } from '../store/list-watch';
import type { ObjectStore } from '../store/object-store';
import { controllerContext } from '../store/system-context';
import type { WatchCache } from '../store/watch-cache';
import { buildDisruptedPodMap, countHealthyPods, expectedPodCount, type ScaleFinder } from './disruption-status';
import { ownerScaleFinder, storeGetter } from './owner-scale';
import { StaleDisruptionConditions } from './stale-disruption';

const ctx = controllerContext('disruption-controller');

export interface DisruptionControllerOptions {
  log: Logger;
  /** The process's shared informers; default a factory of its own over store and cache. */
  informers?: StoreInformers;
  /** Time of status stamps, the disruptedPods timeout and the queues' delays; default real time. */
  clock?: Clock;
  /** Where NoPods, UnmanagedPods, NotDeleted and MultiplePodDisruptionBudgets events go; default none. */
  recorder?: EventRecorder;
  /** How a pod's controller's scale is found; default through the registry and the store by apiVersion and kind. */
  scaleFinder?: ScaleFinder;
}

/**
 * Upstream's disruption controller: keeps every PodDisruptionBudget's status — expectedPods,
 * desiredHealthy, currentHealthy, disruptionsAllowed, observedGeneration, the disruptedPods the
 * eviction sub-resource recorded (dropped once the pod terminates, or after 2 minutes without
 * it), and the DisruptionAllowed condition (SufficientPods / InsufficientPods; SyncFailed with
 * disruptionsAllowed 0 when the status cannot be computed, upstream's fail-safe). A budget is
 * computed again whenever it or a pod it covers changes, and when a recorded disruption times
 * out. Pods whose DisruptionTarget condition outlived an eviction that never happened get it
 * set back to False (stale-disruption.ts).
 *
 * Where we differ: upstream enqueues only the first budget covering a changed pod; here every
 * budget covering it, before and after the change, is computed again.
 */
export class DisruptionController {
  private readonly informers: StoreInformers;
  private readonly clock: Clock;
  private readonly recorder: EventRecorder;
  private readonly findScale: ScaleFinder;

  constructor(
    private readonly store: ObjectStore,
    cache: WatchCache,
    private readonly registry: ResourceRegistry,
    private readonly opts: DisruptionControllerOptions,
  ) {
    this.informers = opts.informers ?? new StoreInformers(store, cache, { log: opts.log });
    this.clock = opts.clock ?? realClock;
    this.recorder = opts.recorder ?? NOOP_RECORDER;
    this.findScale = opts.scaleFinder ?? ownerScaleFinder({ registry, get: storeGetter(store) });
  }

  private type(group: string, resource: string): ResourceType {
    const t = this.registry.lookup(group, 'v1', resource);
    if (!t) throw new Error(`${resource} type not registered`);
    return t;
  }

  /** Keeps the budgets' status until the signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const pdbType = this.type('policy', 'poddisruptionbudgets');
    const podType = this.type('', 'pods');
    const pdbs = this.informers.informer(pdbType);
    const pods = this.informers.informer(podType);
    const queue = new WorkQueue({ clock: this.clock });
    const stale = new StaleDisruptionConditions(this.store, podType, pods, { clock: this.clock, log: this.opts.log });
    const enqueue = (pdb: KObject) => queue.add(`${pdb.metadata.namespace ?? ''}/${pdb.metadata.name ?? ''}`);
    pdbs.addEventHandler({ onAdd: enqueue, onUpdate: (_old, cur) => enqueue(cur), onDelete: enqueue }, { signal });
    const byPod = (pod: KObject) => {
      for (const pdb of this.covering(pdbs, pod)) enqueue(pdb);
    };
    pods.addEventHandler(
      {
        onAdd: (pod) => {
          this.warnIfSeveral(pdbs, pod);
          byPod(pod);
          stale.observe(pod);
        },
        onUpdate: (old, cur) => {
          byPod(old);
          this.warnIfSeveral(pdbs, cur);
          byPod(cur);
          stale.observe(cur);
        },
        onDelete: byPod,
      },
      { signal },
    );
    this.informers.start(signal);
    if (!(await waitForCacheSync(signal, pdbs, pods))) return;
    const onError = (key: string, err: unknown) => this.opts.log.warn({ err, key }, 'syncing the PodDisruptionBudget failed; retrying');
    await Promise.all([runWorkers(queue, (key) => this.sync(key, pdbs, pods, pdbType, queue), signal, { onError }), stale.run(signal)]);
  }

  private covering(pdbs: Informer<KObject>, pod: KObject): KObject[] {
    return pdbs.store.byIndex(NAMESPACE_INDEX, pod.metadata.namespace ?? '').filter((pdb) => pdbCoversPod(pdb, pod));
  }

  /** Upstream's MultiplePodDisruptionBudgets event (it keeps the first; evictions of such a pod are refused with 500). */
  private warnIfSeveral(pdbs: Informer<KObject>, pod: KObject): void {
    const covering = this.covering(pdbs, pod);
    if (covering.length < 2) return;
    const names = covering.map((p) => p.metadata.name ?? '').sort();
    this.recorder.event(ref(pod, 'Pod'), 'Warning', 'MultiplePodDisruptionBudgets', `Pod "${pod.metadata.namespace ?? ''}"/"${pod.metadata.name ?? ''}" matches multiple PodDisruptionBudgets.  Chose "${names[0]}" arbitrarily.`);
  }

  /** Upstream sync: computes one budget's status from the caches; a conflict is retried, other failures write the fail-safe status. */
  async sync(key: string, pdbs: Informer<KObject>, pods: Informer<KObject>, pdbType: ResourceType, queue: WorkQueue): Promise<void> {
    const pdb = pdbs.get(key);
    if (!pdb) return;
    try {
      const recheckAtMs = await this.trySync(pdb, pods, pdbType);
      if (recheckAtMs !== undefined) queue.addAfter(key, recheckAtMs - this.clock.now());
    } catch (err) {
      if (isConflict(err)) throw err;
      this.opts.log.warn({ err, key }, 'computing the PodDisruptionBudget failed; no disruptions allowed');
      await this.write(pdbType, failSafe(pdb, err, new Date(this.clock.now())));
    }
  }

  private async trySync(pdb: KObject, pods: Informer<KObject>, pdbType: ResourceType): Promise<number | undefined> {
    const ns = pdb.metadata.namespace ?? '';
    const selected = pods.store.byIndex(NAMESPACE_INDEX, ns).filter((p) => pdbCoversPod(pdb, p));
    const pdbRef = ref(pdb, 'PodDisruptionBudget', 'policy/v1');
    if (selected.length === 0) this.recorder.event(pdbRef, 'Normal', 'NoPods', 'No matching pods found');
    let expected;
    try {
      expected = await expectedPodCount(pdb, selected, this.findScale);
    } catch (err) {
      this.recorder.event(pdbRef, 'Warning', 'CalculateExpectedPodCountFailed', `Failed to calculate the number of expected pods: ${(err as Error).message}`);
      throw err;
    }
    if (expected.unmanagedPods.length > 0) {
      this.recorder.event(
        pdbRef,
        'Warning',
        'UnmanagedPods',
        `Pods selected by this PodDisruptionBudget (selector: ${JSON.stringify(rec(pdb.spec)?.selector ?? null)}) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set ".spec.minAvailable" field of the PDB to an integer value.`,
      );
    }
    const nowMs = this.clock.now();
    const { disrupted, recheckAtMs, notDeleted } = buildDisruptedPodMap(selected, pdb, nowMs);
    for (const pod of notDeleted) this.recorder.event(ref(pod, 'Pod'), 'Warning', 'NotDeleted', `Pod was expected by PDB ${ns}/${pdb.metadata.name ?? ''} to be deleted but it wasn't`);
    const currentHealthy = countHealthyPods(selected, disrupted, nowMs);
    const next = nextStatus(pdb, { ...expected, currentHealthy, disrupted }, new Date(nowMs));
    if (next) await this.write(pdbType, next);
    return recheckAtMs;
  }

  /** Writes the budget's status at the version read (upstream UpdateStatus): a concurrent write is a conflict, retried from the queue. */
  private async write(pdbType: ResourceType, pdb: KObject): Promise<void> {
    await this.store.update(pdbType, pdb.metadata.namespace ?? '', pdb.metadata.name ?? '', () => pdb, { ...ctx, subresource: 'status' });
  }
}

function ref(obj: KObject, kind: string, apiVersion = 'v1'): EventObjectRef {
  return { apiVersion, kind, namespace: obj.metadata.namespace, name: obj.metadata.name ?? '', uid: obj.metadata.uid, resourceVersion: obj.metadata.resourceVersion };
}

interface Computed {
  expectedCount: number;
  desiredHealthy: number;
  currentHealthy: number;
  disrupted: Record<string, string>;
}

/**
 * Upstream updatePdbStatus: the budget with its new status, or undefined when the stored one
 * already says the same (no write). disruptionsAllowed is 0 while nothing is expected, so a
 * budget whose first pods appear is safe before it is computed.
 */
export function nextStatus(pdb: KObject, c: Computed, now: Date): KObject | undefined {
  let disruptionsAllowed = c.currentHealthy - c.desiredHealthy;
  if (c.expectedCount <= 0 || disruptionsAllowed <= 0) disruptionsAllowed = 0;
  const old = pdbCounts(pdb);
  const generation = pdb.metadata.generation ?? 0;
  const same =
    old.currentHealthy === c.currentHealthy &&
    old.desiredHealthy === c.desiredHealthy &&
    old.expectedPods === c.expectedCount &&
    old.disruptionsAllowed === disruptionsAllowed &&
    sameMap(disruptedPods(pdb), c.disrupted) &&
    old.observedGeneration === generation &&
    conditionsAreUpToDate(pdb);
  if (same) return undefined;
  const next = structuredClone(pdb);
  const conditions = rec(pdb.status)?.conditions;
  next.status = {
    observedGeneration: generation,
    ...(Object.keys(c.disrupted).length > 0 ? { disruptedPods: c.disrupted } : {}),
    disruptionsAllowed,
    currentHealthy: c.currentHealthy,
    desiredHealthy: c.desiredHealthy,
    expectedPods: c.expectedCount,
    ...(Array.isArray(conditions) ? { conditions: structuredClone(conditions) } : {}),
  };
  updateDisruptionAllowedCondition(next, now);
  return next;
}

function sameMap(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => b[k] !== undefined && Date.parse(a[k]) === Date.parse(b[k]));
}

/** Upstream failSafe: no disruptions allowed, DisruptionAllowed False with reason SyncFailed and the error. */
export function failSafe(pdb: KObject, err: unknown, now: Date): KObject {
  const next = structuredClone(pdb);
  const status = (next.status = { ...rec(next.status), disruptionsAllowed: 0 });
  setMetaCondition(next, { type: DISRUPTION_ALLOWED, status: 'False', reason: SYNC_FAILED, message: err instanceof Error ? err.message : String(err), observedGeneration: pdbCounts({ ...next, status }).observedGeneration }, now);
  return next;
}
