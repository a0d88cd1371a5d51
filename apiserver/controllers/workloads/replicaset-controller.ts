import type { Logger } from 'pino';
import type { EventRecorder } from '../../../common/events/recorder';
import { realClock, type Clock } from '../../../common/informer/clock';
import type { Informer } from '../../../common/informer/informer';
import { NAMESPACE_INDEX } from '../../../common/informer/indexer';
import { runWorkers, WorkQueue } from '../../../common/informer/work-queue';
import { isNotFound } from '../../api/errors';
import { labelSelectorRequirements, selectorMatchesLabels } from '../../api/label-selector';
import { jsonEqual } from '../../api/json-equal';
import type { KObject, OwnerReference } from '../../api/types';
import type { ResourceRegistry } from '../../registry/builtin';
import type { ResourceType } from '../../registry/resource-type';
import { StoreInformers, waitForCacheSync } from '../../store/list-watch';
import type { ObjectStore } from '../../store/object-store';
import { controllerContext } from '../../store/system-context';
import type { WatchCache } from '../../store/watch-cache';
import { ensureControllerIndex, ownedAndOrphans, ownedBy } from './controller-index';
import { claim, controllerRefOf, newControllerRef } from './controller-ref';
import { Expectations } from './expectations';
import { PodControl, podFromTemplate, podNamePrefix, slowStartBatch } from './pod-control';
import { deletionOrder, isPodActive, isPodReady, msUntilAvailable } from './pod-state';
import { calculateReplicaSetStatus, desiredReplicas, replicaSetStatusCurrent, specOf, type ReplicaSetStatus } from './replicaset-status';

export interface ReplicaSetControllerOptions {
  log: Logger;
  recorder: EventRecorder;
  /** Time for availability (minReadySeconds), expectations and the queue's delays; default real time. */
  clock?: Clock;
  /** The process's shared informers; default a factory of its own over store and cache. */
  informers?: StoreInformers;
  /** ReplicaSets synced at once (upstream --concurrent-replicaset-syncs, 5). */
  workers?: number;
  /** Most pods created or deleted by one sync (upstream BurstReplicas, 500). */
  burstReplicas?: number;
}

const ctx = controllerContext('replicaset-controller');
const statusCtx = { ...ctx, subresource: 'status' };
const KIND = 'ReplicaSet';
const API_VERSION = 'apps/v1';

/**
 * Upstream's ReplicaSet controller (pkg/controller/replicaset): keeps spec.replicas active pods
 * matching the selector. A sync claims pods (adopting matching orphans, releasing those that no
 * longer match), creates the missing ones from the template in slow-start batches of 1, 2, 4, …
 * (at most 500 per sync) or deletes the surplus least valuable first (unscheduled, pending, not
 * ready, doubled up on a node with pods of the same owner, newer), then writes status (replicas,
 * fullyLabeled, ready, available after minReadySeconds, observedGeneration, ReplicaFailure).
 * Expectations keep a sync from acting again until the informer has seen its own creates and
 * deletes. Pods being deleted no longer count, so replacements start at once (as upstream).
 */
export class ReplicaSetController {
  private readonly informers: StoreInformers;
  private readonly clock: Clock;
  private readonly expectations: Expectations;
  private readonly podControl: PodControl;
  private readonly rsType: ResourceType;
  private readonly podType: ResourceType;
  private rsInf!: Informer<KObject>;
  private podInf!: Informer<KObject>;
  private queue = new WorkQueue();

  constructor(
    private readonly store: ObjectStore,
    cache: WatchCache,
    registry: ResourceRegistry,
    private readonly opts: ReplicaSetControllerOptions,
  ) {
    this.informers = opts.informers ?? new StoreInformers(store, cache, { log: opts.log });
    this.clock = opts.clock ?? realClock;
    this.expectations = new Expectations(() => this.clock.now());
    this.rsType = registry.lookup('apps', 'v1', 'replicasets')!;
    this.podType = registry.lookup('', 'v1', 'pods')!;
    this.podControl = new PodControl(store, this.podType, opts.recorder, ctx);
  }

