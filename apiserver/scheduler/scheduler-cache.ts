import { isDeepStrictEqual } from 'node:util';
import type { KObject } from '../api/types';
import { get, recs, strAt } from '../registry/obj-access';
import type { ResourceType } from '../registry/resource-type';
import type { TypedHandler } from '../store/list-watch';
import type { NodeInfo } from './node-info';
import type { NodePod } from './preemption';
import { nodeAllocatable, podRequests, type Resources } from './resources';
import { nodeTaints, type Taint } from './taints';

/** What the scheduler hears from its cache. Callbacks must not throw. */
export interface CacheEvents {
  /** A pod was added or changed (prev is the version the cache held before), or removed (pod undefined). */
  podChanged(key: string, pod: KObject | undefined, prev: KObject | undefined): void;
  /** Something that may let an unschedulable pod fit: a node added or changed in what scheduling reads, or a node's pod gone. */
  clusterChanged(): void;
}

interface CachedNode {
  node: KObject;
  allocatable: Resources;
  taints: Taint[];
}

interface CachedPod {
  pod: KObject;
  /** The node whose resources the pod holds; '' when it holds none (unbound or finished). */
  holds: string;
  requests: Resources;
  nonZero: Resources;
}

interface Usage {
  requested: Resources;
  nonZero: Resources;
  count: number;
}

