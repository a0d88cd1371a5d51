import type { Logger } from 'pino';
import type { EventRecorder } from '../../../common/events/recorder';
import { realClock, type Clock } from '../../../common/informer/clock';
import type { Informer } from '../../../common/informer/informer';
import { NAMESPACE_INDEX } from '../../../common/informer/indexer';
import { runWorkers, WorkQueue } from '../../../common/informer/work-queue';
import { isAlreadyExists, isConflict, isNotFound } from '../../api/errors';
import { labelSelectorRequirements } from '../../api/label-selector';
import type { KObject } from '../../api/types';
import { get, num, recs, str } from '../../registry/obj-access';
import type { ResourceRegistry } from '../../registry/builtin';
import type { ResourceType } from '../../registry/resource-type';
import { StoreInformers, waitForCacheSync } from '../../store/list-watch';
import type { ObjectStore } from '../../store/object-store';
import { controllerContext } from '../../store/system-context';
import type { WatchCache } from '../../store/watch-cache';
import { claim, newControllerRef } from './controller-ref';
import { RevisionWriter, revisionNumber, sameRevisionData, sortRevisions, templatePatch } from './history';
import { dependentHandler } from './owner-events';
import { controllerRevisionName, hashRevisionData } from './revision-hash';
import { StatefulSetControl, type RevisionPair, type StatefulSetStatus } from './statefulset-control';
import { isMemberOf, podRevision } from './statefulset-identity';
import { StatefulPodControl } from './statefulset-pod-control';

export interface WorkloadControllerOptions {
  log: Logger;
  /** Events on the owners (SuccessfulCreate, ...). */
  recorder: EventRecorder;
  /** The process's shared informers; default a factory of its own over store and cache. */
  informers?: StoreInformers;
  /** The controller's time: readiness for minReadySeconds, requeue delays, the work queue's back-off. */
  clock?: Clock;
  /** Keys synced at once (upstream --concurrent-statefulset-syncs, default 5). */
  workers?: number;
}

const ctx = controllerContext('statefulset-controller');

/**
 * Upstream's StatefulSet controller: an informer and work queue over StatefulSets, their pods,
 * their ControllerRevisions and claims. A sync adopts and releases pods (by selector and by name)
 * and revisions, works out the current and update revisions (making or renumbering one when the
 * template changed or rolled back), runs one pass of StatefulSetControl, writes the status it
 * observed (completing a rolling update when every replica is updated and ready) and trims the
 * history to revisionHistoryLimit.
 */
export class StatefulSetController {
  private readonly informers: StoreInformers;
  private readonly clock: Clock;
  private readonly types: { sets: ResourceType; pods: ResourceType; revisions: ResourceType; claims: ResourceType };
  private readonly revisionWriter: RevisionWriter;
  private queue = new WorkQueue();
  private sets?: Informer<KObject>;
  private pods?: Informer<KObject>;
  private revisions?: Informer<KObject>;
  private claims?: Informer<KObject>;

  constructor(
    private readonly store: ObjectStore,
    cache: WatchCache,
    registry: ResourceRegistry,
    private readonly opts: WorkloadControllerOptions,
  ) {
    this.informers = opts.informers ?? new StoreInformers(store, cache, { log: opts.log });
    this.clock = opts.clock ?? realClock;
    const type = (group: string, resource: string) => {
      const t = registry.lookup(group, 'v1', resource);
      if (!t) throw new Error(`${resource} type not registered`);
      return t;
    };
    this.types = { sets: type('apps', 'statefulsets'), pods: type('', 'pods'), revisions: type('apps', 'controllerrevisions'), claims: type('', 'persistentvolumeclaims') };
    this.revisionWriter = new RevisionWriter(store, this.types.revisions, ctx);
  }

