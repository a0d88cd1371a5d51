import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import { referenceTo } from '../../common/events/object-ref';
import { NOOP_RECORDER, type EventRecorder } from '../../common/events/recorder';
import { isAlreadyExists, isConflict, isNotFound } from '../api/errors';
import type { KObject } from '../api/types';
import { get, recs, strAt } from '../registry/obj-access';
import type { ResourceRegistry } from '../registry/builtin';
import type { ResourceType } from '../registry/resource-type';
import type { Informer } from '../../common/informer/informer';
import { StoreInformers, typedHandler, waitForCacheSync } from '../store/list-watch';
import type { ObjectStore, WriteContext } from '../store/object-store';
import type { WatchCache } from '../store/watch-cache';
import { assignPod } from '../store/assign-pod';
import { filterNode, fitErrorMessage, FILTERS } from './filters';
import { podInfo, type NodeInfo, type PodInfo } from './node-info';
import { clearNomination, preemptVictim } from './preempt-victims';
import { adjusted, eligibleToPreempt, findCandidates, pickOneNode, podPriority, type NodePod } from './preemption';
import { podVolumes, volumeBindingFilter, type PodVolumes, type VolumeLister } from './volume-binding';
import { ANN_SELECTED_NODE } from './volume-match';
import { podCondition, setPodCondition, type PodCondition } from '../registry/types/pod-conditions';
import { podKey, SchedulerCache } from './scheduler-cache';
import { SchedulingQueue } from './scheduling-queue';
import { selectHost } from './select-host';
import { realTimers, type Timers } from './timers';

/** Pods whose spec.schedulerName is this (or unset) are ours (upstream's default profile name). */
export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';

export interface SchedulerOptions {
  now: () => Date;
  log: Logger;
  /** Back-off timers; default real ones. */
  timers?: Timers;
  /** Which pods to schedule (spec.schedulerName); default default-scheduler. */
  schedulerName?: string;
  /** Back-off after the first failed attempt, doubling up to maxBackoffMs (upstream 1 s and 10 s). */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** The process's shared informers; default a factory of its own over store and cache. */
  informers?: StoreInformers;
  /** Where Scheduled and FailedScheduling events go (reporting component default-scheduler); default none. */
  recorder?: EventRecorder;
}

/** What one scheduling attempt did. */
export type ScheduleResult =
  | { outcome: 'bound'; node: string }
  | { outcome: 'unschedulable'; message: string }
  | { outcome: 'gated' }
  /** Not (or no longer) a pending pod of ours, or another binder won. */
  | { outcome: 'skipped' };

/** The scheduler's identity (upstream system:kube-scheduler, renamed as the RBAC defaults name it). */
const schedulerCtx: WriteContext = {
  user: { username: 'system:svc-scheduler', groups: ['system:authenticated'] },
  dryRun: false,
  fieldManager: 'svc-scheduler',
  subresource: '',
};

/**
 * The scheduler (issue 4 point 6; upstream kube-scheduler's default profile, trimmed): binds
 * pending pods — no spec.nodeName, not terminating, spec.schedulerName ours — through the
 * pods/binding write path to a node that passes the filters (cordon, taints and tolerations,
 * Ready, nodeSelector and required node affinity, resource requests against allocatable), the
 * best by least-allocated score with PreferNoSchedule taints lowering it.
 *
 * Nodes and pods come from their informers into a SchedulerCache. Pods are tried one at a time from a
 * queue, so every decision sees the previous binding. A pod that fits nowhere gets
 * PodScheduled=False reason Unschedulable with upstream's "0/N nodes are available: ..." message
 * and is retried with back-off (1 s doubling to 10 s), and at once when a node is added or changes
 * in what the filters read or a bound pod goes away. Gated pods (spec.schedulingGates) get
 * PodScheduled=False reason SchedulingGated and wait for their gates to go. A pod that fits
 * nowhere may preempt lower-priority pods on one node (./preemption, ./preempt-victims) and is
 * nominated there (status.nominatedNodeName); it binds once the victims are gone.
 */
export class Scheduler {
  private readonly view: SchedulerCache;
  private readonly queue: SchedulingQueue;
  /** Pods that failed to schedule → consecutive failed attempts (back-off grows with them). */
  private readonly failures = new Map<string, number>();
  private readonly name: string;
  /** The pod being tried right now: its own condition write comes back as an update meanwhile. */
  private current?: string;

