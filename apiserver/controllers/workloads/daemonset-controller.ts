import { realClock, type Clock } from '../../../common/informer/clock';
import type { Informer } from '../../../common/informer/informer';
import { NAMESPACE_INDEX } from '../../../common/informer/indexer';
import { runWorkers, WorkQueue } from '../../../common/informer/work-queue';
import { isNotFound } from '../../api/errors';
import { labelSelectorRequirements } from '../../api/label-selector';
import type { KObject } from '../../api/types';
import { get, num, str } from '../../registry/obj-access';
import type { ResourceRegistry } from '../../registry/builtin';
import type { ResourceType } from '../../registry/resource-type';
import { StoreInformers, waitForCacheSync } from '../../store/list-watch';
import type { ObjectStore } from '../../store/object-store';
import { controllerContext } from '../../store/system-context';
import type { WatchCache } from '../../store/watch-cache';
import { claim, newControllerRef } from './controller-ref';
import { DaemonSetHistory } from './daemonset-history';
import { daemonPodTemplate, pinToNode, shouldRunOn, targetNodeName } from './daemonset-placement';
import { daemonSetCounts, podsShouldBeOnNode, rollingUpdatePlan, type FailedPodBackoff } from './daemonset-plan';
import { Expectations } from './expectations';
import { REVISION_HASH_LABEL } from './history';
import { dependentHandler } from './owner-events';
import { PodControl, podFromTemplate, refTo, slowStartBatch } from './pod-control';
import { isPodTerminal } from './pod-state';
import { withoutZeros, type WorkloadControllerOptions } from './statefulset-controller';

const ctx = controllerContext('daemon-set-controller');

/** Upstream BurstReplicas: at most this many creates and deletes per sync. */
const BURST_REPLICAS = 250;

/**
 * Upstream's DaemonSet controller: one daemon pod on every node that should run it. A sync claims
 * the pods its selector matches, builds its revision history, makes pods for nodes without one
 * (each pinned to its node by a required node affinity on metadata.name, bound by the scheduler),
 * deletes pods on nodes that should not run them (and failed pods, with a back-off), rolls pods
 * to the current revision (RollingUpdate with maxUnavailable or maxSurge; OnDelete leaves that to
 * the user) and writes the status counts. Creates and deletes are tracked as expectations, so a
 * sync on a stale cache neither doubles nor repeats them.
 */
