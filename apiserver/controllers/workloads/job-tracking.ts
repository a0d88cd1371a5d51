import type { EventRecorder } from '../../../common/events/recorder';
import { JOB_TRACKING_FINALIZER } from '../../api/batch-names';
import { formatIntervals, inIntervals, withIndexes } from '../../api/job-indexes';
import type { KObject } from '../../api/types';
import type { ResourceType } from '../../registry/resource-type';
import { ensureConditionStatus, newCondition, type JobCondition } from './job-conditions';
import { completionIndex, completionsOf, hasTrackingFinalizer, isIndexedJob, isPodFailed, matchPodFailurePolicy, UNKNOWN_INDEX } from './job-pods';
import { recordFinished, removeTrackingFinalizer, writeStatus, type StatusWriter, type SyncCtx } from './job-status';
import { podPhase } from './pod-state';

/**
 * Finalizer-based pod tracking (upstream trackJobStatusAndRemoveFinalizers and its helpers): every
 * pod the controller creates carries batch.kubernetes.io/job-tracking. A finished pod's uid is
 * first written to status.uncountedTerminatedPods, then its finalizer is removed, then the uid
 * leaves the list as the succeeded or failed counter grows. Whatever step a restart interrupts,
 * the next sync finds the pod (finalizer still there) or its uid (in the list): no completion is
 * lost or counted twice. The terminal condition is written only once nothing is left uncounted.
 */

/** At most this many uids wait in uncountedTerminatedPods (upstream MaxUncountedPods). */
export const MAX_UNCOUNTED_PODS = 500;

/** Upstream's finalizer expectations: uids of pods whose finalizer removal was issued, per Job, until seen. */
export class FinalizerExpectations {
  private readonly byJob = new Map<string, Set<string>>();

  expect(key: string, uids: readonly string[]): void {
    if (uids.length === 0) return;
    let set = this.byJob.get(key);
    if (!set) this.byJob.set(key, (set = new Set()));
    for (const u of uids) set.add(u);
  }

  observed(key: string, uid: string): void {
    const set = this.byJob.get(key);
    set?.delete(uid);
    if (set?.size === 0) this.byJob.delete(key);
  }

  expected(key: string): ReadonlySet<string> {
    return new Set(this.byJob.get(key) ?? []);
  }

  delete(key: string): void {
    this.byJob.delete(key);
  }
}

export interface TrackingDeps extends StatusWriter {
  pods: ResourceType;
  recorder: EventRecorder;
  now(): Date;
  finalizerExpectations: FinalizerExpectations;
  /** Stores the sync's back-off record once its pods are in the status (upstream updateBackoffRecord). */
  saveBackoff(ctx: SyncCtx): void;
}

/** Errors as thrown values (the store throws ApiError; anything else is wrapped). */
export function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error('job controller write failed', { cause: e });
}

const isSuccessCriteriaMet = (c?: JobCondition) => c?.type === 'SuccessCriteriaMet' && c.status === 'True';

/** Upstream canRemoveFinalizer: a failed pod keeps it while its index's replacement is not there yet (backoffLimitPerIndex). */
function canRemoveFinalizer(ctx: SyncCtx, pod: KObject, failed: boolean): boolean {
  if (ctx.job.metadata.deletionTimestamp || ctx.finishedCondition !== undefined || podPhase(pod) === 'Succeeded') return true;
  if (!failed) return false;
  return ctx.delayedDeletion.get(completionIndex(pod))?.metadata.uid !== pod.metadata.uid;
}

/** Moves uids whose finalizer is gone from uncountedTerminatedPods into the counters; true when it changed anything. */
function cleanUncounted(ctx: SyncCtx, withFinalizer: ReadonlySet<string>): boolean {
  const u = ctx.status.uncountedTerminatedPods;
  const s = u.succeeded.filter((x) => withFinalizer.has(x));
  const f = u.failed.filter((x) => withFinalizer.has(x));
  if (s.length === u.succeeded.length && f.length === u.failed.length) return false;
  ctx.status.succeeded += u.succeeded.length - s.length;
  ctx.status.failed += u.failed.length - f.length;
  u.succeeded = s;
  u.failed = f;
  return true;
}

interface Pass {
  toRemove: KObject[];
  newSucceededIndexes: number[];
  needsFlush: boolean;
  reachedMax: boolean;
}

/** Which finished pods get their finalizer removed, and which uids (or indexes) join the status first. */
function collect(ctx: SyncCtx, withFinalizer: ReadonlySet<string>): Pass {
  const job = ctx.job;
  const indexed = isIndexedJob(job);
  const completions = completionsOf(job) ?? 0;
  const u = ctx.status.uncountedTerminatedPods;
  const pass: Pass = { toRemove: [], newSucceededIndexes: [], needsFlush: false, reachedMax: false };
  const pods = indexed ? [...ctx.pods].sort((a, b) => completionIndex(a) - completionIndex(b)) : ctx.pods;
  for (const pod of pods) {
    const uid = pod.metadata.uid ?? '';
    if (!withFinalizer.has(uid)) continue;
    const failed = isPodFailed(pod, job);
    if (!canRemoveFinalizer(ctx, pod, failed)) continue;
    pass.toRemove.push(pod);
    const ix = completionIndex(pod);
    if (podPhase(pod) === 'Succeeded' && !ctx.uncounted.failed.has(uid)) {
      if (indexed) {
        if (ix !== UNKNOWN_INDEX && ix < completions && !inIntervals(ctx.prevSucceededIndexes, ix)) {
          pass.newSucceededIndexes.push(ix);
          pass.needsFlush = true;
        }
      } else if (!ctx.uncounted.succeeded.has(uid)) {
        u.succeeded.push(uid);
        pass.needsFlush = true;
      }
    } else if (failed || (ctx.finishedCondition !== undefined && !isSuccessCriteriaMet(ctx.finishedCondition))) {
      // Once the Job is finishing, every pod not terminated counts as failed.
      if (!ctx.uncounted.failed.has(uid) && (!indexed || (ix !== UNKNOWN_INDEX && ix < completions))) {
        if (matchPodFailurePolicy(job, pod).countFailed) {
          u.failed.push(uid);
          pass.needsFlush = true;
        }
      }
    }
    if (pass.newSucceededIndexes.length + u.succeeded.length + u.failed.length >= MAX_UNCOUNTED_PODS) {
      pass.reachedMax = true;
      break;
    }
  }
  return pass;
}

