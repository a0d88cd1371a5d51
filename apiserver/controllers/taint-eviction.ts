import type { Logger } from 'pino';
import { NOOP_RECORDER, type EventObjectRef, type EventRecorder } from '../../common/events/recorder';
import { runWorkers, WorkQueue } from '../../common/informer/work-queue';
import { isNotFound, isConflict, isAlreadyExists } from '../api/errors';
import type { KObject } from '../api/types';
import { strAt } from '../registry/obj-access';
import type { ResourceRegistry } from '../registry/builtin';
import type { ResourceType } from '../registry/resource-type';
import { podCondition, setPodCondition } from '../registry/types/pod-conditions';
import { podKey } from '../scheduler/scheduler-cache';
import { nodeTaints, podTolerations, tolerates, type Taint, type Toleration } from '../scheduler/taints';
import { realTimers, type Timers } from '../scheduler/timers';
import { StoreInformers, typedHandler } from '../store/list-watch';
import type { ObjectStore } from '../store/object-store';
import type { WatchCache } from '../store/watch-cache';
import { controllerContext } from '../store/system-context';

export interface TaintEvictionOptions {
  now: () => Date;
  log: Logger;
  /** Eviction timers (tolerationSeconds); default real ones. */
  timers?: Timers;
  /** The process's shared informers; default a factory of its own over store and cache. */
  informers?: StoreInformers;
  /** Where TaintManagerEviction events go (reporting component taint-eviction-controller); default none. */
  recorder?: EventRecorder;
}

const ctx = controllerContext('taint-eviction-controller');

/**
 * Upstream GetMatchingTolerations: whether every taint is tolerated, and for each taint the first
 * toleration that tolerates it.
 */
export function matchingTolerations(taints: readonly Taint[], tolerations: readonly Toleration[]): { all: boolean; used: Toleration[] } {
  const used: Toleration[] = [];
  for (const taint of taints) {
    const t = tolerations.find((x) => tolerates(x, taint));
    if (!t) return { all: false, used: [] };
    used.push(t);
  }
  return { all: true, used };
}

/**
 * Upstream getMinTolerationTime, in seconds: the smallest tolerationSeconds among the tolerations
 * in use (≤ 0 counts as 0); -1 when none sets one (tolerated forever); 0 when none are in use.
 */
export function minTolerationSeconds(used: readonly Toleration[]): number {
  if (used.length === 0) return 0;
  let min = Infinity;
  for (const t of used) {
    if (t.tolerationSeconds === undefined) continue;
    if (t.tolerationSeconds <= 0) return 0;
    min = Math.min(min, t.tolerationSeconds);
  }
  return min === Infinity ? -1 : min;
}

interface Scheduled {
  /** When the controller first saw the pod under a tolerated NoExecute taint (ms, own clock). */
  startMs: number;
  triggerMs: number;
  cancel: () => void;
}

/**
 * NoExecute taint-based eviction (spec 3 "NoExecute taint present → pods lacking a toleration
 * evicted"; upstream's taint eviction controller): a pod bound to a node with NoExecute taints is
 * deleted at once when some taint is not tolerated; when all are, it is deleted after the smallest
 * tolerationSeconds of the tolerations used (counted, as upstream, from when the controller first
 * saw it so), and never when none of them sets tolerationSeconds. The taint going away, or the
 * tolerations growing, cancels a pending eviction. Before deleting, the pod gets condition
 * DisruptionTarget=True reason DeletionByTaintManager, as upstream; the delete itself is an
 * ordinary graceful one (the node agent finishes it).
 */
export class TaintEvictionController {
  /** NoExecute taints per node name. */
  private readonly taints = new Map<string, Taint[]>();
  /** Bound pods by key, and keys by node. */
  private readonly pods = new Map<string, KObject>();
  private readonly byNode = new Map<string, Set<string>>();
  private readonly scheduled = new Map<string, Scheduled>();
  private work = new WorkQueue();
  private readonly timers: Timers;
  private readonly informers: StoreInformers;

