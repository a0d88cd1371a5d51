import { JOB_COMPLETION_INDEX, JOB_TRACKING_FINALIZER } from '../../api/batch-names';
import { bothKeys } from '../../api/group-names';
import type { KObject } from '../../api/types';
import { num, rec, recs, str } from '../../registry/obj-access';
import { podPhase } from './pod-state';

/**
 * What the Job controller reads from its Job and its pods (upstream pkg/controller/job utils and
 * pod_failure_policy.go): completion indexes, the tracking finalizer, which pods count as failed,
 * terminating or finished and when, and the pod failure policy's verdict on a failed pod.
 */

export const UNKNOWN_INDEX = -1;

export function jobSpec(job: KObject): Record<string, unknown> {
  return rec(job.spec) ?? {};
}

export function isIndexedJob(job: KObject): boolean {
  return jobSpec(job).completionMode === 'Indexed';
}

export function completionsOf(job: KObject): number | undefined {
  return num(jobSpec(job).completions);
}

/** The pod's completion index from its annotation (either spelling), else its label; UNKNOWN_INDEX when absent or not a number. */
export function completionIndex(pod: KObject): number {
  for (const source of [pod.metadata.annotations, pod.metadata.labels]) {
    for (const key of bothKeys(JOB_COMPLETION_INDEX)) {
      const v = source?.[key];
      if (v !== undefined) return /^\d+$/.test(v) && Number.isSafeInteger(Number(v)) ? Number(v) : UNKNOWN_INDEX;
    }
  }
  return UNKNOWN_INDEX;
}

/** A valid index for the Job: known and below completions. */
export function validIndex(job: KObject, pod: KObject): boolean {
  const ix = completionIndex(pod);
  return ix !== UNKNOWN_INDEX && ix < (completionsOf(job) ?? 0);
}

export function hasTrackingFinalizer(pod: KObject): boolean {
  return (pod.metadata.finalizers ?? []).includes(JOB_TRACKING_FINALIZER);
}

/** Upstream onlyReplaceFailedPods: podReplacementPolicy Failed, or any podFailurePolicy. */
export function onlyReplaceFailedPods(job: KObject): boolean {
  const spec = jobSpec(job);
  return spec.podReplacementPolicy === 'Failed' || (spec.podFailurePolicy !== undefined && spec.podFailurePolicy !== null);
}

/**
 * A pod being deleted that no node runs. Upstream's pod GC marks such pods Failed at once; svc has
 * no pod GC, so the Job controller counts them as failed itself (a pod kept by the tracking
 * finalizer would otherwise stay Pending forever).
 */
function deletedUnscheduled(pod: KObject): boolean {
  return !!pod.metadata.deletionTimestamp && !str(rec(pod.spec)?.nodeName) && podPhase(pod) !== 'Succeeded' && podPhase(pod) !== 'Failed';
}

/** Upstream isPodFailed: phase Failed, or (unless only failed pods are replaced) being deleted before it succeeded. */
export function isPodFailed(pod: KObject, job: KObject): boolean {
  if (podPhase(pod) === 'Failed' || deletedUnscheduled(pod)) return true;
  if (onlyReplaceFailedPods(job)) return false;
  return !!pod.metadata.deletionTimestamp && podPhase(pod) !== 'Succeeded';
}

/** Upstream's terminating pods: being deleted and not yet in a terminal phase (unscheduled ones count as failed instead). */
export function isTerminating(pod: KObject): boolean {
  const phase = podPhase(pod);
  return !!pod.metadata.deletionTimestamp && phase !== 'Succeeded' && phase !== 'Failed' && !deletedUnscheduled(pod);
}

type ContainerStatus = { name?: string; state?: { terminated?: { exitCode?: number; finishedAt?: string } } };

function containerStatuses(pod: KObject, field: 'containerStatuses' | 'initContainerStatuses'): ContainerStatus[] {
  return recs(rec(pod.status)?.[field]);
}