  async run(signal: AbortSignal): Promise<void> {
    const queue = (this.queue = new WorkQueue({ clock: this.clock }));
    const sets = (this.sets = this.informers.informer(this.types.sets));
    const pods = (this.pods = this.informers.informer(this.types.pods));
    const revisions = (this.revisions = this.informers.informer(this.types.revisions));
    const claims = (this.claims = this.informers.informer(this.types.claims));
    const enqueue = (o: KObject) => queue.add(`${o.metadata.namespace}/${o.metadata.name}`);
    sets.addEventHandler({ onAdd: enqueue, onUpdate: (_old, o) => enqueue(o), onDelete: enqueue }, { signal });
    pods.addEventHandler(dependentHandler(sets.store, 'StatefulSet', (k) => queue.add(k)), { signal });
    revisions.addEventHandler(dependentHandler(sets.store, 'StatefulSet', (k) => queue.add(k)), { signal });
    // A claim collected away (whenScaled Delete) lets a pod waiting on its stale claim be made.
    claims.addEventHandler({ onDelete: (c) => this.setsWithClaims(c.metadata.namespace ?? '').forEach((k) => queue.add(k)) }, { signal });
    this.informers.start(signal);
    if (!(await waitForCacheSync(signal, sets, pods, revisions, claims))) return;
    await runWorkers(queue, (key) => this.sync(key), signal, {
      workers: this.opts.workers ?? 5,
      onError: (key, err) => {
        // A pod or claim the informer has not shown yet: the event it is waiting for queues the set again.
        const level = isAlreadyExists(err) || isConflict(err) ? 'debug' : 'warn';
        this.opts.log[level]({ err, statefulset: key }, 'syncing statefulset failed; retrying');
      },
    });
  }

  private setsWithClaims(ns: string): string[] {
    return (this.sets?.store.byIndex(NAMESPACE_INDEX, ns) ?? []).filter((s) => recs(get(s, 'spec', 'volumeClaimTemplates')).length > 0).map((s) => `${ns}/${s.metadata.name}`);
  }

  /** One sync of the set under key (namespace/name), as the informers' caches have it. */
  async sync(key: string): Promise<void> {
    const set = this.sets!.get(key);
    if (!set) return;
    const reqs = labelSelectorRequirements(get(set, 'spec', 'selector'));
    if (!reqs || reqs.length === 0) return;
    const ns = set.metadata.namespace ?? '';
    const ref = newControllerRef(set, 'apps/v1', 'StatefulSet');
    const selector = get(set, 'spec', 'selector');
    const revisions = sortRevisions(await claim(this.store, set, this.revisions!.store.byIndex(NAMESPACE_INDEX, ns), { selector, ref, type: this.types.revisions, ctx }));
    const pods = await claim(this.store, set, this.pods!.store.byIndex(NAMESPACE_INDEX, ns), { selector, ref, type: this.types.pods, ctx, filter: (p) => isMemberOf(set, p) });
    const revs = await this.revisionsFor(set, revisions);
    const podControl = new StatefulPodControl(this.store, this.types, this.opts.recorder, ctx, (n, name) => this.claims!.get(`${n}/${name}`));
    const control = new StatefulSetControl(podControl, () => this.clock.now());
    const { status, error } = await control.updateStatefulSet(set, revs, pods);
    completeRollingUpdate(set, status);
    await this.writeStatus(set, status);
    await this.truncateHistory(set, pods, revisions, revs);
    if (error !== undefined) throw error as Error;
    const minReady = num(get(set, 'spec', 'minReadySeconds')) ?? 0;
    if (minReady > 0 && status.availableReplicas !== (num(get(set, 'spec', 'replicas')) ?? 1)) this.queue.addAfter(key, minReady * 1000);
  }

