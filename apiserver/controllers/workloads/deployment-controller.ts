import type { Logger } from 'pino';
import type { EventRecorder } from '../../../common/events/recorder';
import { realClock, type Clock } from '../../../common/informer/clock';
import type { Informer } from '../../../common/informer/informer';
import { NAMESPACE_INDEX } from '../../../common/informer/indexer';
import { runWorkers, WorkQueue } from '../../../common/informer/work-queue';
import { labelSelectorRequirements, selectorMatchesLabels } from '../../api/label-selector';
import { jsonEqual } from '../../api/json-equal';
import type { KObject, OwnerReference } from '../../api/types';
import type { ResourceRegistry } from '../../registry/builtin';
import type { ResourceType } from '../../registry/resource-type';
import { StoreInformers, waitForCacheSync } from '../../store/list-watch';
import type { ObjectStore } from '../../store/object-store';
import { controllerContext } from '../../store/system-context';
import type { WatchCache } from '../../store/watch-cache';
import { ensureControllerIndex, ownedAndOrphans } from './controller-index';
import { claim, controllerRefOf, newControllerRef } from './controller-ref';
import { rolloutRecreate, rolloutRolling, syncScale } from './deployment-rollout';
import { calculateStatus, getCondition, hasProgressDeadline, newCondition, PROGRESSING, REASON, setCondition, statusOf } from './deployment-status';
import { DeploymentSync } from './deployment-sync';
import { activeReplicaSets, desiredReplicasAnnotation, dspec, replicasOf } from './deployment-util';
import { refTo } from './pod-control';

export interface DeploymentControllerOptions {
  log: Logger;
  recorder: EventRecorder;
  /** Time for conditions, the progress deadline and the queue's delays; default real time. */
  clock?: Clock;
  /** The process's shared informers; default a factory of its own over store and cache. */
  informers?: StoreInformers;
  /** Deployments synced at once (upstream --concurrent-deployment-syncs, 5). */
  workers?: number;
}

const ctx = controllerContext('deployment-controller');

/**
 * Upstream's Deployment controller (pkg/controller/deployment): a Deployment owns ReplicaSets
 * (claimed by its selector), one per template, named `<deployment>-<pod-template-hash>`. A sync
 * scales them (a paused Deployment or a change of replicas: proportionally), or rolls out the
 * current template — RollingUpdate within maxSurge and maxUnavailable, Recreate all old pods
 * gone first — records revisions in annotations (a rollback moves an old ReplicaSet to the newest
 * revision), deletes old ReplicaSets beyond revisionHistoryLimit, and writes status with the
 * Available, Progressing (ProgressDeadlineExceeded past progressDeadlineSeconds, DeploymentPaused)
 * and ReplicaFailure conditions. Events: ScalingReplicaSet, FailedCreate, SelectingAll.
 */
export class DeploymentController {
  private readonly informers: StoreInformers;
  private readonly clock: Clock;
  private readonly dType: ResourceType;
  private readonly rsType: ResourceType;
  private readonly podType: ResourceType;
  private dInf!: Informer<KObject>;
  private rsInf!: Informer<KObject>;
  private podInf!: Informer<KObject>;
  private queue = new WorkQueue();

  constructor(
    private readonly store: ObjectStore,
    cache: WatchCache,
    registry: ResourceRegistry,
    private readonly opts: DeploymentControllerOptions,
  ) {
    this.informers = opts.informers ?? new StoreInformers(store, cache, { log: opts.log });
    this.clock = opts.clock ?? realClock;
    this.dType = registry.lookup('apps', 'v1', 'deployments')!;
    this.rsType = registry.lookup('apps', 'v1', 'replicasets')!;
    this.podType = registry.lookup('', 'v1', 'pods')!;
  }

  /** Follows Deployments, ReplicaSets and pods and syncs until the signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    this.queue = new WorkQueue({ clock: this.clock });
    this.dInf = this.informers.informer(this.dType);
    this.rsInf = this.informers.informer(this.rsType);
    this.podInf = this.informers.informer(this.podType);
    ensureControllerIndex(this.rsInf);
    ensureControllerIndex(this.podInf);
    const enqueue = (d: KObject) => this.queue.add(keyOf(d));
    this.dInf.addEventHandler({ onAdd: enqueue, onUpdate: (_o, d) => enqueue(d), onDelete: enqueue }, { signal });
    this.rsInf.addEventHandler({ onAdd: (rs) => this.replicaSetChanged(rs), onUpdate: (o, rs) => this.replicaSetUpdated(o, rs), onDelete: (rs) => this.replicaSetChanged(rs) }, { signal });
    this.podInf.addEventHandler({ onDelete: (p) => this.podDeleted(p) }, { signal });
    this.informers.start(signal);
    if (!(await waitForCacheSync(signal, this.dInf, this.rsInf, this.podInf))) return;
    await runWorkers(this.queue, (key) => this.sync(key), signal, {
      workers: this.opts.workers ?? 5,
      onError: (key, err) => this.opts.log.warn({ err, deployment: key }, 'syncing deployment failed; retrying'),
    });
  }

  private resolve(namespace: string, ref: OwnerReference | undefined): KObject | undefined {
    if (!ref || ref.kind !== 'Deployment' || !ref.apiVersion.startsWith('apps/')) return undefined;
    const d = this.dInf.get(`${namespace}/${ref.name}`);
    return d && d.metadata.uid === ref.uid ? d : undefined;
  }

  /** Deployments of the namespace whose selector matches an orphaned ReplicaSet (upstream getDeploymentsForReplicaSet). */
  private matching(rs: KObject): KObject[] {
    return this.dInf.store.byIndex(NAMESPACE_INDEX, rs.metadata.namespace ?? '').filter((d) => {
      const reqs = labelSelectorRequirements(dspec(d).selector);
      return reqs !== null && reqs.length > 0 && selectorMatchesLabels(reqs, rs.metadata.labels);
    });
  }

