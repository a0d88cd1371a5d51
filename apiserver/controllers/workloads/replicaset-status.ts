import { jsonEqual } from '../../api/json-equal';
import { rfc3339 } from '../../api/time';
import type { KObject } from '../../api/types';
import { isPodAvailable, isPodReady } from './pod-state';

/**
 * The status a ReplicaSet's sync writes (upstream calculateStatus and updateReplicaSetStatus of
 * pkg/controller/replicaset/replica_set_utils.go).
 */

export interface ReplicaSetCondition {
  type: string;
  status: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface ReplicaSetStatus {
  replicas: number;
  fullyLabeledReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  observedGeneration?: number;
  conditions?: ReplicaSetCondition[];
}

type Spec = { replicas?: number; minReadySeconds?: number; template?: { metadata?: { labels?: Record<string, string> } } };

export const specOf = (rs: KObject): Spec => rs.spec ?? {};
export const statusOf = (rs: KObject): Partial<ReplicaSetStatus> => rs.status ?? {};

/** Desired replicas (spec.replicas, defaulted to 1 by the API). */
export const desiredReplicas = (rs: KObject): number => specOf(rs).replicas ?? 1;

function labelsMatch(want: Readonly<Record<string, string>>, have: Readonly<Record<string, string>> | undefined): boolean {
  for (const [k, v] of Object.entries(want)) if (have?.[k] !== v) return false;
  return true;
}

/**
 * Counts the claimed active pods: all, those carrying every template label (fullyLabeled), ready,
 * and available (ready for minReadySeconds). A failed create or delete sets condition
 * ReplicaFailure (reason FailedCreate or FailedDelete, the error as message) if it is not set; a
 * sync without failure removes it.
 */
export function calculateReplicaSetStatus(rs: KObject, pods: readonly KObject[], manageError: unknown, nowMs: number): ReplicaSetStatus {
  const spec = specOf(rs);
  const minReady = spec.minReadySeconds ?? 0;
  const templateLabels = spec.template?.metadata?.labels ?? {};
  let fully = 0;
  let ready = 0;
  let available = 0;
  for (const pod of pods) {
    if (labelsMatch(templateLabels, pod.metadata.labels)) fully++;
    if (isPodReady(pod)) ready++;
    if (isPodAvailable(pod, minReady, nowMs)) available++;
  }
  let conditions = [...(statusOf(rs).conditions ?? [])];
  const failure = conditions.find((c) => c.type === 'ReplicaFailure');
  if (manageError !== undefined && !failure) {
    const diff = pods.length - desiredReplicas(rs);
    const reason = diff < 0 ? 'FailedCreate' : diff > 0 ? 'FailedDelete' : '';
    const message = manageError instanceof Error ? manageError.message : JSON.stringify(manageError);
    conditions.push({ type: 'ReplicaFailure', status: 'True', lastTransitionTime: rfc3339(new Date(nowMs)), ...(reason ? { reason } : {}), message });
  } else if (manageError === undefined && failure) {
    conditions = conditions.filter((c) => c !== failure);
  }
  const out: ReplicaSetStatus = { replicas: pods.length };
  if (fully) out.fullyLabeledReplicas = fully;
  if (ready) out.readyReplicas = ready;
  if (available) out.availableReplicas = available;
  if (conditions.length) out.conditions = conditions;
  return out;
}

/** Whether writing status would change nothing (upstream updateReplicaSetStatus's early return): counts, conditions, and generation observed. */
export function replicaSetStatusCurrent(rs: KObject, next: ReplicaSetStatus): boolean {
  const cur = statusOf(rs);
  return (
    (cur.replicas ?? 0) === next.replicas &&
    (cur.fullyLabeledReplicas ?? 0) === (next.fullyLabeledReplicas ?? 0) &&
    (cur.readyReplicas ?? 0) === (next.readyReplicas ?? 0) &&
    (cur.availableReplicas ?? 0) === (next.availableReplicas ?? 0) &&
    (cur.observedGeneration ?? 0) === (rs.metadata.generation ?? 0) &&
    jsonEqual(cur.conditions ?? [], next.conditions ?? [])
  );
}
