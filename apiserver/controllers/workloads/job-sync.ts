import type { EventRecorder } from '../../../common/events/recorder';
import { JOB_CONTROLLER_NAME } from '../../api/batch-names';
import { countIntervals, parseIntervals, withIndexes, type Interval } from '../../api/job-indexes';
import { rfc3339 } from '../../api/time';
import type { KObject } from '../../api/types';
import { num, rec, recs, str } from '../../registry/obj-access';
import { nextBackoffRecord, type BackoffRecord } from './job-backoff';
import { ensureConditionStatus, findCondition, finishedType, MESSAGE, newCondition, REASON, type JobCondition } from './job-conditions';
import { manageJob, type ManageDeps } from './job-manage';
import {
  completionIndex,
  completionsOf,
  hasTrackingFinalizer,
  isIndexedJob,
  isPodFailed,
  isTerminating,
  jobSpec,
  matchPodFailurePolicy,
  validIndex,
} from './job-pods';
import { calculateFailedIndexes, hasBackoffLimitPerIndex, podsWithDelayedDeletion } from './job-per-index';
import { readStatus, type SyncCtx } from './job-status';
import { asError, trackStatusAndRemoveFinalizers, type TrackingDeps } from './job-tracking';
import { refTo } from './pod-control';
import { isPodActive, isPodReady, podPhase } from './pod-state';

/**
 * Upstream syncJob (pkg/controller/job/job_controller.go), as of the Kubernetes releases with
 * JobPodReplacementPolicy, JobSuccessPolicy and JobManagedBy on: count the pods, decide whether
 * the Job has failed (pod failure policy, backoffLimit, activeDeadlineSeconds) or succeeded
 * (completions, success policy), run or stop pods, and track the outcome into the status. A
 * finishing Job first gets the interim FailureTarget or SuccessCriteriaMet condition and its pods
 * are stopped; Failed or Complete follow once none is left terminating or uncounted.
 */

export interface SyncDeps extends ManageDeps, TrackingDeps {
  recorder: EventRecorder;
  backoff: Map<string, BackoffRecord>;
}

const newFailure = (reason: string, message: string, now: Date) => newCondition('FailureTarget', 'True', reason, message, now);

/** Upstream getValidPodsWithFilter: finished pods not yet counted anywhere (finalizer still on, not in the lists). */
function newFinishedPods(ctx: SyncCtx, uncounted: Set<string>, filter: (p: KObject) => boolean): KObject[] {
  return ctx.pods.filter((p) => {
    const uid = p.metadata.uid ?? '';
    if (!hasTrackingFinalizer(p) || uncounted.has(uid) || ctx.expectedRmFinalizers.has(uid)) return false;
    if (isIndexedJob(ctx.job) && !validIndex(ctx.job, p)) return false;
    return filter(p);
  });
}

/** Upstream pastBackoffLimitOnFailure: with restartPolicy OnFailure, container restarts of running pods count. */
function pastBackoffLimitOnFailure(job: KObject, pods: readonly KObject[]): boolean {
  const podSpec = rec(rec(jobSpec(job).template)?.spec) ?? {};
  if (podSpec.restartPolicy !== 'OnFailure') return false;
  let restarts = 0;
  for (const p of pods) {
    const phase = podPhase(p);
    if (phase !== 'Running' && phase !== 'Pending') continue;
    for (const f of ['initContainerStatuses', 'containerStatuses']) for (const c of recs(rec(p.status)?.[f])) restarts += num(c.restartCount) ?? 0;
  }
  const limit = num(jobSpec(job).backoffLimit) ?? 6;
  return limit === 0 ? restarts > 0 : restarts >= limit;
}

function pastActiveDeadline(job: KObject, start: string | undefined, nowMs: number): boolean {
  const deadline = num(jobSpec(job).activeDeadlineSeconds);
  if (deadline === undefined || !start || jobSpec(job).suspend === true) return false;
  return nowMs - Date.parse(start) >= deadline * 1000;
}

/** Upstream matchSucceededIndexesRule. */
function succeededIndexesRuleMatches(required: readonly Interval[], succeeded: readonly Interval[], count: number | undefined): boolean {
  let contains = 0;
  let s = 0;
  let r = 0;
  while (r < required.length && s < succeeded.length) {
    const overlap = Math.min(required[r].last, succeeded[s].last) - Math.max(required[r].first, succeeded[s].first) + 1;
    if (overlap > 0) contains += overlap;
    if (succeeded[s].last < required[r].last) s++;
    else if (succeeded[s].last > required[r].last) r++;
    else {
      s++;
      r++;
    }
  }
  return contains === countIntervals(required) || (count !== undefined && contains >= count);
}