export class DaemonSetController {
  private readonly informers: StoreInformers;
  private readonly clock: Clock;
  private readonly types: { sets: ResourceType; pods: ResourceType; revisions: ResourceType; nodes: ResourceType };
  private readonly history: DaemonSetHistory;
  private readonly podControl: PodControl;
  private readonly expectations: Expectations;
  private readonly backoff: FailedPodBackoff;
  private queue = new WorkQueue();
  private sets?: Informer<KObject>;
  private pods?: Informer<KObject>;
  private revisions?: Informer<KObject>;
  private nodes?: Informer<KObject>;

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
    this.types = { sets: type('apps', 'daemonsets'), pods: type('', 'pods'), revisions: type('apps', 'controllerrevisions'), nodes: type('', 'nodes') };
    this.history = new DaemonSetHistory(store, this.types, ctx);
    this.podControl = new PodControl(store, this.types.pods, opts.recorder, ctx);
    this.expectations = new Expectations(() => this.clock.now());
    this.backoff = new Backoff(1_000, 15 * 60_000);
  }

  async run(signal: AbortSignal): Promise<void> {
    const queue = (this.queue = new WorkQueue({ clock: this.clock }));
    const sets = (this.sets = this.informers.informer(this.types.sets));
    const pods = (this.pods = this.informers.informer(this.types.pods));
    const revisions = (this.revisions = this.informers.informer(this.types.revisions));
    const nodes = (this.nodes = this.informers.informer(this.types.nodes));
    const key = (o: KObject) => `${o.metadata.namespace}/${o.metadata.name}`;
    const all = () => sets.store.listKeys().forEach((k) => queue.add(k));
    sets.addEventHandler({ onAdd: (o) => queue.add(key(o)), onUpdate: (_old, o) => queue.add(key(o)), onDelete: (o) => this.expectations.delete(key(o)) }, { signal });
    const observed = (owner: string, pod: KObject, event: 'add' | 'delete') => (event === 'add' ? this.expectations.creationObserved(owner) : this.expectations.deletionObserved(owner, pod.metadata.uid));
    pods.addEventHandler(dependentHandler(sets.store, 'DaemonSet', (k) => queue.add(k), observed), { signal });
    revisions.addEventHandler(dependentHandler(sets.store, 'DaemonSet', (k) => queue.add(k)), { signal });
    nodes.addEventHandler({ onAdd: all, onUpdate: (old, node) => this.nodeChanged(old, node), onDelete: all }, { signal });
    this.informers.start(signal);
    if (!(await waitForCacheSync(signal, sets, pods, revisions, nodes))) return;
    await runWorkers(queue, (k) => this.sync(k), signal, {
      workers: this.opts.workers ?? 2,
      onError: (k, err) => this.opts.log.warn({ err, daemonset: k }, 'syncing daemonset failed; retrying'),
    });
  }

  /** Upstream updateNode: only DaemonSets for which the node's fitness changed (heartbeats change nothing). */
  private nodeChanged(old: KObject, node: KObject): void {
    if (JSON.stringify(old.metadata.labels ?? {}) === JSON.stringify(node.metadata.labels ?? {}) && JSON.stringify(old.spec ?? {}) === JSON.stringify(node.spec ?? {})) return;
    for (const ds of this.sets!.store.list()) {
      const a = shouldRunOn(old, ds);
      const b = shouldRunOn(node, ds);
      if (a.shouldRun !== b.shouldRun || a.shouldContinueRunning !== b.shouldContinueRunning) this.queue.add(`${ds.metadata.namespace}/${ds.metadata.name}`);
    }
  }

  /** Upstream getNodesToDaemonPods: the DaemonSet's pods by the node they are for (terminal pods being deleted left out unless asked for). */
  private nodeToPods(pods: readonly KObject[], includeDeletedTerminal: boolean): Map<string, KObject[]> {
    const out = new Map<string, KObject[]>();
    for (const pod of pods) {
      if (!includeDeletedTerminal && isPodTerminal(pod) && pod.metadata.deletionTimestamp) continue;
      const node = targetNodeName(pod);
      if (node === undefined) continue;
      let list = out.get(node);
      if (!list) out.set(node, (list = []));
      list.push(pod);
    }
    return out;
  }

  /** One sync of the DaemonSet under key (namespace/name), as the informers' caches have it. */
  async sync(key: string): Promise<void> {
    const ds = this.sets!.get(key);
    if (!ds) {
      this.expectations.delete(key);
      return;
    }
    const selector = get(ds, 'spec', 'selector');
    const reqs = labelSelectorRequirements(selector);
    if (!reqs) return;
    if (reqs.length === 0) {
      this.opts.recorder.event(refTo(ds), 'Warning', 'SelectingAll', 'This daemon set is selecting all pods. A non-empty selector is required.');
      return;
    }
    // Upstream: the status of a DaemonSet being deleted cannot be told reliably (its history may be going); leave it.
    if (ds.metadata.deletionTimestamp) return;
    const ns = ds.metadata.namespace ?? '';
    const ref = newControllerRef(ds, 'apps/v1', 'DaemonSet');
    const nodes = this.nodes!.store.list();
    const revisions = await claim(this.store, ds, this.revisions!.store.byIndex(NAMESPACE_INDEX, ns), { selector, ref, type: this.types.revisions, ctx });
    const pods = await claim(this.store, ds, this.pods!.store.byIndex(NAMESPACE_INDEX, ns), { selector, ref, type: this.types.pods, ctx });
    const { cur, old } = await this.history.construct(ds, revisions);
    const hash = cur.metadata.labels?.[REVISION_HASH_LABEL] ?? '';
    if (!this.expectations.satisfied(key)) {
      // Creates or deletes of an earlier sync are not in the cache yet: count, but do not act (nor claim this generation observed).
      await this.writeStatus(key, ds, nodes, pods, hash, false);
      return;
    }
    let failure: unknown;
    try {
      await this.manage(key, ds, nodes, pods, hash);
      if (this.expectations.satisfied(key) && str(get(ds, 'spec', 'updateStrategy', 'type')) === 'RollingUpdate') {
        // The pods as the cache has them now, as upstream's rollingUpdate reads them again: manage
        // may have deleted some already, and deleting one twice would leave an expectation for a
        // deletion that was observed before it was expected (the sync stalls until it expires).
        const now = await claim(this.store, ds, this.pods!.store.byIndex(NAMESPACE_INDEX, ns), { selector, ref, type: this.types.pods, ctx });
        const plan = rollingUpdatePlan(ds, nodes, this.nodeToPods(now, false), hash, this.clock.now());
        await this.syncNodes(key, ds, plan.remove, plan.createOn, hash);
      }
      await this.history.cleanup(ds, old, pods);
    } catch (err) {
      failure = err;
    }
    await this.writeStatus(key, ds, nodes, pods, hash, true);
    if (failure !== undefined) throw failure as Error;
  }

  /** Upstream manage: a pod for every node that should have one and has none; pods where they should not be, failed pods, extra pods, and unbound pods for nodes that are gone are deleted. */
  private async manage(key: string, ds: KObject, nodes: readonly KObject[], pods: readonly KObject[], hash: string): Promise<void> {
    const nodeToPods = this.nodeToPods(pods, false);
    const createOn: string[] = [];
    const remove: KObject[] = [];
    for (const node of nodes) {
      const name = node.metadata.name!;
      const d = podsShouldBeOnNode(node, nodeToPods.get(name) ?? [], ds, hash, this.clock.now(), this.backoff, `${key}/${name}`);
      if (d.create) createOn.push(name);
      remove.push(...d.remove);
      for (const p of d.failed) this.opts.recorder.event(refTo(ds), 'Warning', 'FailedDaemonPod', `Found failed daemon pod ${p.metadata.namespace}/${p.metadata.name} on node ${name}, will try to kill it`);
      if (d.retryAfterMs !== undefined) this.queue.addAfter(key, d.retryAfterMs);
    }
    const known = new Set(nodes.map((n) => n.metadata.name));
    for (const [node, list] of nodeToPods) if (!known.has(node)) remove.push(...list.filter((p) => !str(get(p, 'spec', 'nodeName'))));
    await this.syncNodes(key, ds, remove, createOn, hash);
  }

  /** Upstream syncNodes: creates (slow-start batches, pinned to their nodes) and deletes, each counted as an expectation first. */
  private async syncNodes(key: string, ds: KObject, remove: readonly KObject[], createOn: readonly string[], hash: string): Promise<void> {
    const creates = createOn.slice(0, BURST_REPLICAS);
    const deletes = remove.slice(0, BURST_REPLICAS);
    if (creates.length === 0 && deletes.length === 0) return;
    this.expectations.expect(key, creates.length, deletes.map((p) => p.metadata.uid!));
    const template = daemonPodTemplate(ds, hash);
    const ref = newControllerRef(ds, 'apps/v1', 'DaemonSet');
    let attempted = 0;
    const { error } = await slowStartBatch(creates.length, 1, async (i) => {
      attempted++;
      const pod = podFromTemplate(template, ref, { generateName: `${ds.metadata.name}-` });
      pinToNode(pod.spec as Record<string, unknown>, creates[i]);
      try {
        await this.podControl.create(ds, pod);
      } catch (err) {
        this.expectations.creationObserved(key);
        throw err;
      }
    });
    // Creates never attempted after a failed batch are not expected; the next sync starts over.
    for (let i = attempted; i < creates.length; i++) this.expectations.creationObserved(key);
    const results = await Promise.allSettled(
      deletes.map(async (pod) => {
        try {
          await this.podControl.delete(ds, pod);
        } catch (err) {
          this.expectations.deletionObserved(key, pod.metadata.uid);
          throw err;
        }
      }),
    );
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (error !== undefined) throw error as Error;
    if (failed) throw failed.reason as Error;
  }

  /** Upstream updateDaemonSetStatus / storeDaemonSetStatus: written when a count changed or the generation was newly observed. */
  private async writeStatus(key: string, ds: KObject, nodes: readonly KObject[], pods: readonly KObject[], hash: string, observe: boolean): Promise<void> {
    const counts = daemonSetCounts(ds, nodes, this.nodeToPods(pods, true), hash, this.clock.now());
    const old = (ds.status ?? {}) as Record<string, unknown>;
    const generation = ds.metadata.generation ?? 0;
    const same = (Object.keys(counts) as Array<keyof typeof counts>).every((k) => (num(old[k]) ?? 0) === counts[k]);
    if (!(same && (num(old.observedGeneration) ?? 0) >= generation)) {
      try {
        await this.store.update(
          this.types.sets,
          ds.metadata.namespace ?? '',
          ds.metadata.name!,
          (cur) => {
            if (!cur || cur.metadata.uid !== ds.metadata.uid) throw new DaemonSetGone();
            const status: Record<string, unknown> = { ...((cur.status ?? {}) as Record<string, unknown>), ...counts };
            if (observe) status.observedGeneration = generation;
            cur.status = withoutZeros(status, ['updatedNumberScheduled', 'numberAvailable', 'numberUnavailable', 'observedGeneration']);
            return cur;
          },
          { ...ctx, subresource: 'status' },
        );
      } catch (err) {
        if (!(err instanceof DaemonSetGone) && !isNotFound(err)) throw err;
      }
    }
    // Availability comes minReadySeconds after readiness, with no event to say so: look again then.
    const minReady = num(get(ds, 'spec', 'minReadySeconds')) ?? 0;
    if (minReady > 0 && counts.numberReady !== counts.numberAvailable) this.queue.addAfter(key, minReady * 1000);
  }
}

/** The DaemonSet was deleted or replaced between the cache and the status write. */
class DaemonSetGone extends Error {}

/** Upstream flowcontrol.Backoff as the DaemonSet controller uses it for failed pods: per key, initial doubling to max; forgotten after 2 × max without use. */
class Backoff implements FailedPodBackoff {
  private readonly entries = new Map<string, { delayMs: number; lastMs: number }>();

  constructor(
    private readonly initialMs: number,
    private readonly maxMs: number,
  ) {}

  remaining(key: string, nowMs: number): number {
    const e = this.entries.get(key);
    if (!e) return 0;
    return Math.max(0, e.lastMs + e.delayMs - nowMs);
  }

  next(key: string, nowMs: number): void {
    const e = this.entries.get(key);
    const fresh = !e || nowMs - e.lastMs > 2 * this.maxMs;
    this.entries.set(key, { delayMs: fresh ? this.initialMs : Math.min(e.delayMs * 2, this.maxMs), lastMs: nowMs });
  }
}