/** "namespace/name", the scheduler's pod key. */
export function podKey(pod: KObject): string {
  return `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
}

/**
 * The scheduler's in-memory view of nodes and pods (upstream's scheduler cache), fed by an
 * informer per type: per node, the sum of the requests of the non-terminal pods bound to it, kept
 * incrementally. A pod the scheduler just bound is recorded at once (assume) so the next decision
 * counts it before the watch event arrives; older versions of a pod never replace newer ones.
 */
export class SchedulerCache implements TypedHandler {
  private readonly nodes = new Map<string, CachedNode>();
  private sortedNames?: string[];
  private readonly pods = new Map<string, CachedPod>();
  private readonly usage = new Map<string, Usage>();
  /** Keys of the pods holding each node's resources (preemption weighs them). */
  private readonly byNode = new Map<string, Set<string>>();
  /** Pending pods that preemption nominated to a node (status.nominatedNodeName), by key. */
  private readonly nominated = new Map<string, CachedPod>();

  constructor(private readonly events: CacheEvents) {}

  /** Records a listed, added or changed node or pod. */
  upsert(t: ResourceType, obj: KObject): void {
    if (t.resource === 'nodes') this.upsertNode(obj);
    else if (t.resource === 'pods') this.upsertPod(obj);
  }

  /** Drops a deleted node or pod. */
  remove(t: ResourceType, obj: KObject): void {
    const name = obj.metadata.name ?? '';
    if (t.resource === 'nodes') {
      if (this.nodes.delete(name)) this.sortedNames = undefined;
      return;
    }
    if (t.resource !== 'pods') return;
    const key = podKey(obj);
    const prev = this.pods.get(key);
    if (!prev) return;
    this.release(prev);
    this.pods.delete(key);
    this.nominated.delete(key);
    this.events.podChanged(key, undefined, prev.pod);
    if (prev.holds) this.events.clusterChanged();
  }

  /** Records the pod the binding returned, ahead of its watch event. */
  assume(pod: KObject): void {
    this.upsertPod(pod);
  }

  /** The cached pod, if any. */
  pod(key: string): KObject | undefined {
    return this.pods.get(key)?.pod;
  }

  /** The pods holding the node's resources, with what they hold. */
  podsOn(node: string): NodePod[] {
    return [...(this.byNode.get(node) ?? [])].map((k) => this.pods.get(k)!).filter((p) => p !== undefined);
  }

  /** Pending pods nominated to a node by preemption, with their requests. */
  nominatedPods(): NodePod[] {
    return [...this.nominated.values()];
  }

  /** Every node with its usage, ordered by name. */
  nodeInfos(): NodeInfo[] {
    this.sortedNames ??= [...this.nodes.keys()].sort();
    return this.sortedNames.map((name) => {
      const n = this.nodes.get(name)!;
      const u = this.usage.get(name);
      return { node: n.node, name, allocatable: n.allocatable, taints: n.taints, requested: u?.requested ?? {}, nonZeroRequested: u?.nonZero ?? {}, podCount: u?.count ?? 0 };
    });
  }

  private upsertNode(node: KObject): void {
    const name = node.metadata.name ?? '';
    const prev = this.nodes.get(name);
    if (!prev) this.sortedNames = undefined;
    this.nodes.set(name, { node, allocatable: nodeAllocatable(node), taints: nodeTaints(node) });
    if (!prev || !isDeepStrictEqual(schedulingView(prev.node), schedulingView(node))) this.events.clusterChanged();
  }

  private upsertPod(pod: KObject): void {
    const key = podKey(pod);
    const prev = this.pods.get(key);
    if (prev && prev.pod.metadata.uid === pod.metadata.uid && revision(prev.pod) > revision(pod)) return; // stale event after assume
    const phase = strAt(pod, 'status', 'phase');
    const holds = phase === 'Succeeded' || phase === 'Failed' ? '' : strAt(pod, 'spec', 'nodeName');
    // Requests cannot change on a live pod; reuse them unless the pod was replaced.
    const same = prev && prev.pod.metadata.uid === pod.metadata.uid;
    const entry: CachedPod = {
      pod,
      holds,
      requests: same ? prev.requests : podRequests(pod),
      nonZero: same ? prev.nonZero : podRequests(pod, true),
    };
    if (prev) this.release(prev);
    this.hold(entry);
    this.pods.set(key, entry);
    if (!strAt(pod, 'spec', 'nodeName') && strAt(pod, 'status', 'nominatedNodeName') && !pod.metadata.deletionTimestamp) this.nominated.set(key, entry);
    else this.nominated.delete(key);
    this.events.podChanged(key, pod, prev?.pod);
    if (prev?.holds && prev.holds !== holds) this.events.clusterChanged();
  }

  private hold(p: CachedPod): void {
    if (!p.holds) return;
    let u = this.usage.get(p.holds);
    if (!u) this.usage.set(p.holds, (u = { requested: {}, nonZero: {}, count: 0 }));
    add(u.requested, p.requests, 1);
    add(u.nonZero, p.nonZero, 1);
    u.count++;
    let keys = this.byNode.get(p.holds);
    if (!keys) this.byNode.set(p.holds, (keys = new Set()));
    keys.add(podKey(p.pod));
  }

  private release(p: CachedPod): void {
    if (!p.holds) return;
    const u = this.usage.get(p.holds);
    if (!u) return;
    add(u.requested, p.requests, -1);
    add(u.nonZero, p.nonZero, -1);
    if (--u.count === 0) this.usage.delete(p.holds);
    const keys = this.byNode.get(p.holds);
    keys?.delete(podKey(p.pod));
    if (keys?.size === 0) this.byNode.delete(p.holds);
  }
}

function add(into: Resources, r: Resources, sign: 1 | -1): void {
  for (const [k, v] of Object.entries(r)) into[k] = (into[k] ?? 0) + sign * v;
}

function revision(o: KObject): number {
  return Number(o.metadata.resourceVersion ?? 0) || 0;
}

/** The parts of a node the filters read: heartbeats alone do not wake unschedulable pods. */
function schedulingView(node: KObject): unknown {
  return {
    labels: node.metadata.labels ?? {},
    unschedulable: get(node, 'spec', 'unschedulable') === true,
    taints: get(node, 'spec', 'taints') ?? [],
    allocatable: get(node, 'status', 'allocatable') ?? get(node, 'status', 'capacity') ?? {},
    ready: recs(get(node, 'status', 'conditions')).find((c) => c.type === 'Ready')?.status ?? '',
  };
}
