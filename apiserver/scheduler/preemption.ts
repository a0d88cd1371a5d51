import type { KObject } from '../api/types';
import { get, rec, strAt } from '../registry/obj-access';
import { pdbCoversPod } from '../registry/types/pdb-status';
import type { NodeInfo, PodInfo } from './node-info';
import type { Resources } from './resources';

/** A pod on a node as preemption weighs it: the object and what it holds there. */
export interface NodePod {
  pod: KObject;
  requests: Resources;
  nonZero: Resources;
}

/** A node where evicting victims makes room for the preemptor. */
export interface Candidate {
  node: string;
  /** Most important first (upstream MoreImportantPod order). */
  victims: KObject[];
  /** How many victims evicting would violate a PodDisruptionBudget. */
  pdbViolations: number;
}

/** Upstream corev1helpers.PodPriority: spec.priority, 0 when unset. */
export function podPriority(pod: KObject): number {
  const p = get(pod, 'spec', 'priority');
  return typeof p === 'number' ? p : 0;
}

/** status.startTime in ms; a pod not started yet counts as started now (upstream GetPodStartTime falls back to now). */
function startMs(pod: KObject, nowMs: number): number {
  const t = Date.parse(strAt(pod, 'status', 'startTime'));
  return Number.isFinite(t) ? t : nowMs;
}

/** Upstream MoreImportantPod: higher priority first, then the one started earlier. */
export function moreImportant(a: KObject, b: KObject, nowMs: number): number {
  const d = podPriority(b) - podPriority(a);
  return d !== 0 ? d : startMs(a, nowMs) - startMs(b, nowMs);
}

/**
 * Upstream PodEligibleToPreemptOthers: not with preemptionPolicy Never, nor while the node it was
 * nominated to still has lower-priority pods terminating (the room being made there is its own).
 */
export function eligibleToPreempt(pod: KObject, podsOn: (node: string) => readonly NodePod[]): boolean {
  if (strAt(pod, 'spec', 'preemptionPolicy') === 'Never') return false;
  const nominated = strAt(pod, 'status', 'nominatedNodeName');
  if (!nominated) return true;
  const prio = podPriority(pod);
  return !podsOn(nominated).some((p) => p.pod.metadata.deletionTimestamp && podPriority(p.pod) < prio);
}

/** The node as if these pods were added to it (sign 1) or removed from it (-1). */
export function adjusted(node: NodeInfo, pods: readonly NodePod[], sign: 1 | -1): NodeInfo {
  const requested = { ...node.requested };
  const nonZeroRequested = { ...node.nonZeroRequested };
  for (const p of pods) {
    for (const [k, v] of Object.entries(p.requests)) requested[k] = (requested[k] ?? 0) + sign * v;
    for (const [k, v] of Object.entries(p.nonZero)) nonZeroRequested[k] = (nonZeroRequested[k] ?? 0) + sign * v;
  }
  return { ...node, requested, nonZeroRequested, podCount: node.podCount + sign * pods.length };
}

/**
 * Upstream filterPodsWithPDBViolation: walking the pods in the order given, each takes one of the
 * disruptions every budget covering it allows (status.disruptionsAllowed; pods the budget already
 * counts as disrupted take none); a pod for which some budget goes below zero violates it. Differs:
 * an empty budget selector covers every pod of its namespace (policy/v1, as eviction reads it),
 * where upstream's preemption treats it as covering none.
 */
export function splitByBudgets(pods: readonly NodePod[], pdbs: readonly KObject[]): { violating: NodePod[]; nonViolating: NodePod[] } {
  const allowed = pdbs.map((b) => {
    const n = get(b, 'status', 'disruptionsAllowed');
    return typeof n === 'number' ? n : 0;
  });
  const violating: NodePod[] = [];
  const nonViolating: NodePod[] = [];
  for (const p of pods) {
    let violates = false;
    pdbs.forEach((b, i) => {
      if (!pdbCoversPod(b, p.pod)) return;
      if (rec(get(b, 'status', 'disruptedPods'))?.[p.pod.metadata.name ?? ''] !== undefined) return;
      if (--allowed[i] < 0) violates = true;
    });
    (violates ? violating : nonViolating).push(p);
  }
  return { violating, nonViolating };
}

/**
 * Upstream SelectVictimsOnNode: remove every lower-priority pod; if the preemptor still does not
 * fit, the node is no candidate. Otherwise give pods back, most important first, budget-violating
 * ones before the others, keeping each the preemptor still fits beside; the rest are the victims.
 */
export function selectVictimsOnNode(
  preemptor: PodInfo,
  node: NodeInfo,
  pods: readonly NodePod[],
  pdbs: readonly KObject[],
  fits: (pod: PodInfo, node: NodeInfo) => boolean,
  nowMs: number,
): Candidate | undefined {
  const prio = podPriority(preemptor.pod);
  const lower = pods.filter((p) => podPriority(p.pod) < prio).sort((a, b) => moreImportant(a.pod, b.pod, nowMs));
  let info = adjusted(node, lower, -1);
  if (!fits(preemptor, info)) return undefined;
  const { violating, nonViolating } = splitByBudgets(lower, pdbs);
  const victims: NodePod[] = [];
  let pdbViolations = 0;
  const reprieve = (p: NodePod): boolean => {
    const back = adjusted(info, [p], 1);
    if (fits(preemptor, back)) {
      info = back;
      return true;
    }
    victims.push(p);
    return false;
  };
  for (const p of violating) if (!reprieve(p)) pdbViolations++;
  for (const p of nonViolating) reprieve(p);
  const ordered = victims.map((v) => v.pod).sort((a, b) => moreImportant(a, b, nowMs));
  return { node: node.name, victims: ordered, pdbViolations };
}

/**
 * Upstream pickOneNodeForPreemption: a node needing no victims at once; else the fewest budget
 * violations, then the lowest highest-victim priority, then the smallest sum of victim priorities
 * (each offset by 2^31 so negative priorities count as upstream counts them), then the fewest
 * victims, then the latest start among each node's highest-priority victims' earliest; then the first.
 */
export function pickOneNode(candidates: readonly Candidate[], nowMs: number): Candidate | undefined {
  const none = candidates.find((c) => c.victims.length === 0);
  if (none) return none;
  let left = [...candidates];
  const keepMin = (score: (c: Candidate) => number) => {
    const best = Math.min(...left.map(score));
    left = left.filter((c) => score(c) === best);
  };
  keepMin((c) => c.pdbViolations);
  keepMin((c) => podPriority(c.victims[0]));
  keepMin((c) => c.victims.reduce((s, v) => s + podPriority(v) + 2 ** 31, 0));
  keepMin((c) => c.victims.length);
  keepMin((c) => -earliestStartOfHighest(c, nowMs));
  return left[0];
}

function earliestStartOfHighest(c: Candidate, nowMs: number): number {
  const top = podPriority(c.victims[0]);
  return Math.min(...c.victims.filter((v) => podPriority(v) === top).map((v) => startMs(v, nowMs)));
}

/** Every candidate node for the preemptor, in the order of nodes given. */
export function findCandidates(
  preemptor: PodInfo,
  nodes: readonly NodeInfo[],
  podsOn: (node: string) => readonly NodePod[],
  pdbs: readonly KObject[],
  fits: (pod: PodInfo, node: NodeInfo) => boolean,
  nowMs: number,
): Candidate[] {
  const out: Candidate[] = [];
  for (const n of nodes) {
    const c = selectVictimsOnNode(preemptor, n, podsOn(n.name), pdbs, fits, nowMs);
    if (c) out.push(c);
  }
  return out;
}
