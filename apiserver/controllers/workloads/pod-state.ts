import type { KObject } from '../../api/types';

/**
 * Pod predicates the workload controllers share (upstream pkg/api/v1/pod and
 * pkg/controller/controller_utils.go): active, ready, available, and the order in which a
 * controller scaling down picks the pods to delete.
 */

type Condition = { type?: string; status?: string; lastTransitionTime?: string };

function conditions(pod: KObject): Condition[] {
  const c = (pod.status as { conditions?: unknown } | undefined)?.conditions;
  return Array.isArray(c) ? (c as Condition[]) : [];
}

export function podPhase(pod: KObject): string {
  const p = (pod.status as { phase?: unknown } | undefined)?.phase;
  return typeof p === 'string' ? p : '';
}

/** Upstream IsPodActive: not Succeeded, not Failed, not being deleted. */
export function isPodActive(pod: KObject): boolean {
  const phase = podPhase(pod);
  return phase !== 'Succeeded' && phase !== 'Failed' && !pod.metadata.deletionTimestamp;
}

/** Upstream IsPodTerminal. */
export function isPodTerminal(pod: KObject): boolean {
  const phase = podPhase(pod);
  return phase === 'Succeeded' || phase === 'Failed';
}

function readyCondition(pod: KObject): Condition | undefined {
  return conditions(pod).find((c) => c.type === 'Ready');
}

/** Upstream IsPodReady: the Ready condition is True. */
export function isPodReady(pod: KObject): boolean {
  return readyCondition(pod)?.status === 'True';
}

/**
 * Upstream IsPodAvailable: ready, and for at least minReadySeconds (since the Ready condition's
 * lastTransitionTime) when that is positive. nowMs is the controller's injected clock.
 */
export function isPodAvailable(pod: KObject, minReadySeconds: number, nowMs: number): boolean {
  const ready = readyCondition(pod);
  if (ready?.status !== 'True') return false;
  if (minReadySeconds <= 0) return true;
  const since = ready.lastTransitionTime ? Date.parse(ready.lastTransitionTime) : NaN;
  return Number.isFinite(since) && since + minReadySeconds * 1000 <= nowMs;
}

/**
 * Milliseconds until a ready pod becomes available (0 when it is or cannot be); a controller
 * requeues its owner after that long, as upstream's ReplicaSet controller does with minReadySeconds.
 */
export function msUntilAvailable(pod: KObject, minReadySeconds: number, nowMs: number): number {
  const ready = readyCondition(pod);
  if (ready?.status !== 'True' || minReadySeconds <= 0 || !ready.lastTransitionTime) return 0;
  const at = Date.parse(ready.lastTransitionTime) + minReadySeconds * 1000;
  return Number.isFinite(at) && at > nowMs ? at - nowMs : 0;
}

function restarts(pod: KObject): number {
  const s = (pod.status as { containerStatuses?: unknown } | undefined)?.containerStatuses;
  if (!Array.isArray(s)) return 0;
  let max = 0;
  for (const c of s as Array<{ restartCount?: unknown }>) if (typeof c.restartCount === 'number' && c.restartCount > max) max = c.restartCount;
  return max;
}

const PHASE_ORDER: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };

function timeMs(t: string | undefined): number {
  const ms = t ? Date.parse(t) : NaN;
  return Number.isFinite(ms) ? ms : Number.NEGATIVE_INFINITY;
}

/**
 * Upstream ActivePodsWithRanks.Less: negative when `a` should be deleted before `b`. Earlier in
 * the order are: unassigned pods, then Pending before Unknown before Running, not ready before
 * ready, higher rank (upstream: pods doubled up on one node, counted by the caller) before lower,
 * ready for less time before more, more container restarts before fewer, newer before older.
 * Upstream's LogarithmicScaleDown (on by default) compares ready times and ages in log2 buckets
 * so pods of similar age tie and the rest of the order decides; we do the same.
 */
export function deletionOrder(a: KObject, b: KObject, rank: { a?: number; b?: number } = {}, nowMs = Date.now()): number {
  const aNode = !!(a.spec as { nodeName?: unknown } | undefined)?.nodeName;
  const bNode = !!(b.spec as { nodeName?: unknown } | undefined)?.nodeName;
  if (aNode !== bNode) return aNode ? 1 : -1;
  const ap = PHASE_ORDER[podPhase(a)] ?? 0;
  const bp = PHASE_ORDER[podPhase(b)] ?? 0;
  if (ap !== bp) return ap - bp;
  const ar = isPodReady(a);
  const br = isPodReady(b);
  if (ar !== br) return ar ? 1 : -1;
  const ra = rank.a ?? 0;
  const rb = rank.b ?? 0;
  if (ra !== rb) return rb - ra;
  if (ar && br) {
    const d = log2Bucket(nowMs - timeMs(readyCondition(a)?.lastTransitionTime)) - log2Bucket(nowMs - timeMs(readyCondition(b)?.lastTransitionTime));
    if (d !== 0) return d;
  }
  const rs = restarts(b) - restarts(a);
  if (rs !== 0) return rs;
  // Newer first; a pod with no creation time counts as the newest (upstream: empty < newer < older).
  const ca = createdMs(a, nowMs);
  const cb = createdMs(b, nowMs);
  return log2Bucket(nowMs - ca) - log2Bucket(nowMs - cb) || cb - ca;
}

function createdMs(pod: KObject, nowMs: number): number {
  const t = timeMs(pod.metadata.creationTimestamp);
  return Number.isFinite(t) ? t : nowMs;
}

/** Upstream's logarithmic bucket of a duration in whole seconds (0 for under a second; infinite for unknown). */
function log2Bucket(ms: number): number {
  if (!Number.isFinite(ms)) return Number.MAX_SAFE_INTEGER;
  const s = Math.floor(ms / 1000);
  return s <= 0 ? 0 : Math.floor(Math.log2(s)) + 1;
}
