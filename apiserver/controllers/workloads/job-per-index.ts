import { JOB_INDEX_FAILURE_COUNT, JOB_INDEX_IGNORED_FAILURE_COUNT } from '../../api/batch-names';
import { inIntervals, parseIntervals, withIndexes, type Interval } from '../../api/job-indexes';
import type { KObject } from '../../api/types';
import { num } from '../../registry/obj-access';
import { remainingBackoffMs } from './job-backoff';
import { completionIndex, completionsOf, finishedTimeMs, hasTrackingFinalizer, isPodFailed, jobSpec, matchPodFailurePolicy, UNKNOWN_INDEX } from './job-pods';
import type { SyncCtx } from './job-status';

/**
 * backoffLimitPerIndex (upstream pkg/controller/job/indexed_job_utils.go): each index of an Indexed
 * Job retries on its own. A replacement pod carries its index's failures so far in the
 * batch.kubernetes.io/job-index-failure-count annotation (ignored ones in
 * ...-ignored-failure-count); the failed pod keeps its tracking finalizer until its replacement
 * exists (so the count is never lost), the replacement waits the back-off of its index's
 * failures, and an index failing more than backoffLimitPerIndex times (or matching a FailIndex
 * rule) is failed for good: it goes to status.failedIndexes and is not run again.
 */

export function hasBackoffLimitPerIndex(job: KObject): boolean {
  return num(jobSpec(job).backoffLimitPerIndex) !== undefined;
}

function annotationCount(pod: KObject, key: string): number {
  const v = pod.metadata.annotations?.[key];
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : 0;
}

export const indexFailureCount = (pod: KObject) => annotationCount(pod, JOB_INDEX_FAILURE_COUNT);
const absoluteFailureCount = (pod: KObject) => indexFailureCount(pod) + annotationCount(pod, JOB_INDEX_IGNORED_FAILURE_COUNT);

/** Upstream isIndexFailed: the pod's failure exhausts its index's retries, or a FailIndex rule matched it. */
export function isIndexFailed(job: KObject, pod: KObject): boolean {
  if (!isPodFailed(pod, job)) return false;
  const verdict = matchPodFailurePolicy(job, pod);
  if (verdict.action === 'FailIndex') return true;
  return verdict.countFailed && indexFailureCount(pod) >= (num(jobSpec(job).backoffLimitPerIndex) ?? 0);
}

/** Upstream calculateFailedIndexes: the status's failed indexes and the ones failed by pods not yet counted. */
export function calculateFailedIndexes(job: KObject, pods: readonly KObject[], statusText: string | undefined): Interval[] {
  const completions = completionsOf(job) ?? 0;
  const prev = parseIntervals(statusText, completions);
  const fresh = pods.filter((p) => hasTrackingFinalizer(p) && isIndexFailed(job, p)).map(completionIndex);
  return withIndexes(prev, [...new Set(fresh.filter((ix) => ix !== UNKNOWN_INDEX && ix < completions))].sort((a, b) => a - b));
}

/**
 * Upstream getPodsWithDelayedDeletionPerIndex: per index neither succeeded, failed nor active, its
 * latest failed pod still holding the finalizer (the one a replacement takes its count from).
 */
export function podsWithDelayedDeletion(ctx: SyncCtx): Map<number, KObject> {
  const completions = completionsOf(ctx.job) ?? 0;
  const active = new Set(ctx.activePods.map(completionIndex));
  const out = new Map<number, KObject>();
  for (const p of ctx.pods) {
    const uid = p.metadata.uid ?? '';
    if (!hasTrackingFinalizer(p) || ctx.expectedRmFinalizers.has(uid) || !isPodFailed(p, ctx.job)) continue;
    const ix = completionIndex(p);
    if (ix === UNKNOWN_INDEX || ix >= completions) continue;
    if (inIntervals(ctx.succeededIndexes, ix) || inIntervals(ctx.failedIndexes ?? [], ix) || active.has(ix)) continue;
    const last = out.get(ix);
    if (!last || (absoluteFailureCount(last) <= absoluteFailureCount(p) && finishedTimeMs(p) >= finishedTimeMs(last))) out.set(ix, p);
  }
  return out;
}

/** Upstream getNewIndexFailureCounts: the annotations of the pod replacing podBeingReplaced. */
export function failureCountAnnotations(job: KObject, replaced: KObject | undefined): Record<string, string> {
  let failures = 0;
  let ignored = 0;
  if (replaced) {
    failures = indexFailureCount(replaced);
    ignored = annotationCount(replaced, JOB_INDEX_IGNORED_FAILURE_COUNT);
    if (matchPodFailurePolicy(job, replaced).countFailed) failures++;
    else ignored++;
  }
  return { [JOB_INDEX_FAILURE_COUNT]: String(failures), ...(ignored > 0 ? { [JOB_INDEX_IGNORED_FAILURE_COUNT]: String(ignored) } : {}) };
}

/**
 * Upstream getPodCreationInfoForIndependentIndexes: the indexes whose back-off is over; when none
 * is, the shortest wait.
 */
export function indexesReadyNow(indexes: readonly number[], delayed: ReadonlyMap<number, KObject>, nowMs: number): { now: number[]; waitMs: number } {
  const now: number[] = [];
  let waitMs = Infinity;
  for (const ix of indexes) {
    const last = delayed.get(ix);
    const wait = last ? remainingBackoffMs({ failuresAfterLastSuccess: absoluteFailureCount(last) + 1, lastFailureMs: finishedTimeMs(last) }, nowMs) : 0;
    if (wait === 0) now.push(ix);
    else waitMs = Math.min(waitMs, wait);
  }
  return { now, waitMs: now.length > 0 || waitMs === Infinity ? 0 : waitMs };
}