  constructor(
    private readonly store: ObjectStore,
    cache: WatchCache,
    private readonly types: ResourceRegistry,
    private readonly opts: TaintEvictionOptions,
  ) {
    this.timers = opts.timers ?? realTimers;
    this.informers = opts.informers ?? new StoreInformers(store, cache, { log: opts.log });
  }

  /** Watches nodes and pods and evicts until the signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    this.work = new WorkQueue();
    const handler = {
      upsert: (t: ResourceType, obj: KObject) => (t.resource === 'nodes' ? this.upsertNode(obj) : this.upsertPod(obj)),
      remove: (t: ResourceType, obj: KObject) => (t.resource === 'nodes' ? this.removeNode(obj) : this.removePod(obj)),
    };
    for (const t of [this.type('nodes'), this.type('pods')]) this.informers.informer(t).addEventHandler(typedHandler(t, handler), { signal });
    this.informers.start(signal);
    try {
      await runWorkers(this.work, (key) => this.evictIfDue(key), signal, { onError: (key, err) => this.opts.log.warn({ err, pod: key }, 'taint eviction failed; retrying') });
    } finally {
      for (const s of this.scheduled.values()) s.cancel();
      this.scheduled.clear();
    }
  }

  private upsertNode(node: KObject): void {
    const name = node.metadata.name ?? '';
    const before = JSON.stringify(this.taints.get(name) ?? []);
    const next = nodeTaints(node).filter((t) => t.effect === 'NoExecute');
    if (next.length > 0) this.taints.set(name, next);
    else this.taints.delete(name);
    if (JSON.stringify(next) !== before) for (const key of this.byNode.get(name) ?? []) this.reconcile(key);
  }

  private removeNode(node: KObject): void {
    const name = node.metadata.name ?? '';
    if (!this.taints.delete(name)) return;
    for (const key of this.byNode.get(name) ?? []) this.reconcile(key);
  }

  private upsertPod(pod: KObject): void {
    const key = podKey(pod);
    this.unindex(key);
    const node = strAt(pod, 'spec', 'nodeName');
    const phase = strAt(pod, 'status', 'phase');
    if (node && phase !== 'Succeeded' && phase !== 'Failed') {
      this.pods.set(key, pod);
      let keys = this.byNode.get(node);
      if (!keys) this.byNode.set(node, (keys = new Set()));
      keys.add(key);
    }
    this.reconcile(key);
  }

  private removePod(pod: KObject): void {
    const key = podKey(pod);
    this.unindex(key);
    this.reconcile(key);
  }

  private unindex(key: string): void {
    const old = this.pods.get(key);
    if (!old) return;
    this.pods.delete(key);
    const node = strAt(old, 'spec', 'nodeName');
    const keys = this.byNode.get(node);
    keys?.delete(key);
    if (keys?.size === 0) this.byNode.delete(node);
  }

  /**
   * When the pod should go, on the controller's clock: 'never', 'now', or a time (ms). Starts the
   * count for a pod newly under tolerated taints.
   */
  private deadline(key: string): 'never' | 'now' | number {
    const pod = this.pods.get(key);
    if (!pod || pod.metadata.deletionTimestamp) return 'never';
    const taints = this.taints.get(strAt(pod, 'spec', 'nodeName')) ?? [];
    if (taints.length === 0) return 'never';
    const { all, used } = matchingTolerations(taints, podTolerations(pod));
    if (!all) return 'now';
    const min = minTolerationSeconds(used);
    if (min < 0) return 'never';
    const start = this.scheduled.get(key)?.startMs ?? this.opts.now().getTime();
    return start + min * 1000;
  }