/** Upstream enactJobFinished: the terminal condition, once nothing is uncounted or terminating. */
function enactFinished(ctx: SyncCtx, now: Date): boolean {
  const cond = ctx.finishedCondition;
  if (!cond) return false;
  const u = ctx.status.uncountedTerminatedPods;
  if (u.succeeded.length + u.failed.length > 0 || ctx.terminating > 0) return false;
  ensureConditionStatus(ctx.status.conditions, cond.type, cond.status, cond.reason ?? '', cond.message ?? '', now);
  if (cond.type === 'Complete') ctx.status.completionTime = cond.lastTransitionTime;
  return true;
}

/** Appends the interim FailureTarget / SuccessCriteriaMet condition and turns the finish into Failed / Complete. */
function interimCondition(ctx: SyncCtx, now: Date): boolean {
  const cond = ctx.finishedCondition;
  if (!cond) return false;
  let flush = false;
  if (cond.type === 'FailureTarget') {
    ctx.status.conditions.push(cond);
    flush = true;
    ctx.finishedCondition = newCondition('Failed', 'True', cond.reason ?? '', cond.message ?? '', now);
  } else if (isSuccessCriteriaMet(cond)) {
    if (!ctx.status.conditions.some((c) => isSuccessCriteriaMet(c))) {
      ctx.status.conditions.push(cond);
      flush = true;
    }
    ctx.finishedCondition = newCondition('Complete', 'True', cond.reason ?? '', cond.message ?? '', now);
  }
  return flush;
}

async function removeFinalizers(d: TrackingDeps, ctx: SyncCtx, pods: readonly KObject[], withFinalizer: Set<string>): Promise<Error | undefined> {
  d.finalizerExpectations.expect(ctx.key, pods.map((p) => p.metadata.uid ?? ''));
  const results = await Promise.allSettled(pods.map((p) => removeTrackingFinalizer(d, d.pods, p, JOB_TRACKING_FINALIZER)));
  let error: Error | undefined;
  results.forEach((r, i) => {
    const uid = pods[i].metadata.uid ?? '';
    if (r.status === 'fulfilled') withFinalizer.delete(uid);
    else {
      // Never observed: forget the expectation so the pod is looked at again.
      d.finalizerExpectations.observed(ctx.key, uid);
      error ??= asError(r.reason);
    }
  });
  return error;
}

/**
 * Counts finished pods into the status and releases their finalizers, then writes the terminal
 * condition when due; needsFlush says the status changed already (active, ready, conditions).
 */
export async function trackStatusAndRemoveFinalizers(d: TrackingDeps, ctx: SyncCtx, needsFlush: boolean): Promise<void> {
  const now = d.now();
  const withFinalizer = new Set(ctx.pods.filter((p) => hasTrackingFinalizer(p) && !ctx.expectedRmFinalizers.has(p.metadata.uid ?? '')).map((p) => p.metadata.uid ?? ''));
  let flush = cleanUncounted(ctx, withFinalizer) || needsFlush;
  const pass = collect(ctx, withFinalizer);
  flush ||= pass.needsFlush;
  if (isIndexedJob(ctx.job)) {
    ctx.succeededIndexes = withIndexes(ctx.succeededIndexes, [...pass.newSucceededIndexes].sort((a, b) => a - b));
    const text = formatIntervals(ctx.succeededIndexes);
    if (text !== (ctx.status.completedIndexes ?? '')) flush = true;
    ctx.status.completedIndexes = text;
    ctx.status.succeeded = ctx.succeededIndexes.reduce((n, v) => n + v.last - v.first + 1, 0);
    const failedText = ctx.failedIndexes ? formatIntervals(ctx.failedIndexes) : undefined;
    if (failedText !== ctx.status.failedIndexes) flush = true;
    ctx.status.failedIndexes = failedText;
  }
  flush = interimCondition(ctx, now) || flush;
  // 1. The uids (and interim condition) go to the status before any finalizer is removed.
  if (flush) {
    await writeStatus(d, ctx);
    d.saveBackoff(ctx);
    flush = false;
  }
  // 2. Finalizers off; 3. counted pods move from the uid lists into the counters.
  const rmError = pass.toRemove.length ? await removeFinalizers(d, ctx, pass.toRemove, withFinalizer) : undefined;
  if (cleanUncounted(ctx, withFinalizer)) flush = true;
  if (rmError !== undefined) {
    if (flush) await writeStatus(d, ctx);
    throw rmError;
  }
  const finished = !pass.reachedMax && enactFinished(ctx, now);
  if (finished) flush = true;
  if (!flush) return;
  await writeStatus(d, ctx);
  if (finished) recordFinished(d.recorder, ctx.job, ctx.finishedCondition!, completionsOf(ctx.job), ctx.status.succeeded);
}