  private readonly informers: StoreInformers;
  private readonly recorder: EventRecorder;
  /** PodDisruptionBudgets, read by preemption (absent when the type is not registered). */
  private pdbs?: Informer<KObject>;
  /** Claims, volumes and classes for the volume filter; empty until run starts their informers. */
  private volumeLister: VolumeLister = { claim: () => undefined, volume: () => undefined, storageClass: () => undefined, volumes: () => [] };

  constructor(
    private readonly store: ObjectStore,
    cache: WatchCache,
    private readonly types: ResourceRegistry,
    private readonly opts: SchedulerOptions,
  ) {
    this.informers = opts.informers ?? new StoreInformers(store, cache, { log: opts.log });
    this.name = opts.schedulerName ?? DEFAULT_SCHEDULER_NAME;
    this.recorder = opts.recorder ?? NOOP_RECORDER;
    this.queue = new SchedulingQueue(opts.timers ?? realTimers);
    this.view = new SchedulerCache({
      podChanged: (key, pod, prev) => this.podChanged(key, pod, prev),
      clusterChanged: () => {
        for (const key of this.failures.keys()) this.queue.add(key);
      },
    });
  }

  /** Schedules until the signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    // Upstream's scheduler, too, has its own scheduling queue (with back-off) rather than a work queue.
    const informers = [this.type('nodes'), this.type('pods')].map((t) => {
      const inf = this.informers.informer(t);
      inf.addEventHandler(typedHandler(t, this.view), { signal });
      return inf;
    });
    const pdbType = this.types.lookup('policy', 'v1', 'poddisruptionbudgets');
    if (pdbType) informers.push((this.pdbs = this.informers.informer(pdbType)));
    informers.push(...this.watchVolumes(signal));
    this.informers.start(signal);
    try {
      await waitForCacheSync(signal, ...informers);
      for (;;) {
        const key = await this.queue.next(signal);
        if (key === undefined) break;
        await this.attempt(key);
      }
    } finally {
      this.queue.close();
    }
  }

  /** One attempt for the pod "namespace/name" as the cache has it: bind it, or record why not. */
  async scheduleOne(key: string): Promise<ScheduleResult> {
    const pod = this.view.pod(key);
    if (!pod || !this.isPending(pod)) return { outcome: 'skipped' };
    if (recs(get(pod, 'spec', 'schedulingGates')).length > 0) {
      await this.setScheduledCondition(pod, { type: 'PodScheduled', status: 'False', reason: 'SchedulingGated', message: 'Scheduling is blocked due to non-empty scheduling gates' });
      return { outcome: 'gated' };
    }
    const info = podInfo(pod);
    const nodes = this.nodesFor(pod);
    const volumes = podVolumes(pod, this.volumeLister);
    if (typeof volumes === 'string') return this.unschedulable(pod, fitErrorMessage(nodes.length, new Map(nodes.map((n) => [n.name, [volumes]]))));
    const filters = [...FILTERS, volumeBindingFilter(volumes, this.volumeLister)];
    const choice = selectHost(info, nodes, (p, n) => filterNode(p, n, filters));
    if ('node' in choice) {
      const node = choice.node.name;
      try {
        await this.selectNodeForClaims(volumes, node);
        const bound = await assignPod(this.store, this.type('pods'), pod.metadata.namespace ?? '', pod.metadata.name ?? '', { node, uid: pod.metadata.uid }, schedulerCtx, this.opts.now);
        this.view.assume(bound);
      } catch (err) {
        // Bound by someone else, deleted, or replaced since we looked: its next event tells.
        if (isConflict(err) || isAlreadyExists(err) || isNotFound(err)) return { outcome: 'skipped' };
        throw err;
      }
      this.opts.log.debug({ pod: key, node, score: choice.score }, 'pod bound');
      // Upstream's message and action (the events API's reason Scheduled, action Binding).
      this.recorder.event(referenceTo(pod), 'Normal', 'Scheduled', `Successfully assigned ${pod.metadata.namespace}/${pod.metadata.name} to ${node}`, { action: 'Binding' });
      return { outcome: 'bound', node };
    }
    const message = fitErrorMessage(nodes.length, choice.reasons);
    // Upstream's PostFilter: preemption may make room on one node, which the pod is nominated to.
    const nominated = await this.preempt(pod, info, nodes);
    return this.unschedulable(pod, message, nominated);
  }