  /** Follows ReplicaSets and pods and syncs until the signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    this.queue = new WorkQueue({ clock: this.clock });
    this.rsInf = this.informers.informer(this.rsType);
    this.podInf = this.informers.informer(this.podType);
    ensureControllerIndex(this.podInf);
    ensureControllerIndex(this.rsInf);
    const enqueue = (rs: KObject) => this.queue.add(keyOf(rs));
    this.rsInf.addEventHandler(
      {
        onAdd: enqueue,
        onUpdate: (_old, rs) => enqueue(rs),
        onDelete: (rs) => {
          this.expectations.delete(keyOf(rs));
          enqueue(rs);
        },
      },
      { signal },
    );
    this.podInf.addEventHandler({ onAdd: (p) => this.addPod(p), onUpdate: (o, p) => this.updatePod(o, p), onDelete: (p) => this.deletePod(p) }, { signal });
    this.informers.start(signal);
    if (!(await waitForCacheSync(signal, this.rsInf, this.podInf))) return;
    await runWorkers(this.queue, (key) => this.sync(key), signal, {
      workers: this.opts.workers ?? 5,
      onError: (key, err) => this.opts.log.warn({ err, replicaset: key }, 'syncing replica set failed; retrying'),
    });
  }

  /** The ReplicaSet a controller reference names, if it is in the cache with that uid (upstream resolveControllerRef). */
  private resolve(namespace: string, ref: OwnerReference | undefined): KObject | undefined {
    if (!ref || ref.kind !== KIND || !ref.apiVersion.startsWith('apps/')) return undefined;
    const rs = this.rsInf.get(`${namespace}/${ref.name}`);
    return rs && rs.metadata.uid === ref.uid ? rs : undefined;
  }

  /** ReplicaSets of the pod's namespace whose selector matches it (for orphans: upstream getPodReplicaSets). */
  private matching(pod: KObject): KObject[] {
    return this.rsInf.store.byIndex(NAMESPACE_INDEX, pod.metadata.namespace ?? '').filter((rs) => {
      const reqs = labelSelectorRequirements((rs.spec as { selector?: unknown } | undefined)?.selector);
      return reqs !== null && reqs.length > 0 && selectorMatchesLabels(reqs, pod.metadata.labels);
    });
  }

  private addPod(pod: KObject): void {
    if (pod.metadata.deletionTimestamp) return this.deletePod(pod);
    const ref = controllerRefOf(pod);
    if (ref) {
      const rs = this.resolve(pod.metadata.namespace ?? '', ref);
      if (!rs) return;
      this.expectations.creationObserved(keyOf(rs));
      this.queue.add(keyOf(rs));
      return;
    }
    for (const rs of this.matching(pod)) this.queue.add(keyOf(rs));
  }

  private updatePod(old: KObject, pod: KObject): void {
    if (old.metadata.resourceVersion === pod.metadata.resourceVersion) return;
    const labelsChanged = !jsonEqual(old.metadata.labels ?? {}, pod.metadata.labels ?? {});
    if (pod.metadata.deletionTimestamp) {
      this.deletePod(pod);
      if (labelsChanged) this.deletePod(old);
      return;
    }
    const ns = pod.metadata.namespace ?? '';
    const ref = controllerRefOf(pod);
    const oldRef = controllerRefOf(old);
    const refChanged = !jsonEqual(ref ?? null, oldRef ?? null);
    if (refChanged && oldRef) {
      const prev = this.resolve(ns, oldRef);
      if (prev) this.queue.add(keyOf(prev));
    }
    if (ref) {
      const rs = this.resolve(ns, ref);
      if (!rs) return;
      this.queue.add(keyOf(rs));
      // Availability comes minReadySeconds after readiness with no event of its own (upstream adds a second).
      const minReady = specOf(rs).minReadySeconds ?? 0;
      if (!isPodReady(old) && isPodReady(pod) && minReady > 0) this.queue.addAfter(keyOf(rs), minReady * 1000 + 1000);
      return;
    }
    if (labelsChanged || refChanged) for (const rs of this.matching(pod)) this.queue.add(keyOf(rs));
  }

  private deletePod(pod: KObject): void {
    const rs = this.resolve(pod.metadata.namespace ?? '', controllerRefOf(pod));
    if (!rs) return;
    this.expectations.deletionObserved(keyOf(rs), pod.metadata.uid);
    this.queue.add(keyOf(rs));
  }

  /** Upstream syncReplicaSet for one key. */
  async sync(key: string): Promise<void> {
    const rs = this.rsInf.get(key);
    if (!rs) {
      this.expectations.delete(key);
      return;
    }
    const needsSync = this.expectations.satisfied(key);
    const selector = (rs.spec as { selector?: unknown } | undefined)?.selector;
    if (labelSelectorRequirements(selector) === null) {
      this.opts.log.warn({ replicaset: key }, 'replica set has an unusable selector; not syncing');
      return;
    }
    const active = ownedAndOrphans(this.podInf, rs.metadata.namespace ?? '', rs.metadata.uid!).filter(isPodActive);
    const pods = await claim(this.store, rs, active, { selector, ref: newControllerRef(rs, API_VERSION, KIND), type: this.podType, ctx });
    let manageError: unknown;
    const deleted = new Set<string>();
    if (needsSync && !rs.metadata.deletionTimestamp) {
      try {
        await this.manageReplicas(key, rs, pods, deleted);
      } catch (err) {
        manageError = err;
      }
    }
    const now = this.clock.now();
    // Pods this sync deleted are no longer active: counted, they would make status claim (until
    // the next sync) more available pods than the ReplicaSet keeps; upstream counts them, and a
    // Deployment reading that status could scale another ReplicaSet down too far.
    const status = calculateReplicaSetStatus(rs, deleted.size ? pods.filter((p) => !deleted.has(p.metadata.uid!)) : pods, manageError, now);
    await this.writeStatus(rs, status);
    if (manageError !== undefined) throw asError(manageError);
    // Come back when the next ready pod becomes available (minReadySeconds after it turned ready).
    const waits = pods.map((p) => msUntilAvailable(p, specOf(rs).minReadySeconds ?? 0, now)).filter((ms) => ms > 0);
    if (waits.length) this.queue.addAfter(key, Math.min(...waits));
  }

