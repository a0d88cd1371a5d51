import { labelSelectorRequirements, selectorMatchesLabels } from '../../api/label-selector';
import { rfc3339 } from '../../api/time';
import type { KObject } from '../../api/types';
import { isObject } from '../../api/types';
import { num, rec, recs } from '../obj-access';

/**
 * PodDisruptionBudget status as both its writers see it: the eviction sub-resource (which takes
 * one disruption and records the pod in status.disruptedPods) and the disruption controller
 * (which computes the whole status). Upstream's component-helpers/apps/poddisruptionbudget and
 * the policy/v1 constants.
 */

/** Upstream policy.DisruptionAllowedCondition and its reasons. */
export const DISRUPTION_ALLOWED = 'DisruptionAllowed';
export const SUFFICIENT_PODS = 'SufficientPods';
export const INSUFFICIENT_PODS = 'InsufficientPods';
export const SYNC_FAILED = 'SyncFailed';
/** The StatusCause type of a refused eviction (upstream policyv1.DisruptionBudgetCause). */
export const DISRUPTION_BUDGET_CAUSE = 'DisruptionBudget';

/** The counters of status, as numbers (absent = 0, as Go's zero values). */
export interface PdbCounts {
  disruptionsAllowed: number;
  currentHealthy: number;
  desiredHealthy: number;
  expectedPods: number;
  observedGeneration: number;
}

export function pdbCounts(pdb: KObject): PdbCounts {
  const s = rec(pdb.status) ?? {};
  return {
    disruptionsAllowed: num(s.disruptionsAllowed) ?? 0,
    currentHealthy: num(s.currentHealthy) ?? 0,
    desiredHealthy: num(s.desiredHealthy) ?? 0,
    expectedPods: num(s.expectedPods) ?? 0,
    observedGeneration: num(s.observedGeneration) ?? 0,
  };
}

/** status.disruptedPods: pod name → the RFC 3339 time its eviction was granted. */
export function disruptedPods(pdb: KObject): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(rec(rec(pdb.status)?.disruptedPods) ?? {})) if (typeof v === 'string') out[k] = v;
  return out;
}

/**
 * Whether the budget covers the pod: same namespace and its selector matches the pod's labels.
 * policy/v1: an empty selector selects every pod of the namespace, an absent (or malformed) one
 * none (spec 2.7, upstream LabelSelectorAsSelector).
 */
export function pdbCoversPod(pdb: KObject, pod: KObject): boolean {
  if ((pdb.metadata.namespace ?? '') !== (pod.metadata.namespace ?? '')) return false;
  return selectorMatchesLabels(labelSelectorRequirements(rec(pdb.spec)?.selector), pod.metadata.labels);
}

/** metav1.Condition as upstream's apimeta.SetStatusCondition writes it. */
export interface MetaCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  observedGeneration?: number;
}

/**
 * Upstream apimeta.SetStatusCondition, in place on status.conditions: a new condition gets
 * lastTransitionTime now; an existing one keeps its lastTransitionTime unless its status changes,
 * and takes the new reason, message and observedGeneration.
 */
export function setMetaCondition(obj: KObject, cond: MetaCondition, now: Date): void {
  const status = isObject(obj.status) ? obj.status : (obj.status = {});
  const list = Array.isArray(status.conditions) ? (status.conditions as unknown[]) : (status.conditions = []);
  const i = list.findIndex((c) => isObject(c) && c.type === cond.type);
  const old = i >= 0 ? (list[i] as Record<string, unknown>) : undefined;
  const keepTime = old && old.status === cond.status && typeof old.lastTransitionTime === 'string';
  const next: Record<string, unknown> = {
    type: cond.type,
    status: cond.status,
    ...(cond.observedGeneration !== undefined ? { observedGeneration: cond.observedGeneration } : {}),
    lastTransitionTime: keepTime ? old.lastTransitionTime : rfc3339(now),
    reason: cond.reason,
    message: cond.message,
  };
  if (i >= 0) list[i] = next;
  else list.push(next);
}

/**
 * Upstream UpdateDisruptionAllowedCondition: DisruptionAllowed True (SufficientPods) while
 * disruptions are allowed, else False (InsufficientPods), observed at status.observedGeneration.
 */
export function updateDisruptionAllowedCondition(pdb: KObject, now: Date): void {
  const c = pdbCounts(pdb);
  const allowed = c.disruptionsAllowed > 0;
  setMetaCondition(
    pdb,
    { type: DISRUPTION_ALLOWED, status: allowed ? 'True' : 'False', reason: allowed ? SUFFICIENT_PODS : INSUFFICIENT_PODS, message: '', observedGeneration: c.observedGeneration },
    now,
  );
}

/** Upstream ConditionsAreUpToDate: the DisruptionAllowed condition says what the counters say, at the current generation. */
export function conditionsAreUpToDate(pdb: KObject): boolean {
  const cond = recs(rec(pdb.status)?.conditions).find((c) => c.type === DISRUPTION_ALLOWED);
  const c = pdbCounts(pdb);
  if (!cond || c.observedGeneration !== (pdb.metadata.generation ?? 0)) return false;
  return c.disruptionsAllowed > 0 ? cond.status === 'True' && cond.reason === SUFFICIENT_PODS : cond.status === 'False' && cond.reason === INSUFFICIENT_PODS;
}