  private async unschedulable(pod: KObject, message: string, nominated?: string): Promise<ScheduleResult> {
    // Every failed attempt, as upstream; repeats of one message count on one event.
    this.recorder.event(referenceTo(pod), 'Warning', 'FailedScheduling', message, { action: 'Scheduling' });
    await this.setScheduledCondition(pod, { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message }, nominated);
    return { outcome: 'unschedulable', message };
  }

  /**
   * The nodes as the pod sees them: each also holding the requests of the pods of at least its
   * priority nominated there (upstream's filter with nominated pods), so that room made by
   * preemption is kept for the preemptor.
   */
  private nodesFor(pod: KObject): NodeInfo[] {
    const nodes = this.view.nodeInfos();
    const me = podKey(pod);
    const prio = podPriority(pod);
    const extra = new Map<string, NodePod[]>();
    for (const n of this.view.nominatedPods()) {
      if (podKey(n.pod) === me || podPriority(n.pod) < prio) continue;
      const at = strAt(n.pod, 'status', 'nominatedNodeName');
      extra.set(at, [...(extra.get(at) ?? []), n]);
    }
    return extra.size === 0 ? nodes : nodes.map((n) => (extra.has(n.name) ? adjusted(n, extra.get(n.name)!, 1) : n));
  }

  /** Upstream DefaultPreemption: evicts the victims on the node chosen and returns it, or undefined when preemption cannot help. */
  private async preempt(pod: KObject, info: PodInfo, nodes: readonly NodeInfo[]): Promise<string | undefined> {
    const podsOn = (n: string) => this.view.podsOn(n);
    if (!eligibleToPreempt(pod, podsOn)) return undefined;
    const nowMs = this.opts.now().getTime();
    const candidates = findCandidates(info, nodes, podsOn, this.pdbs?.store.list() ?? [], (p, n) => filterNode(p, n).length === 0, nowMs);
    const best = pickOneNode(candidates, nowMs);
    if (!best) return undefined;
    const writes = { store: this.store, pods: this.type('pods'), ctx: schedulerCtx, recorder: this.recorder, schedulerName: this.name, now: this.opts.now };
    for (const v of best.victims) await preemptVictim(writes, v, pod, best.node);
    const prio = podPriority(pod);
    for (const n of this.view.nominatedPods()) {
      if (podKey(n.pod) !== podKey(pod) && podPriority(n.pod) < prio && strAt(n.pod, 'status', 'nominatedNodeName') === best.node) await clearNomination(writes, n.pod);
    }
    this.opts.log.info({ pod: podKey(pod), node: best.node, victims: best.victims.map(podKey) }, 'preempting lower-priority pods');
    return best.node;
  }

