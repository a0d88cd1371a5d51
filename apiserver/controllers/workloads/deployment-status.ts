import { rfc3339 } from '../../api/time';
import type { KObject } from '../../api/types';
import { actualReplicasSum, availableReplicasSum, dspec, maxUnavailable, readyReplicasSum, replicasOf, specReplicasSum } from './deployment-util';

/**
 * A Deployment's status and conditions, after upstream's calculateStatus, syncRolloutStatus and
 * deploymentutil's condition helpers: Available (minimum availability), Progressing (with the
 * progress deadline: ProgressDeadlineExceeded) and ReplicaFailure (copied from a ReplicaSet).
 */

export interface DeploymentCondition {
  type: string;
  status: string;
  lastUpdateTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface DeploymentStatus {
  observedGeneration?: number;
  replicas?: number;
  updatedReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  unavailableReplicas?: number;
  conditions?: DeploymentCondition[];
  collisionCount?: number;
}

export const statusOf = (d: KObject): DeploymentStatus => d.status ?? {};

export const AVAILABLE = 'Available';
export const PROGRESSING = 'Progressing';
export const REPLICA_FAILURE = 'ReplicaFailure';
/** Reasons of the Progressing condition (upstream's constants). */
export const REASON = {
  newRSAvailable: 'NewReplicaSetAvailable',
  rsUpdated: 'ReplicaSetUpdated',
  timedOut: 'ProgressDeadlineExceeded',
  foundNewRS: 'FoundNewReplicaSet',
  newRSCreated: 'NewReplicaSetCreated',
  failedRSCreate: 'ReplicaSetCreateError',
  paused: 'DeploymentPaused',
  resumed: 'DeploymentResumed',
} as const;

export function newCondition(type: string, status: string, reason: string, message: string, nowMs: number): DeploymentCondition {
  const t = rfc3339(new Date(nowMs));
  return { type, status, lastUpdateTime: t, lastTransitionTime: t, reason, message };
}

export function getCondition(s: DeploymentStatus, type: string): DeploymentCondition | undefined {
  return s.conditions?.find((c) => c.type === type);
}

/** Upstream SetDeploymentCondition: same status and reason is no change; same status keeps the transition time. */
export function setCondition(s: DeploymentStatus, c: DeploymentCondition): void {
  const cur = getCondition(s, c.type);
  if (cur && cur.status === c.status && cur.reason === c.reason) return;
  const next = cur && cur.status === c.status ? { ...c, lastTransitionTime: cur.lastTransitionTime } : c;
  s.conditions = [...(s.conditions ?? []).filter((x) => x.type !== c.type), next];
}

export function removeCondition(s: DeploymentStatus, type: string): void {
  if (!s.conditions) return;
  s.conditions = s.conditions.filter((c) => c.type !== type);
  if (s.conditions.length === 0) delete s.conditions;
}

/** progressDeadlineSeconds set (upstream: and not MaxInt32, which means no deadline). */
export function hasProgressDeadline(d: KObject): boolean {
  const p = dspec(d).progressDeadlineSeconds;
  return typeof p === 'number' && p !== 2147483647;
}

/** Upstream calculateStatus: counts summed over the ReplicaSets, and the Available condition. */
export function calculateStatus(all: readonly (KObject | undefined)[], newRS: KObject | undefined, d: KObject, nowMs: number): DeploymentStatus {
  const available = availableReplicasSum(all);
  const cur = statusOf(d);
  const s: DeploymentStatus = {
    observedGeneration: d.metadata.generation ?? 0,
    replicas: actualReplicasSum(all),
    updatedReplicas: actualReplicasSum([newRS]),
    readyReplicas: readyReplicasSum(all),
    availableReplicas: available,
    unavailableReplicas: Math.max(0, specReplicasSum(all) - available),
  };
  if (cur.collisionCount !== undefined) s.collisionCount = cur.collisionCount;
  if (cur.conditions?.length) s.conditions = cur.conditions.map((c) => ({ ...c }));
  if (available >= replicasOf(d) - maxUnavailable(d)) setCondition(s, newCondition(AVAILABLE, 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.', nowMs));
  else setCondition(s, newCondition(AVAILABLE, 'False', 'MinimumReplicasUnavailable', 'Deployment does not have minimum availability.', nowMs));
  return s;
}

/** Upstream DeploymentComplete: every replica updated and available, and the generation observed. */
export function deploymentComplete(d: KObject, s: DeploymentStatus): boolean {
  const r = replicasOf(d);
  return (s.updatedReplicas ?? 0) === r && (s.replicas ?? 0) === r && (s.availableReplicas ?? 0) === r && (s.observedGeneration ?? 0) >= (d.metadata.generation ?? 0);
}

/** Upstream DeploymentProgressing: more updated, fewer old, more ready or more available than the stored status. */
export function deploymentProgressing(d: KObject, s: DeploymentStatus): boolean {
  const old = statusOf(d);
  const oldOld = (old.replicas ?? 0) - (old.updatedReplicas ?? 0);
  const newOld = (s.replicas ?? 0) - (s.updatedReplicas ?? 0);
  return (s.updatedReplicas ?? 0) > (old.updatedReplicas ?? 0) || newOld < oldOld || (s.readyReplicas ?? 0) > (old.readyReplicas ?? 0) || (s.availableReplicas ?? 0) > (old.availableReplicas ?? 0);
}

/** Upstream DeploymentTimedOut: the Progressing condition last updated longer ago than the deadline. */
export function deploymentTimedOut(d: KObject, s: DeploymentStatus, nowMs: number): boolean {
  if (!hasProgressDeadline(d)) return false;
  const c = getCondition(s, PROGRESSING);
  if (!c || c.reason === REASON.newRSAvailable) return false;
  if (c.reason === REASON.timedOut) return true;
  const from = Date.parse(c.lastUpdateTime ?? '');
  return Number.isFinite(from) && from + (dspec(d).progressDeadlineSeconds ?? 0) * 1000 < nowMs;
}

/**
 * Upstream syncRolloutStatus's conditions: with a deadline and not already complete, Progressing
 * becomes True NewReplicaSetAvailable when complete, True ReplicaSetUpdated (its update time
 * moved) when progressing, False ProgressDeadlineExceeded past the deadline; ReplicaFailure
 * mirrors the ReplicaSets' (the new one's first).
 */
export function rolloutConditions(d: KObject, s: DeploymentStatus, newRS: KObject | undefined, all: readonly (KObject | undefined)[], nowMs: number): void {
  if (!hasProgressDeadline(d)) removeCondition(s, PROGRESSING);
  const cur = getCondition(statusOf(d), PROGRESSING);
  const complete = (s.replicas ?? 0) === (s.updatedReplicas ?? 0) && cur?.reason === REASON.newRSAvailable;
  if (hasProgressDeadline(d) && !complete) {
    const what = newRS ? `ReplicaSet "${newRS.metadata.name}"` : `Deployment "${d.metadata.name}"`;
    if (deploymentComplete(d, s)) {
      setCondition(s, newCondition(PROGRESSING, 'True', REASON.newRSAvailable, `${what} has successfully progressed.`, nowMs));
    } else if (deploymentProgressing(d, s)) {
      const c = newCondition(PROGRESSING, 'True', REASON.rsUpdated, `${what} is progressing.`, nowMs);
      if (cur?.status === 'True') c.lastTransitionTime = cur.lastTransitionTime;
      removeCondition(s, PROGRESSING);
      setCondition(s, c);
    } else if (deploymentTimedOut(d, s, nowMs)) {
      setCondition(s, newCondition(PROGRESSING, 'False', REASON.timedOut, `${what} has timed out progressing.`, nowMs));
    }
  }
  const failure = replicaFailure(newRS, all);
  if (failure) setCondition(s, { type: REPLICA_FAILURE, status: failure.status, lastUpdateTime: failure.lastTransitionTime, lastTransitionTime: failure.lastTransitionTime, reason: failure.reason, message: failure.message });
  else removeCondition(s, REPLICA_FAILURE);
}

type RSCondition = { type?: string; status: string; lastTransitionTime?: string; reason?: string; message?: string };

/** Upstream getReplicaFailures: the new ReplicaSet's ReplicaFailure condition, else the first of any. */
function replicaFailure(newRS: KObject | undefined, all: readonly (KObject | undefined)[]): RSCondition | undefined {
  const of = (rs: KObject | undefined) => ((rs?.status as { conditions?: RSCondition[] } | undefined)?.conditions ?? []).find((c) => c.type === REPLICA_FAILURE);
  return of(newRS) ?? all.map(of).find((c) => c !== undefined);
}

/**
 * Upstream requeueStuckDeployment: when the deployment is progressing under a deadline, how long
 * until the deadline passes (ms; 0 for at once), so a stuck rollout is seen timing out without an
 * event; undefined when there is nothing to wait for.
 */
export function msUntilDeadline(d: KObject, s: DeploymentStatus, nowMs: number): number | undefined {
  const c = getCondition(s, PROGRESSING);
  if (!hasProgressDeadline(d) || !c) return undefined;
  if (deploymentComplete(d, s) || c.reason === REASON.timedOut) return undefined;
  const from = Date.parse(c.lastUpdateTime ?? '');
  if (!Number.isFinite(from)) return undefined;
  const after = from + (dspec(d).progressDeadlineSeconds ?? 0) * 1000 - nowMs;
  return after < 1000 ? 0 : after;
}