  /**
   * Upstream getStatefulSetRevisions: the update revision is the set's template as a revision
   * (the latest one when equal, an earlier equal one renumbered on a rollback, else a new one);
   * the current revision is the one status.currentRevision names, or the update revision.
   */
  private async revisionsFor(set: KObject, revisions: KObject[]): Promise<RevisionPair> {
    let collisionCount = num(get(set, 'status', 'collisionCount')) ?? 0;
    const next = revisions.length ? revisionNumber(revisions[revisions.length - 1]) + 1 : 1;
    const data = templatePatch(set);
    const candidate: KObject = {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: {
        namespace: set.metadata.namespace,
        labels: { ...((get(set, 'spec', 'template', 'metadata', 'labels') ?? {}) as Record<string, string>) },
        ownerReferences: [newControllerRef(set, 'apps/v1', 'StatefulSet')],
        ...(set.metadata.annotations ? { annotations: { ...set.metadata.annotations } } : {}),
      },
      data,
      revision: next,
    };
    const equal = revisions.filter((r) => sameRevisionData(r, candidate));
    let update: KObject;
    if (equal.length > 0 && equal[equal.length - 1] === revisions[revisions.length - 1]) update = revisions[revisions.length - 1];
    else if (equal.length > 0) update = await this.revisionWriter.renumber(equal[equal.length - 1], next);
    else {
      const name = (count: number) => {
        const hash = hashRevisionData(data, count);
        return { name: controllerRevisionName(set.metadata.name!, hash), hash };
      };
      ({ revision: update, collisionCount } = await this.revisionWriter.create(candidate, name, collisionCount));
    }
    const current = revisions.find((r) => r.metadata.name === str(get(set, 'status', 'currentRevision'))) ?? update;
    return { current, update, collisionCount };
  }

  /** Upstream updateStatefulSetStatus: writes the observed status when it differs from the set's. */
  private async writeStatus(set: KObject, status: StatefulSetStatus): Promise<void> {
    const old = (set.status ?? {}) as Record<string, unknown>;
    const fields = Object.keys(status) as Array<keyof StatefulSetStatus>;
    if (old.observedGeneration !== undefined && fields.every((f) => (old[f] ?? (typeof status[f] === 'number' ? 0 : '')) === status[f])) return;
    try {
      await this.store.update(
        this.types.sets,
        set.metadata.namespace ?? '',
        set.metadata.name!,
        (cur) => {
          if (!cur || cur.metadata.uid !== set.metadata.uid) throw new SetGone();
          cur.status = withoutZeros({ ...((cur.status ?? {}) as Record<string, unknown>), ...status }, OMITTED_WHEN_ZERO);
          return cur;
        },
        { ...ctx, subresource: 'status' },
      );
    } catch (err) {
      if (err instanceof SetGone || isNotFound(err)) return;
      throw err;
    }
  }

  /** Upstream truncateHistory: revisions used by no pod and neither current nor update, oldest first, beyond revisionHistoryLimit. */
  private async truncateHistory(set: KObject, pods: readonly KObject[], revisions: readonly KObject[], revs: RevisionPair): Promise<void> {
    const live = new Set([revs.current.metadata.name, revs.update.metadata.name, ...pods.map(podRevision)]);
    const history = revisions.filter((r) => !live.has(r.metadata.name));
    const limit = num(get(set, 'spec', 'revisionHistoryLimit')) ?? 10;
    for (const r of history.slice(0, Math.max(0, history.length - limit))) await this.revisionWriter.delete(r);
  }
}

/** StatefulSetStatus fields upstream's JSON leaves out when zero (omitempty); replicas and availableReplicas are always written. */
const OMITTED_WHEN_ZERO = ['readyReplicas', 'currentReplicas', 'updatedReplicas', 'currentRevision', 'updateRevision'];

/** The status without the listed fields that are zero or empty, as upstream's JSON writes it (clients read absent and 0 alike; some tell them apart). */
export function withoutZeros(status: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  for (const f of fields) if (status[f] === 0 || status[f] === '') delete status[f];
  return status;
}

/** Upstream completeRollingUpdate: every replica updated and ready makes the update revision current. */
function completeRollingUpdate(set: KObject, status: StatefulSetStatus): void {
  if (str(get(set, 'spec', 'updateStrategy', 'type')) === 'RollingUpdate' && status.updatedReplicas === status.replicas && status.readyReplicas === status.replicas) {
    status.currentReplicas = status.updatedReplicas;
    status.currentRevision = status.updateRevision;
  }
}

/** The set was deleted or replaced between the cache and the status write. */
class SetGone extends Error {}

