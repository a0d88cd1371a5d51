import { TAINT_UNSCHEDULABLE } from '../api/well-known';
import { get, recs } from '../registry/obj-access';
import { matchesNodeAffinity, NODE_AFFINITY_REASON } from './node-affinity';
import type { NodeInfo, PodInfo } from './node-info';
import { CPU, EPHEMERAL_STORAGE, MEMORY, PODS } from './resources';
import { firstUntolerated, toleratedBy, untoleratedTaintReason } from './taints';

/** One filter plugin: the reasons the node cannot take the pod; [] when it can. */
export type Filter = (pod: PodInfo, node: NodeInfo) => string[];

/** Upstream NodeUnschedulable: a cordoned node takes only pods tolerating its unschedulable taint. */
export const nodeUnschedulable: Filter = (pod, node) => {
  if (get(node.node, 'spec', 'unschedulable') !== true) return [];
  if (toleratedBy(pod.tolerations, { key: TAINT_UNSCHEDULABLE, value: '', effect: 'NoSchedule' })) return [];
  return ['node(s) were unschedulable'];
};

/** Upstream TaintToleration filter: every NoSchedule and NoExecute taint must be tolerated (PreferNoSchedule only scores). */
export const taintToleration: Filter = (pod, node) => {
  const bad = firstUntolerated(node.taints, pod.tolerations, ['NoSchedule', 'NoExecute']);
  return bad ? [untoleratedTaintReason(bad)] : [];
};

/**
 * Only nodes whose Ready condition is True take new pods (the "Ready nodes"). Upstream
 * leaves this to the not-ready and unreachable taints; the reason text is upstream's former
 * CheckNodeCondition predicate's, for nodes not yet tainted.
 */
export const nodeReady: Filter = (_pod, node) => {
  const ready = recs(get(node.node, 'status', 'conditions')).find((c) => c.type === 'Ready');
  return ready?.status === 'True' ? [] : ['node(s) were not ready'];
};

/** Upstream NodeAffinity filter: spec.nodeSelector and required node affinity. */
export const nodeAffinity: Filter = (pod, node) => (matchesNodeAffinity(pod.pod, node.node) ? [] : [NODE_AFFINITY_REASON]);

/**
 * Upstream NodeResourcesFit (fitsRequest): one more pod within allocatable pods ("Too many pods"),
 * and each non-zero request within allocatable minus what the node's pods already request
 * ("Insufficient <resource>", every short resource listed). A resource the node does not offer
 * (an extended resource it lacks) has nothing free.
 */
export const resourcesFit: Filter = (pod, node) => {
  const out: string[] = [];
  if ((node.allocatable[PODS] ?? 0) < node.podCount + 1) out.push('Too many pods');
  const free = (r: string) => (node.allocatable[r] ?? 0) - (node.requested[r] ?? 0);
  for (const r of [CPU, MEMORY, EPHEMERAL_STORAGE]) {
    const want = pod.requests[r] ?? 0;
    if (want > 0 && want > free(r)) out.push(`Insufficient ${r}`);
  }
  for (const [r, want] of Object.entries(pod.requests).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (r === CPU || r === MEMORY || r === EPHEMERAL_STORAGE || r === PODS || want <= 0) continue;
    if (want > free(r)) out.push(`Insufficient ${r}`);
  }
  return out;
};

/** The filters in upstream's plugin order (NodeReady placed after the taint check it backs up). */
export const FILTERS: readonly Filter[] = [nodeUnschedulable, taintToleration, nodeReady, nodeAffinity, resourcesFit];

/** Reasons from the first filter that rejects the node (as upstream stops at the first failing plugin); [] when the pod fits. */
export function filterNode(pod: PodInfo, node: NodeInfo, filters: readonly Filter[] = FILTERS): string[] {
  for (const f of filters) {
    const reasons = f(pod, node);
    if (reasons.length > 0) return reasons;
  }
  return [];
}

/**
 * Upstream FitError.Error(): "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had
 * untolerated taint {dedicated: gpu}." — a histogram of reasons over the nodes, each "count
 * reason", sorted as strings. With no nodes at all upstream says "no nodes available to schedule pods".
 */
export function fitErrorMessage(numNodes: number, reasonsByNode: ReadonlyMap<string, readonly string[]>): string {
  if (numNodes === 0) return 'no nodes available to schedule pods';
  const histogram = new Map<string, number>();
  for (const reasons of reasonsByNode.values()) for (const r of new Set(reasons)) histogram.set(r, (histogram.get(r) ?? 0) + 1);
  const parts = [...histogram].map(([r, n]) => `${n} ${r}`).sort();
  let msg = `0/${numNodes} nodes are available:`;
  if (parts.length > 0) msg += ` ${parts.join(', ')}.`;
  return msg;
}