/** Upstream matchSuccessPolicy: the message of the first rule the succeeded indexes meet. */
function matchSuccessPolicy(job: KObject, succeeded: readonly Interval[]): string | undefined {
  const rules = recs(rec(jobSpec(job).successPolicy)?.rules);
  if (rules.length === 0 || succeeded.length === 0) return undefined;
  const completions = completionsOf(job) ?? 0;
  for (const [i, rule] of rules.entries()) {
    const count = num(rule.succeededCount);
    if (typeof rule.succeededIndexes === 'string') {
      const required = parseIntervals(rule.succeededIndexes, completions);
      if (required.length > 0 && succeededIndexesRuleMatches(required, succeeded, count)) return `Matched rules at index ${i}`;
    } else if (count !== undefined && countIntervals(succeeded) >= count) return `Matched rules at index ${i}`;
  }
  return undefined;
}

/** The sync's starting state: pods, counters (counted, uncounted and new), start time, back-off. */
function buildCtx(d: SyncDeps, key: string, job: KObject, pods: KObject[], expectedRmFinalizers: ReadonlySet<string>, now: Date): SyncCtx {
  const status = readStatus(job);
  const activePods = pods.filter(isPodActive);
  const ctx: SyncCtx = {
    key,
    job,
    status,
    pods,
    activePods,
    ready: activePods.filter(isPodReady).length,
    terminating: pods.filter(isTerminating).length,
    uncounted: { succeeded: new Set(status.uncountedTerminatedPods.succeeded), failed: new Set(status.uncountedTerminatedPods.failed) },
    expectedRmFinalizers,
    succeeded: 0,
    failed: 0,
    newBackoff: { failuresAfterLastSuccess: 0 },
    prevSucceededIndexes: [],
    succeededIndexes: [],
    delayedDeletion: new Map(),
  };
  const newSucceeded = newFinishedPods(ctx, ctx.uncounted.succeeded, (p) => podPhase(p) === 'Succeeded');
  const newFailed = newFinishedPods(ctx, ctx.uncounted.failed, (p) => isPodFailed(p, job));
  const nonIgnored = newFailed.filter((p) => matchPodFailurePolicy(job, p).countFailed).length;
  ctx.succeeded = status.succeeded + newSucceeded.length + ctx.uncounted.succeeded.size;
  ctx.failed = status.failed + nonIgnored + ctx.uncounted.failed.size;
  if (!status.startTime && jobSpec(job).suspend !== true) status.startTime = rfc3339(now);
  ctx.newBackoff = nextBackoffRecord(d.backoff.get(key), newSucceeded, newFailed);
  return ctx;
}

/** Whether (and how) the Job has failed; schedules the next look at the active deadline. */
function failureCondition(d: SyncDeps, ctx: SyncCtx, now: Date): JobCondition | undefined {
  const job = ctx.job;
  const target = findCondition(job, 'FailureTarget');
  if (target?.status === 'True') return newCondition('Failed', 'True', target.reason ?? '', target.message ?? '', now);
  if (jobSpec(job).podFailurePolicy) {
    for (const p of ctx.pods) {
      if (!isPodFailed(p, job)) continue;
      const msg = matchPodFailurePolicy(job, p).failJobMessage;
      if (msg !== undefined) return newFailure(REASON.podFailurePolicy, msg, now);
    }
  }
  const limit = num(jobSpec(job).backoffLimit) ?? 6;
  if (ctx.failed > limit || pastBackoffLimitOnFailure(job, ctx.pods)) return newFailure(REASON.backoffLimitExceeded, MESSAGE.backoffLimitExceeded, now);
  if (pastActiveDeadline(job, ctx.status.startTime, now.getTime())) return newFailure(REASON.deadlineExceeded, MESSAGE.deadlineExceeded, now);
  const deadline = num(jobSpec(job).activeDeadlineSeconds);
  if (deadline !== undefined && jobSpec(job).suspend !== true && ctx.status.startTime) {
    d.requeueAfter(ctx.key, deadline * 1000 - (now.getTime() - Date.parse(ctx.status.startTime)));
  }
  return undefined;
}

/** Indexed Jobs: the succeeded indexes (status plus pods not yet counted), failed indexes (backoffLimitPerIndex), and the success policy. */
function indexedState(ctx: SyncCtx, now: Date): void {
  const completions = completionsOf(ctx.job) ?? 0;
  ctx.prevSucceededIndexes = parseIntervals(ctx.status.completedIndexes, completions);
  const fresh = ctx.pods.filter((p) => podPhase(p) === 'Succeeded' && validIndex(ctx.job, p) && hasTrackingFinalizer(p)).map(completionIndex);
  ctx.succeededIndexes = withIndexes(ctx.prevSucceededIndexes, [...new Set(fresh)].sort((a, b) => a - b));
  ctx.succeeded = countIntervals(ctx.succeededIndexes);
  if (hasBackoffLimitPerIndex(ctx.job)) {
    ctx.failedIndexes = calculateFailedIndexes(ctx.job, ctx.pods, ctx.status.failedIndexes);
    const failed = countIntervals(ctx.failedIndexes);
    const maxFailed = num(jobSpec(ctx.job).maxFailedIndexes);
    if (!ctx.finishedCondition && maxFailed !== undefined && failed > maxFailed) ctx.finishedCondition = newFailure(REASON.maxFailedIndexesExceeded, MESSAGE.maxFailedIndexesExceeded, now);
    else if (!ctx.finishedCondition && failed > 0 && failed + ctx.succeeded >= completions) ctx.finishedCondition = newFailure(REASON.failedIndexes, MESSAGE.failedIndexes, now);
    ctx.delayedDeletion = podsWithDelayedDeletion(ctx);
  }
  if (ctx.finishedCondition) return;
  const msg = matchSuccessPolicy(ctx.job, ctx.succeededIndexes);
  if (msg !== undefined) ctx.finishedCondition = newCondition('SuccessCriteriaMet', 'True', REASON.successPolicy, msg, now);
}