  /** Brings the pod's scheduled eviction in line with its node's taints and its tolerations. */
  private reconcile(key: string): void {
    const when = this.deadline(key);
    const existing = this.scheduled.get(key);
    if (when === 'never' || when === 'now') {
      existing?.cancel();
      this.scheduled.delete(key);
      // Upstream cancelWorkWithEvent: a pending eviction called off while the pod stays (a pod that went says nothing).
      const pod = this.pods.get(key);
      if (existing && when === 'never' && pod && !pod.metadata.deletionTimestamp) this.event(key, 'Cancelling deletion of Pod');
      if (when === 'now') this.work.add(key);
      return;
    }
    const now = this.opts.now().getTime();
    if (when <= now) {
      // Due already (tolerationSeconds 0, or lowered past the time served): evict now, keeping the start.
      existing?.cancel();
      this.scheduled.set(key, { startMs: existing?.startMs ?? now, triggerMs: when, cancel: () => undefined });
      this.work.add(key);
      return;
    }
    if (existing?.triggerMs === when) return;
    existing?.cancel();
    const cancel = this.timers.after(Math.max(0, when - now), () => this.work.add(key));
    this.scheduled.set(key, { startMs: existing?.startMs ?? now, triggerMs: when, cancel });
    this.opts.log.debug({ pod: key, evictInMs: when - now }, 'pod tolerates NoExecute taints for a while; eviction scheduled');
  }

  /** Deletes the pod if, looking again now, its time has come. */
  private async evictIfDue(key: string): Promise<void> {
    const when = this.deadline(key);
    if (when === 'never') {
      // The pod went while its timer ran (e.g. deleted during a relist): drop the stale entry.
      this.scheduled.get(key)?.cancel();
      this.scheduled.delete(key);
      return;
    }
    if (when !== 'now' && when > this.opts.now().getTime()) return;
    const pod = this.pods.get(key)!;
    const podType = this.type('pods');
    const ns = pod.metadata.namespace ?? '';
    const name = pod.metadata.name ?? '';
    // Once per eviction: our own condition write brings the pod back through the queue.
    const marked = podCondition(pod, 'DisruptionTarget')?.reason === 'DeletionByTaintManager';
    if (!marked) this.event(key, 'Marking for deletion Pod');
    try {
      await this.store.update(
        podType,
        ns,
        name,
        (fresh) => {
          if (!fresh || fresh.metadata.uid !== pod.metadata.uid) return fresh ?? pod;
          setPodCondition(fresh, { type: 'DisruptionTarget', status: 'True', reason: 'DeletionByTaintManager', message: 'Taint manager: deleting due to NoExecute taint' }, this.opts.now());
          delete fresh.metadata.resourceVersion;
          return fresh;
        },
        { ...ctx, subresource: 'status' },
      );
      await this.store.delete(podType, ns, name, { preconditions: { uid: pod.metadata.uid } }, ctx);
    } catch (err) {
      // Gone, or replaced by a new pod of that name: nothing to evict.
      if (isNotFound(err) || isConflict(err) || isAlreadyExists(err)) return;
      throw err;
    }
    this.scheduled.get(key)?.cancel();
    this.scheduled.delete(key);
    this.opts.log.info({ pod: key, node: strAt(pod, 'spec', 'nodeName') }, 'evicting pod: NoExecute taint not tolerated');
  }

  /** Upstream's TaintManagerEviction event: about the pod by namespace and name only, "<what> ns/name". */
  private event(key: string, what: string): void {
    const [namespace, name] = key.split('/', 2);
    const ref: EventObjectRef = { apiVersion: 'v1', kind: 'Pod', namespace, name };
    (this.opts.recorder ?? NOOP_RECORDER).event(ref, 'Normal', 'TaintManagerEviction', `${what} ${key}`);
  }

  private type(resource: 'nodes' | 'pods'): ResourceType {
    const t = this.types.lookup('', 'v1', resource);
    if (!t) throw new Error(`${resource} type not registered`);
    return t;
  }
}
