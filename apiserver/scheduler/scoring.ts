import type { NodeInfo, PodInfo } from './node-info';
import { CPU, MEMORY } from './resources';
import { toleratedBy, type Toleration } from './taints';

/** Upstream framework.MaxNodeScore. */
export const MAX_NODE_SCORE = 100;
/** Upstream default plugin weights: NodeResourcesFit 1, TaintToleration 3. */
export const FIT_WEIGHT = 1;
export const TAINT_WEIGHT = 3;

/**
 * Upstream NodeResourcesFit LeastAllocated over cpu and memory (weight 1 each): per resource
 * (allocatable − requested) × 100 / allocatable, where requested counts the node's pods and this
 * one with non-zero defaults; 0 when the node offers none or is over-committed. Integer maths, as upstream.
 */
export function leastAllocatedScore(pod: PodInfo, node: NodeInfo): number {
  let sum = 0;
  let weights = 0;
  for (const r of [CPU, MEMORY]) {
    const capacity = node.allocatable[r] ?? 0;
    const requested = (node.nonZeroRequested[r] ?? 0) + (pod.nonZero[r] ?? 0);
    const score = capacity === 0 || requested > capacity ? 0 : Math.floor(((capacity - requested) * MAX_NODE_SCORE) / capacity);
    sum += score;
    weights += 1;
  }
  return Math.floor(sum / weights);
}

/** Upstream TaintToleration Score: how many PreferNoSchedule taints the pod does not tolerate (tolerations with effect '' or PreferNoSchedule count). */
export function intolerablePreferNoSchedule(pod: PodInfo, node: NodeInfo): number {
  const usable: Toleration[] = pod.tolerations.filter((t) => t.effect === '' || t.effect === 'PreferNoSchedule');
  return node.taints.filter((t) => t.effect === 'PreferNoSchedule' && !toleratedBy(usable, t)).length;
}

/** Upstream DefaultNormalizeScore(MaxNodeScore, reverse=true): fewer untolerated taints score higher. */
export function normalizeReverse(counts: readonly number[]): number[] {
  const max = Math.max(0, ...counts);
  if (max === 0) return counts.map(() => MAX_NODE_SCORE);
  return counts.map((c) => MAX_NODE_SCORE - Math.floor((MAX_NODE_SCORE * c) / max));
}

/** Weighted total per feasible node, in the order given. */
export function scoreNodes(pod: PodInfo, nodes: readonly NodeInfo[]): number[] {
  const taint = normalizeReverse(nodes.map((n) => intolerablePreferNoSchedule(pod, n)));
  return nodes.map((n, i) => FIT_WEIGHT * leastAllocatedScore(pod, n) + TAINT_WEIGHT * taint[i]);
}