/** Upstream deleteActivePods: a finishing Job's active pods are deleted, finalizers kept (they are counted as failed). */
async function deleteActivePods(d: SyncDeps, ctx: SyncCtx): Promise<{ deleted: number; deletedReady: number; error?: unknown }> {
  let deleted = 0;
  let deletedReady = 0;
  let error: unknown;
  await Promise.all(
    ctx.activePods.map(async (p) => {
      try {
        await d.podControl.delete(ctx.job, p);
        deleted++;
        if (isPodReady(p)) deletedReady++;
      } catch (err) {
        error ??= err;
      }
    }),
  );
  return { deleted, deletedReady, error };
}

/** Suspended / resumed: the condition, its event, and a fresh startTime on resume (upstream). */
function suspendCondition(d: SyncDeps, ctx: SyncCtx, now: Date): boolean {
  const suspended = jobSpec(ctx.job).suspend === true;
  const changed = suspended
    ? ensureConditionStatus(ctx.status.conditions, 'Suspended', 'True', 'JobSuspended', 'Job suspended', now)
    : ensureConditionStatus(ctx.status.conditions, 'Suspended', 'False', 'JobResumed', 'Job resumed', now);
  if (!changed) return false;
  d.recorder.event(refTo(ctx.job), 'Normal', suspended ? 'Suspended' : 'Resumed', suspended ? 'Job suspended' : 'Job resumed');
  if (!suspended) ctx.status.startTime = rfc3339(now);
  return true;
}

/** What the controller knew before it listed the Job's pods. */
export interface SyncExpectations {
  /** The pods the controller created or deleted have all been seen (else it must not create or delete again). */
  satisfied: boolean;
  /**
   * Uids whose finalizer removal was issued and not yet seen, read BEFORE the pods were listed: a
   * removal seen after the list is still expected here, so the list's older copy of that pod is
   * skipped rather than counted again (as failed, when it was being deleted).
   */
  expectedRmFinalizers: ReadonlySet<string>;
}

/** One sync of the Job as the informer has it, with the pods it controls. */
export async function syncJob(d: SyncDeps, key: string, cached: KObject, pods: KObject[], seen: SyncExpectations): Promise<void> {
  const { satisfied } = seen;
  const job = structuredClone(cached);
  if (finishedType(job)) {
    d.backoff.delete(key);
    return;
  }
  const managedBy = str(jobSpec(job).managedBy);
  if (managedBy !== undefined && managedBy !== JOB_CONTROLLER_NAME) return;
  const now = d.now();
  const ctx = buildCtx(d, key, job, pods, seen.expectedRmFinalizers, now);
  const met = findCondition(job, 'SuccessCriteriaMet');
  ctx.finishedCondition = met?.status === 'True' ? met : failureCondition(d, ctx, now);
  if (isIndexedJob(job)) indexedState(ctx, now);
  let active = ctx.activePods.length;
  let manageError: unknown;
  let suspendChanged = false;
  if (ctx.finishedCondition) {
    const r = await deleteActivePods(d, ctx);
    // Not finished while pods may remain: some deletes failed, or creates are still unseen.
    if (r.deleted !== active || !satisfied) ctx.finishedCondition = undefined;
    active -= r.deleted;
    ctx.terminating += r.deleted;
    ctx.ready -= r.deletedReady;
    manageError = r.error;
  } else {
    const manage = satisfied && !job.metadata.deletionTimestamp;
    if (manage) {
      const r = await manageJob(d, ctx);
      active = r.active;
      manageError = r.error;
    }
    const completions = completionsOf(job);
    const complete = completions === undefined ? ctx.succeeded > 0 && active === 0 : ctx.succeeded >= completions && active === 0;
    if (complete) ctx.finishedCondition = newCondition('SuccessCriteriaMet', 'True', REASON.completionsReached, MESSAGE.completionsReached, now);
    else if (manage) suspendChanged = suspendCondition(d, ctx, now);
  }
  const s = ctx.status;
  const needsFlush = suspendChanged || active !== s.active || ctx.ready !== s.ready || ctx.terminating !== s.terminating;
  s.active = active;
  s.ready = ctx.ready;
  s.terminating = ctx.terminating;
  await trackStatusAndRemoveFinalizers(d, ctx, needsFlush);
  if (manageError !== undefined) throw asError(manageError);
}
