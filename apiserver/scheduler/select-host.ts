import type { NodeInfo, PodInfo } from './node-info';
import { scoreNodes } from './scoring';

/**
 * The node to bind to: filters every node, scores the feasible ones and takes the highest score
 * (ties go to the first in the order given, i.e. by name, where upstream picks at random).
 * Returns the rejection reasons per node when none fits.
 */
export function selectHost(
  pod: PodInfo,
  nodes: readonly NodeInfo[],
  filter: (pod: PodInfo, node: NodeInfo) => string[],
): { node: NodeInfo; score: number } | { reasons: Map<string, string[]> } {
  const feasible: NodeInfo[] = [];
  const reasons = new Map<string, string[]>();
  for (const n of nodes) {
    const r = filter(pod, n);
    if (r.length === 0) feasible.push(n);
    else reasons.set(n.name, r);
  }
  if (feasible.length === 0) return { reasons };
  const scores = scoreNodes(pod, feasible);
  let best = 0;
  for (let i = 1; i < feasible.length; i++) if (scores[i] > scores[best]) best = i;
  return { node: feasible[best], score: scores[best] };
}