  private async attempt(key: string): Promise<void> {
    let result: ScheduleResult;
    this.current = key;
    try {
      result = await this.scheduleOne(key);
    } catch (err) {
      this.opts.log.warn({ err, pod: key }, 'scheduling attempt failed; retrying');
      result = { outcome: 'unschedulable', message: '' };
    } finally {
      this.current = undefined;
    }
    if (result.outcome === 'unschedulable') {
      const n = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, n);
      this.queue.addAfter(key, this.backoff(n));
      if (n === 1 && result.message) this.opts.log.info({ pod: key, reason: result.message }, 'pod unschedulable');
    } else {
      this.failures.delete(key);
    }
  }

  /** Upstream's per-pod back-off: initial × 2^(attempts−1), capped. */
  private backoff(attempts: number): number {
    const initial = this.opts.initialBackoffMs ?? 1000;
    const max = this.opts.maxBackoffMs ?? 10_000;
    return Math.min(max, initial * 2 ** Math.min(attempts - 1, 30));
  }

  private podChanged(key: string, pod: KObject | undefined, prev: KObject | undefined): void {
    if (!pod || !this.isPending(pod)) {
      this.queue.forget(key);
      this.failures.delete(key);
      return;
    }
    // Our own condition writes come back as updates: only new pods, changed specs (tolerations
    // added, gates removed) or pods nobody is tracking go to the queue.
    const replaced = !prev || prev.metadata.uid !== pod.metadata.uid;
    if (replaced) this.failures.delete(key);
    const tracked = this.queue.has(key) || this.failures.has(key) || this.current === key;
    if (replaced || !isDeepStrictEqual(prev.spec, pod.spec) || !tracked) this.queue.add(key);
  }

  private isPending(pod: KObject): boolean {
    if (strAt(pod, 'spec', 'nodeName') || pod.metadata.deletionTimestamp) return false;
    const phase = strAt(pod, 'status', 'phase');
    if (phase === 'Succeeded' || phase === 'Failed') return false;
    return (strAt(pod, 'spec', 'schedulerName') || DEFAULT_SCHEDULER_NAME) === this.name;
  }

  /** Writes the PodScheduled condition (and a node preemption nominated) through pods/status unless it already says the same. */
  private async setScheduledCondition(pod: KObject, cond: PodCondition, nominated?: string): Promise<void> {
    const have = podCondition(pod, cond.type);
    const sameNomination = !nominated || strAt(pod, 'status', 'nominatedNodeName') === nominated;
    if (sameNomination && have && have.status === cond.status && (have.reason ?? '') === (cond.reason ?? '') && (have.message ?? '') === (cond.message ?? '')) return;
    try {
      await this.store.update(
        this.type('pods'),
        pod.metadata.namespace ?? '',
        pod.metadata.name ?? '',
        (fresh) => {
          // Bound or replaced meanwhile: leave it (an unchanged object is not written).
          if (!fresh || fresh.metadata.uid !== pod.metadata.uid || strAt(fresh, 'spec', 'nodeName')) return fresh ?? pod;
          setPodCondition(fresh, cond, this.opts.now());
          if (nominated) (fresh.status as Record<string, unknown>).nominatedNodeName = nominated;
          delete fresh.metadata.resourceVersion; // unpinned: the store retries if the pod changes meanwhile
          return fresh;
        },
        { ...schedulerCtx, subresource: 'status' },
      );
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
  }

  /**
   * Informers of claims, volumes and classes for the volume filter (upstream VolumeBinding); a
   * change to any of them retries the pods that failed, as a node change does.
   */
  private watchVolumes(signal: AbortSignal): Array<Informer<KObject>> {
    const [claims, volumes, classes] = [this.type('persistentvolumeclaims'), this.type('persistentvolumes'), this.type('storageclasses', 'storage.svc.io')].map((t) => this.informers.informer(t));
    const retry = () => {
      for (const key of this.failures.keys()) this.queue.add(key);
    };
    for (const inf of [claims, volumes, classes]) inf.addEventHandler({ onAdd: retry, onUpdate: retry }, { signal });
    this.volumeLister = {
      claim: (ns, name) => claims.get(`${ns}/${name}`),
      volume: (name) => volumes.get(name),
      storageClass: (name) => classes.get(name),
      volumes: () => volumes.store.list(),
    };
    return [claims, volumes, classes];
  }

  /**
   * Upstream VolumeBinding PreBind, for claims to be provisioned or bound on the chosen node: the
   * claim's selected-node annotation names it, and the PV binder binds an Available volume there
   * or provisions one. Unlike upstream, the pod is bound at once rather than after its claims: the
   * node agent waits for them to be bound before it starts the pod.
   */
  private async selectNodeForClaims(volumes: PodVolumes, node: string): Promise<void> {
    for (const { claim } of volumes.delayed) {
      if (claim.metadata.annotations?.[ANN_SELECTED_NODE] === node) continue;
      await this.store.update(
        this.type('persistentvolumeclaims'),
        claim.metadata.namespace ?? '',
        claim.metadata.name ?? '',
        (cur) => {
          if (!cur || cur.metadata.uid !== claim.metadata.uid || strAt(cur, 'spec', 'volumeName')) return cur ?? claim;
          cur.metadata.annotations = { ...cur.metadata.annotations, [ANN_SELECTED_NODE]: node };
          delete cur.metadata.resourceVersion;
          return cur;
        },
        schedulerCtx,
      );
    }
  }

  private type(resource: 'nodes' | 'pods' | 'persistentvolumeclaims' | 'persistentvolumes' | 'storageclasses', group = ''): ResourceType {
    const t = this.types.lookup(group, 'v1', resource);
    if (!t) throw new Error(`${resource} type not registered`);
    return t;
  }
}