  /** Creates or deletes pods toward spec.replicas; the uids of the pods it deleted go into `deleted`. */
  private async manageReplicas(key: string, rs: KObject, pods: KObject[], deleted: Set<string>): Promise<void> {
    const burst = this.opts.burstReplicas ?? 500;
    const diff = pods.length - desiredReplicas(rs);
    if (diff < 0) {
      const n = Math.min(-diff, burst);
      this.expectations.expect(key, n);
      const ref = newControllerRef(rs, API_VERSION, KIND);
      const template = (rs.spec as { template?: unknown }).template;
      const { ok, error } = await slowStartBatch(n, 1, async () => {
        await this.podControl.create(rs, podFromTemplate(template, ref, { generateName: podNamePrefix(rs.metadata.name!) }));
      });
      // Creates that failed or were never tried will not be observed: stop waiting for them.
      for (let i = ok; i < n; i++) this.expectations.creationObserved(key);
      if (error !== undefined) throw asError(error);
    } else if (diff > 0) {
      const victims = this.podsToDelete(rs, pods, Math.min(diff, burst));
      this.expectations.expect(key, 0, victims.map((p) => p.metadata.uid!));
      const results = await Promise.allSettled(victims.map((p) => this.podControl.delete(rs, p)));
      let first: unknown;
      results.forEach((r, i) => {
        if (r.status === 'fulfilled') return void deleted.add(victims[i].metadata.uid!);
        this.expectations.deletionObserved(key, victims[i].metadata.uid);
        if (first === undefined && !isNotFound(r.reason)) first = r.reason;
      });
      if (first !== undefined) throw asError(first);
    }
  }

  /**
   * The n least valuable pods (upstream getPodsToDelete): ranked by deletionOrder, where a pod's
   * rank is how many active pods of the same owner's ReplicaSets share its node, so a scale-down
   * spreads what remains.
   */
  private podsToDelete(rs: KObject, pods: KObject[], n: number): KObject[] {
    if (n >= pods.length) return pods;
    const owner = controllerRefOf(rs);
    const siblings = owner ? ownedBy(this.rsInf, owner.uid).filter((s) => s.metadata.namespace === rs.metadata.namespace) : [rs];
    const related = siblings.flatMap((s) => ownedBy(this.podInf, s.metadata.uid!)).filter(isPodActive);
    const onNode = new Map<string, number>();
    for (const p of related) {
      const node = nodeOf(p);
      onNode.set(node, (onNode.get(node) ?? 0) + 1);
    }
    const now = this.clock.now();
    const rank = (p: KObject) => onNode.get(nodeOf(p)) ?? 0;
    return [...pods].sort((a, b) => deletionOrder(a, b, { a: rank(a), b: rank(b) }, now)).slice(0, n);
  }

  /** Writes status through the status sub-resource unless nothing changed (upstream updateReplicaSetStatus). */
  private async writeStatus(rs: KObject, status: ReplicaSetStatus): Promise<void> {
    if (replicaSetStatusCurrent(rs, status)) return;
    const next = { ...status, observedGeneration: rs.metadata.generation ?? 0 };
    try {
      await this.store.update(
        this.rsType,
        rs.metadata.namespace ?? '',
        rs.metadata.name!,
        (cur) => {
          if (!cur || cur.metadata.uid !== rs.metadata.uid) throw new Gone();
          cur.status = next;
          return cur;
        },
        statusCtx,
      );
    } catch (err) {
      if (err instanceof Gone || isNotFound(err)) return;
      throw err;
    }
  }
}

/** What a failed create or delete rejected with, as an Error to rethrow. */
function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(JSON.stringify(err));
}

/** The replica set was deleted (or replaced under its name) since the cache read. */
class Gone extends Error {}

function keyOf(o: KObject): string {
  return `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
}

function nodeOf(pod: KObject): string {
  const n = (pod.spec as { nodeName?: unknown } | undefined)?.nodeName;
  return typeof n === 'string' ? n : '';
}
