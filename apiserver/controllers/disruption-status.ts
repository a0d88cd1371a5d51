import type { KObject, OwnerReference } from '../api/types';
import { rec } from '../registry/obj-access';
import { podCondition } from '../registry/types/pod-conditions';
import { disruptedPods } from '../registry/types/pdb-status';

/**
 * The arithmetic of the disruption controller (upstream pkg/controller/disruption): how many pods
 * a budget expects and how many must stay healthy, which pods count as healthy, and which
 * entries of status.disruptedPods are still waited for.
 */

/** Upstream DeletionTimeout: how long an eviction recorded in status.disruptedPods waits for the pod to start terminating. */
export const DELETION_TIMEOUT_MS = 2 * 60_000;

/** A controller of pods and its desired scale (upstream controllerAndScale). */
export interface ControllerScale {
  uid: string;
  replicas: number;
}

/**
 * The scale of the controller a pod's controllerRef names (its spec.replicas; a Deployment's for
 * a ReplicaSet it controls), or null when that controller does not exist (any more) with that uid.
 * Rejects when the reference cannot be resolved to a type with a scale.
 */
export type ScaleFinder = (ref: OwnerReference, namespace: string) => Promise<ControllerScale | null>;

export interface ExpectedPods {
  expectedCount: number;
  desiredHealthy: number;
  /** Pods the budget selects that no controller owns (their scale is unknown). */
  unmanagedPods: string[];
}

/**
 * Upstream intstr.GetScaledValueFromIntOrPercent with roundUp: an integer as it is; "N%" as
 * ceil(N × total / 100). Anything else rejects with upstream's message.
 */
export function scaledValue(v: unknown, total: number): number {
  if (typeof v === 'number') return v;
  const m = typeof v === 'string' ? /^(-?\d+)%$/.exec(v) : null;
  if (!m) throw new Error(`invalid value for IntOrString: invalid type: ${typeof v === 'string' ? 'string is not a percentage' : 'neither int nor percentage'}`);
  return Math.ceil((Number(m[1]) * total) / 100);
}

function given(v: unknown): boolean {
  return v !== undefined && v !== null;
}

/**
 * Upstream getExpectedPodCount: with maxUnavailable, or a percentage minAvailable, the expected
 * count is the sum of the scales of the pods' controllers; with an integer minAvailable it is the
 * number of pods selected. desiredHealthy follows from it, never below 0.
 */
export async function expectedPodCount(pdb: KObject, pods: readonly KObject[], find: ScaleFinder): Promise<ExpectedPods> {
  const spec = rec(pdb.spec) ?? {};
  if (given(spec.maxUnavailable)) {
    const { expectedCount, unmanagedPods } = await expectedScale(pods, find);
    const desiredHealthy = Math.max(0, expectedCount - scaledValue(spec.maxUnavailable, expectedCount));
    return { expectedCount, desiredHealthy, unmanagedPods };
  }
  if (typeof spec.minAvailable === 'number') return { expectedCount: pods.length, desiredHealthy: spec.minAvailable, unmanagedPods: [] };
  if (given(spec.minAvailable)) {
    const { expectedCount, unmanagedPods } = await expectedScale(pods, find);
    return { expectedCount, desiredHealthy: scaledValue(spec.minAvailable, expectedCount), unmanagedPods };
  }
  return { expectedCount: 0, desiredHealthy: 0, unmanagedPods: [] };
}

/**
 * Upstream getExpectedScale: the sum, over the distinct controllers of the pods, of their scale.
 * Pods without a controller are listed as unmanaged and left out; a controller that cannot be
 * found fails the computation ("found no controllers for pod").
 */
export async function expectedScale(pods: readonly KObject[], find: ScaleFinder): Promise<{ expectedCount: number; unmanagedPods: string[] }> {
  const scales = new Map<string, number>();
  const seenRefs = new Set<string>();
  const unmanagedPods: string[] = [];
  for (const pod of pods) {
    const ref = pod.metadata.ownerReferences?.find((r) => r.controller === true);
    if (!ref) {
      unmanagedPods.push(pod.metadata.name ?? '');
      continue;
    }
    if (seenRefs.has(ref.uid)) continue;
    const found = await find(ref, pod.metadata.namespace ?? '');
    if (!found) throw new Error(`found no controllers for pod "${pod.metadata.name ?? ''}"`);
    seenRefs.add(ref.uid);
    scales.set(found.uid, found.replicas);
  }
  let expectedCount = 0;
  for (const n of scales.values()) expectedCount += n;
  return { expectedCount, unmanagedPods };
}

function isReady(pod: KObject): boolean {
  return podCondition(pod, 'Ready')?.status === 'True';
}

/** Upstream countHealthyPods: ready pods, not terminating and not recorded as disrupted within the deletion timeout. */
export function countHealthyPods(pods: readonly KObject[], disrupted: Readonly<Record<string, string>>, nowMs: number): number {
  let healthy = 0;
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue;
    const at = disrupted[pod.metadata.name ?? ''];
    if (at !== undefined && Date.parse(at) + DELETION_TIMEOUT_MS > nowMs) continue;
    if (isReady(pod)) healthy++;
  }
  return healthy;
}

export interface DisruptedPodMap {
  /** The entries still waited for: selected pods not yet terminating whose deletion timeout has not passed. */
  disrupted: Record<string, string>;
  /** When the earliest of them times out (ms since the epoch): the budget is computed again then. */
  recheckAtMs?: number;
  /** Pods whose eviction was granted but which were not deleted in time (upstream's NotDeleted event). */
  notDeleted: KObject[];
}

/**
 * Upstream buildDisruptedPodMap: drops entries of pods that are gone, already terminating, or
 * past the deletion timeout (reported as not deleted), and says when to look again.
 */
export function buildDisruptedPodMap(pods: readonly KObject[], pdb: KObject, nowMs: number): DisruptedPodMap {
  const recorded = disruptedPods(pdb);
  const out: DisruptedPodMap = { disrupted: {}, notDeleted: [] };
  for (const pod of pods) {
    const name = pod.metadata.name ?? '';
    if (pod.metadata.deletionTimestamp || recorded[name] === undefined) continue;
    const expected = Date.parse(recorded[name]) + DELETION_TIMEOUT_MS;
    // Upstream drops it once the timeout is strictly before now; at the very instant it is
    // dropped here too, so a recheck due now finds it gone instead of scheduling itself again.
    if (expected <= nowMs) {
      out.notDeleted.push(pod);
      continue;
    }
    out.disrupted[name] = recorded[name];
    if (out.recheckAtMs === undefined || expected < out.recheckAtMs) out.recheckAtMs = expected;
  }
  return out;
}