  /** Upstream addReplicaSet / deleteReplicaSet: the owner, or for an orphan every Deployment that could adopt it. */
  private replicaSetChanged(rs: KObject): void {
    const ref = controllerRefOf(rs);
    if (ref) {
      const d = this.resolve(rs.metadata.namespace ?? '', ref);
      if (d) this.queue.add(keyOf(d));
      return;
    }
    for (const d of this.matching(rs)) this.queue.add(keyOf(d));
  }

  private replicaSetUpdated(old: KObject, rs: KObject): void {
    if (old.metadata.resourceVersion === rs.metadata.resourceVersion) return;
    const ref = controllerRefOf(rs);
    const oldRef = controllerRefOf(old);
    const refChanged = !jsonEqual(ref ?? null, oldRef ?? null);
    if (refChanged && oldRef) {
      const prev = this.resolve(old.metadata.namespace ?? '', oldRef);
      if (prev) this.queue.add(keyOf(prev));
    }
    if (ref) {
      const d = this.resolve(rs.metadata.namespace ?? '', ref);
      if (d) this.queue.add(keyOf(d));
      return;
    }
    if (refChanged || !jsonEqual(old.metadata.labels ?? {}, rs.metadata.labels ?? {})) for (const d of this.matching(rs)) this.queue.add(keyOf(d));
  }

  /** Upstream deletePod: a Recreate rollout waits for old pods to be gone. */
  private podDeleted(pod: KObject): void {
    const ns = pod.metadata.namespace ?? '';
    const rsRef = controllerRefOf(pod);
    if (rsRef?.kind !== 'ReplicaSet') return;
    const rs = this.rsInf.get(`${ns}/${rsRef.name}`);
    if (!rs || rs.metadata.uid !== rsRef.uid) return;
    const d = this.resolve(ns, controllerRefOf(rs));
    if (d && dspec(d).strategy?.type === 'Recreate') this.queue.add(keyOf(d));
  }

  /** Upstream syncDeployment for one key. */
  async sync(key: string): Promise<void> {
    const cached = this.dInf.get(key);
    if (!cached) return;
    const sync = new DeploymentSync(
      {
        store: this.store,
        rsType: this.rsType,
        deploymentType: this.dType,
        rsInf: this.rsInf,
        podInf: this.podInf,
        recorder: this.opts.recorder,
        ctx,
        now: () => this.clock.now(),
        // Within a second of the deadline: look again a second later (upstream rate-limits it).
        requeueAfter: (k, ms) => this.queue.addAfter(k, Math.max(ms, 1000)),
      },
      structuredClone(cached),
    );
    const d = sync.d;
    const reqs = labelSelectorRequirements(dspec(d).selector);
    if (!reqs || reqs.length === 0) {
      this.opts.recorder.event(refTo(d), 'Warning', 'SelectingAll', 'This deployment is selecting all pods. A non-empty selector is required.');
      if ((statusOf(d).observedGeneration ?? 0) < (d.metadata.generation ?? 0)) await sync.writeStatus(d, { ...statusOf(d), observedGeneration: d.metadata.generation });
      return;
    }
    const rsList = await claim(this.store, d, ownedAndOrphans(this.rsInf, d.metadata.namespace ?? '', d.metadata.uid!), {
      selector: dspec(d).selector,
      ref: newControllerRef(d, 'apps/v1', 'Deployment'),
      type: this.rsType,
      ctx,
    });
    if (d.metadata.deletionTimestamp) {
      const { newRS, oldRSs } = await sync.replicaSets(d, rsList, false);
      return sync.writeStatus(d, calculateStatus([...oldRSs, newRS], newRS, d, this.clock.now()));
    }
    await this.checkPausedConditions(sync);
    if (dspec(d).paused || (await this.isScalingEvent(sync, rsList))) return syncScale(sync, d, rsList);
    if (dspec(d).strategy?.type === 'Recreate') return rolloutRecreate(sync, d, rsList);
    return rolloutRolling(sync, d, rsList);
  }

  /** Upstream checkPausedConditions: Progressing Unknown DeploymentPaused / DeploymentResumed (never over a timeout). */
  private async checkPausedConditions(sync: DeploymentSync): Promise<void> {
    const d = sync.d;
    if (!hasProgressDeadline(d)) return;
    const cond = getCondition(statusOf(d), PROGRESSING);
    if (cond?.reason === REASON.timedOut) return;
    const pausedCond = cond?.reason === REASON.paused;
    const paused = dspec(d).paused === true;
    if (paused === pausedCond) return;
    const s = structuredClone(statusOf(d));
    const c = paused ? newCondition(PROGRESSING, 'Unknown', REASON.paused, 'Deployment is paused', this.clock.now()) : newCondition(PROGRESSING, 'Unknown', REASON.resumed, 'Deployment is resumed', this.clock.now());
    setCondition(s, c);
    await sync.writeStatus(d, s, true);
  }

  /** Upstream isScalingEvent: an active ReplicaSet annotated with a desired size other than replicas. */
  private async isScalingEvent(sync: DeploymentSync, rsList: readonly KObject[]): Promise<boolean> {
    const d = sync.d;
    const { newRS, oldRSs } = await sync.replicaSets(d, rsList, false);
    return activeReplicaSets([...oldRSs, newRS]).some((rs) => {
      const desired = desiredReplicasAnnotation(rs);
      return desired !== undefined && desired !== replicasOf(d);
    });
  }
}

function keyOf(o: KObject): string {
  return `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
}
