import { rfc3339 } from '../../api/time';
import type { KObject } from '../../api/types';
import { rec, recs } from '../../registry/obj-access';

/** Job conditions as upstream's Job controller writes them (pkg/controller/job/job_controller.go). */

export interface JobCondition {
  type: string;
  status: string;
  lastProbeTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export function newCondition(type: string, status: string, reason: string, message: string, now: Date): JobCondition {
  const t = rfc3339(now);
  return { type, status, lastProbeTime: t, lastTransitionTime: t, reason, message };
}

export function conditionsOf(job: KObject): JobCondition[] {
  return recs(rec(job.status)?.conditions) as unknown as JobCondition[];
}

export function findCondition(job: KObject, type: string): JobCondition | undefined {
  return conditionsOf(job).find((c) => c.type === type);
}

export function hasTrueCondition(job: KObject, type: string): boolean {
  return findCondition(job, type)?.status === 'True';
}

/** Complete or Failed, when the Job has finished (upstream IsJobFinished / FinishedCondition). */
export function finishedType(job: KObject): 'Complete' | 'Failed' | undefined {
  for (const c of conditionsOf(job)) if ((c.type === 'Complete' || c.type === 'Failed') && c.status === 'True') return c.type;
  return undefined;
}

/**
 * Upstream ensureJobConditionStatus: replaces the condition of that type when its status, reason or
 * message differ; adds it when missing unless the status is False. Returns whether it changed.
 */
export function ensureConditionStatus(conditions: JobCondition[], type: string, status: string, reason: string, message: string, now: Date): boolean {
  const i = conditions.findIndex((c) => c.type === type);
  if (i >= 0) {
    const c = conditions[i];
    if (c.status === status && (c.reason ?? '') === reason && (c.message ?? '') === message) return false;
    conditions[i] = newCondition(type, status, reason, message, now);
    return true;
  }
  if (status === 'False') return false;
  conditions.push(newCondition(type, status, reason, message, now));
  return true;
}

/** Upstream's reasons and messages. */
export const REASON = {
  backoffLimitExceeded: 'BackoffLimitExceeded',
  deadlineExceeded: 'DeadlineExceeded',
  podFailurePolicy: 'PodFailurePolicy',
  failedIndexes: 'FailedIndexes',
  maxFailedIndexesExceeded: 'MaxFailedIndexesExceeded',
  successPolicy: 'SuccessPolicy',
  completionsReached: 'CompletionsReached',
} as const;

export const MESSAGE = {
  backoffLimitExceeded: 'Job has reached the specified backoff limit',
  deadlineExceeded: 'Job was active longer than specified deadline',
  failedIndexes: 'Job has failed indexes',
  maxFailedIndexesExceeded: 'Job has exceeded the specified maximal number of failed indexes',
  completionsReached: 'Reached expected number of succeeded pods',
} as const;