/**
 * Upstream getFinishedTime: the latest container finish time (when every container finished),
 * else the Ready=False transition, else the deletion time, else the creation time.
 */
export function finishedTimeMs(pod: KObject): number {
  let latest: number | undefined;
  let allFinished = true;
  for (const c of containerStatuses(pod, 'containerStatuses')) {
    const t = Date.parse(c.state?.terminated?.finishedAt ?? '');
    if (!Number.isFinite(t)) {
      allFinished = false;
      break;
    }
    latest = latest === undefined ? t : Math.max(latest, t);
  }
  if (allFinished && latest !== undefined) return latest;
  const ready = recs(rec(pod.status)?.conditions).find((c) => c.type === 'Ready' && c.status === 'False');
  const readyAt = Date.parse(str(ready?.lastTransitionTime) ?? '');
  if (Number.isFinite(readyAt)) return readyAt;
  const deleted = Date.parse(pod.metadata.deletionTimestamp ?? '');
  if (Number.isFinite(deleted)) return deleted;
  return Date.parse(pod.metadata.creationTimestamp ?? '') || 0;
}

export interface PolicyVerdict {
  /** Set for a FailJob match: the message of the Job's failure condition. */
  failJobMessage?: string;
  /** Whether the failure counts against backoffLimit (false for Ignore). */
  countFailed: boolean;
  action?: string;
}

function exitCodeMatches(code: number, op: unknown, values: number[]): boolean {
  if (op === 'In') return values.includes(code);
  if (op === 'NotIn') return !values.includes(code);
  return false;
}

/** The first terminated container (app containers first, then init) with a non-zero exit code the requirement matches. */
function matchOnExitCodes(pod: KObject, req: Record<string, unknown>): { name: string; code: number } | undefined {
  const values = (Array.isArray(req.values) ? req.values : []).filter((v): v is number => typeof v === 'number');
  for (const field of ['containerStatuses', 'initContainerStatuses'] as const) {
    for (const c of containerStatuses(pod, field)) {
      const code = c.state?.terminated?.exitCode;
      if (code === undefined || code === 0) continue;
      if (typeof req.containerName === 'string' && req.containerName !== c.name) continue;
      if (exitCodeMatches(code, req.operator, values)) return { name: c.name ?? '', code };
    }
  }
  return undefined;
}

function matchOnPodConditions(pod: KObject, patterns: Record<string, unknown>[]): string | undefined {
  for (const c of recs(rec(pod.status)?.conditions)) {
    if (patterns.some((p) => p.type === c.type && (p.status ?? 'True') === c.status)) return str(c.type);
  }
  return undefined;
}

/** Upstream matchPodFailurePolicy: the first rule matching the failed pod decides; none matching counts the failure. */
export function matchPodFailurePolicy(job: KObject, pod: KObject): PolicyVerdict {
  const rules = recs(rec(jobSpec(job).podFailurePolicy)?.rules);
  const where = `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
  for (const [i, rule] of rules.entries()) {
    const action = str(rule.action) ?? '';
    const codes = rec(rule.onExitCodes);
    let matched: string | undefined;
    if (codes) {
      const m = matchOnExitCodes(pod, codes);
      if (m) matched = `Container ${m.name} for pod ${where} failed with exit code ${m.code} matching ${action} rule at index ${i}`;
    } else if (Array.isArray(rule.onPodConditions)) {
      const type = matchOnPodConditions(pod, recs(rule.onPodConditions));
      if (type !== undefined) matched = `Pod ${where} has condition ${type} matching ${action} rule at index ${i}`;
    }
    if (matched === undefined) continue;
    switch (action) {
      case 'Ignore':
        return { countFailed: false, action };
      case 'FailIndex':
      case 'Count':
        return { countFailed: true, action };
      case 'FailJob':
        return { failJobMessage: matched, countFailed: true, action };
      default:
        // Clients skip rules with an action they do not know (upstream's API comment).
        continue;
    }
  }
  return { countFailed: true };
}
