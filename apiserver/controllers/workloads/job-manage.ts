import { JOB_COMPLETION_INDEX, JOB_COMPLETION_INDEX_ENV, JOB_TRACKING_FINALIZER } from '../../api/batch-names';
import { ApiError, isNotFound } from '../../api/errors';
import { withIndexes, type Interval } from '../../api/job-indexes';
import type { KObject } from '../../api/types';
import { num, rec, recs } from '../../registry/obj-access';
import type { ResourceType } from '../../registry/resource-type';
import { remainingBackoffMs } from './job-backoff';
import { failureCountAnnotations, hasBackoffLimitPerIndex, indexesReadyNow } from './job-per-index';
import { completionIndex, completionsOf, hasTrackingFinalizer, isIndexedJob, jobSpec, onlyReplaceFailedPods, UNKNOWN_INDEX } from './job-pods';
import { removeTrackingFinalizer, type StatusWriter, type SyncCtx } from './job-status';
import type { Expectations } from './expectations';
import { newControllerRef } from './controller-ref';
import { podFromTemplate, podNamePrefix, slowStartBatch, type PodControl } from './pod-control';
import { deletionOrder, isPodReady } from './pod-state';

/**
 * Upstream manageJob: brings the Job's active pods to what it wants (parallelism, bounded by the
 * completions left), deleting the extra ones or creating the missing ones (after the failure
 * back-off; for Indexed Jobs, the lowest pending indexes), in one direction per sync.
 */

/** At most this many pods created or deleted per sync (upstream MaxPodCreateDeletePerSync). */
const MAX_POD_CREATE_DELETE_PER_SYNC = 500;
/** Upstream MaxGeneratedNameLength. */
const MAX_GENERATED_NAME_LENGTH = 58;

export interface ManageDeps extends Pick<StatusWriter, 'store' | 'ctx'> {
  pods: ResourceType;
  podControl: PodControl;
  expectations: Expectations;
  now(): Date;
  requeueAfter(key: string, ms: number): void;
}

export interface ManageResult {
  active: number;
  error?: unknown;
}

const byDeletion = (nowMs: number) => (a: KObject, b: KObject) => deletionOrder(a, b, {}, nowMs);

/** Upstream activePodsForRemoval: for Indexed Jobs, duplicated and out-of-range indexes first; then the least valuable pods. */
export function activePodsForRemoval(job: KObject, pods: readonly KObject[], rmAtLeast: number, nowMs: number): KObject[] {
  const rm: KObject[] = [];
  let left: KObject[] = [...pods];
  if (isIndexedJob(job)) {
    const completions = completionsOf(job) ?? 0;
    const groups = new Map<number, KObject[]>();
    left = [];
    for (const p of pods) {
      const ix = completionIndex(p);
      if (ix === UNKNOWN_INDEX || ix >= completions) rm.push(p);
      else groups.set(ix, [...(groups.get(ix) ?? []), p]);
    }
    for (const ix of [...groups.keys()].sort((a, b) => a - b)) {
      const same = groups.get(ix)!.sort(byDeletion(nowMs));
      rm.push(...same.slice(0, -1));
      left.push(same[same.length - 1]);
    }
  }
  if (rm.length < rmAtLeast) rm.push(...left.sort(byDeletion(nowMs)).slice(0, rmAtLeast - rm.length));
  return rm;
}

/** Upstream firstPendingIndexes: the lowest indexes neither succeeded, active nor failed. */
export function firstPendingIndexes(ctx: SyncCtx, count: number, completions: number): number[] {
  if (count === 0) return [];
  const active = [...new Set(ctx.activePods.map(completionIndex).filter((i) => i !== UNKNOWN_INDEX))].sort((a, b) => a - b);
  let nonPending: Interval[] = withIndexes(ctx.succeededIndexes, active);
  const failed = new Set<number>();
  for (const v of ctx.failedIndexes ?? []) for (let i = v.first; i <= v.last; i++) failed.add(i);
  if (failed.size) nonPending = withIndexes(nonPending, [...failed].sort((a, b) => a - b));
  const out: number[] = [];
  let candidate = 0;
  for (const v of nonPending) {
    for (; candidate < completions && out.length < count && candidate < v.first; candidate++) out.push(candidate);
    if (candidate < v.last + 1) candidate = v.last + 1;
  }
  for (; candidate < completions && out.length < count; candidate++) out.push(candidate);
  return out;
}

/** Deletes pods the Job no longer wants (suspended, too many): their finalizer first, so they are never counted (upstream deleteJobPods). */
async function deleteJobPods(d: ManageDeps, ctx: SyncCtx, pods: readonly KObject[]): Promise<{ removed: number; removedReady: number; error?: unknown }> {
  d.expectations.expect(ctx.key, 0, pods.map((p) => p.metadata.uid ?? ''));
  let removed = 0;
  let removedReady = 0;
  let error: unknown;
  await Promise.all(
    pods.map(async (pod) => {
      try {
        if (hasTrackingFinalizer(pod)) await removeTrackingFinalizer(d, d.pods, pod, JOB_TRACKING_FINALIZER);
        await d.podControl.delete(ctx.job, pod);
        removed++;
        if (isPodReady(pod)) removedReady++;
      } catch (err) {
        d.expectations.deletionObserved(ctx.key, pod.metadata.uid);
        if (isNotFound(err)) removed++;
        else error ??= err;
      }
    }),
  );
  return { removed, removedReady, error };
}

/** Upstream addCompletionIndexEnvVariables: JOB_COMPLETION_INDEX from the index label (PodIndexLabel, GA). */
function addIndexEnv(podSpec: Record<string, unknown>): void {
  for (const c of [...recs(podSpec.initContainers), ...recs(podSpec.containers)]) {
    const env = recs(c.env);
    if (env.some((e) => e.name === JOB_COMPLETION_INDEX_ENV)) continue;
    c.env = [...env, { name: JOB_COMPLETION_INDEX_ENV, valueFrom: { fieldRef: { fieldPath: `metadata.labels['${JOB_COMPLETION_INDEX}']` } } }];
  }
}

/** Upstream podGenerateNameWithIndex. */
function generateNameWithIndex(jobName: string, index: number): string {
  const suffix = `-${index}-`;
  const prefix = `${jobName}${suffix}`;
  return prefix.length > MAX_GENERATED_NAME_LENGTH ? `${prefix.slice(0, MAX_GENERATED_NAME_LENGTH - suffix.length)}${suffix}` : prefix;
}

/**
 * The pod of one creation: the template with the tracking finalizer and, for an index, its
 * annotation, label, hostname and name (and, with backoffLimitPerIndex, the failure counts
 * carried over from the pod it replaces).
 */
function podFor(job: KObject, template: Record<string, unknown>, index: number, perIndex: boolean, replaced?: KObject): KObject {
  const tpl = structuredClone(template);
  const meta = (rec(tpl.metadata) ?? {}) as Record<string, unknown>;
  tpl.metadata = meta;
  meta.finalizers = [...new Set([...((meta.finalizers as string[] | undefined) ?? []), JOB_TRACKING_FINALIZER])];
  const ref = newControllerRef(job, 'batch/v1', 'Job');
  if (index === UNKNOWN_INDEX) return podFromTemplate(tpl, ref, { generateName: podNamePrefix(job.metadata.name!) });
  meta.annotations = { ...(rec(meta.annotations) ?? {}), [JOB_COMPLETION_INDEX]: String(index), ...(perIndex ? failureCountAnnotations(job, replaced) : {}) };
  meta.labels = { ...(rec(meta.labels) ?? {}), [JOB_COMPLETION_INDEX]: String(index) };
  const spec = (rec(tpl.spec) ?? {}) as Record<string, unknown>;
  spec.hostname = `${job.metadata.name}-${index}`;
  tpl.spec = spec;
  return podFromTemplate(tpl, ref, { generateName: generateNameWithIndex(job.metadata.name!, index) });
}

/** A create refused because the namespace is going away: nothing to retry (upstream ignores NamespaceTerminatingCause). */
function namespaceTerminating(err: unknown): boolean {
  return err instanceof ApiError && err.code === 403 && /is being terminated/.test(err.message);
}

async function createPods(d: ManageDeps, ctx: SyncCtx, diff: number, indexes: readonly number[]): Promise<{ created: number; error?: unknown }> {
  const job = ctx.job;
  d.expectations.expect(ctx.key, diff);
  const template = structuredClone(rec(jobSpec(job).template) ?? {});
  if (isIndexedJob(job)) addIndexEnv((rec(template.spec) ?? {}));
  let error: unknown;
  let created = 0;
  const res = await slowStartBatch(diff, 1, async (i) => {
    try {
      const ix = indexes[i] ?? UNKNOWN_INDEX;
      await d.podControl.create(job, podFor(job, template, ix, hasBackoffLimitPerIndex(job), ctx.delayedDeletion.get(ix)));
      created++;
    } catch (err) {
      // The informer will never see this pod.
      d.expectations.creationObserved(ctx.key);
      if (namespaceTerminating(err)) return;
      error ??= err;
      throw err;
    }
  });
  // Pods never attempted after a failed batch will not be seen either.
  const attempted = res.error === undefined ? diff : Math.min(diff, attemptedCount(res.ok, diff));
  for (let i = attempted; i < diff; i++) d.expectations.creationObserved(ctx.key);
  return { created, error };
}

/** How many creates slowStartBatch attempted when its batches (1, 2, 4, ...) stopped at the one holding the failure. */
function attemptedCount(ok: number, total: number): number {
  let done = 0;
  for (let batch = 1; done < total; batch *= 2) {
    const size = Math.min(batch, total - done);
    done += size;
    if (done > ok) return done;
  }
  return done;
}

/** Upstream manageJob; returns the number of active pods after it. */
export async function manageJob(d: ManageDeps, ctx: SyncCtx): Promise<ManageResult> {
  const job = ctx.job;
  const spec = jobSpec(job);
  const nowMs = d.now().getTime();
  let active = ctx.activePods.length;
  const parallelism = num(spec.parallelism) ?? 1;
  if (spec.suspend === true) {
    const r = await deleteJobPods(d, ctx, activePodsForRemoval(job, ctx.activePods, active, nowMs));
    ctx.terminating += r.removed;
    ctx.ready -= r.removedReady;
    return { active: active - r.removed, error: r.error };
  }
  const completions = completionsOf(job);
  let wantActive: number;
  if (completions === undefined) wantActive = ctx.succeeded > 0 ? active : parallelism;
  else wantActive = Math.max(0, Math.min(completions - ctx.succeeded, parallelism));
  const rmAtLeast = Math.max(0, active - wantActive);
  const toDelete = activePodsForRemoval(job, ctx.activePods, rmAtLeast, nowMs).slice(0, MAX_POD_CREATE_DELETE_PER_SYNC);
  if (toDelete.length > 0) {
    const r = await deleteJobPods(d, ctx, toDelete);
    ctx.terminating += r.removed;
    ctx.ready -= r.removedReady;
    return { active: active - r.removed, error: r.error };
  }
  const terminating = onlyReplaceFailedPods(job) ? ctx.terminating : 0;
  let diff = wantActive - terminating - active;
  if (diff <= 0) return { active };
  // With backoffLimitPerIndex each index waits its own back-off instead.
  const perIndex = hasBackoffLimitPerIndex(job);
  const wait = perIndex ? 0 : remainingBackoffMs(ctx.newBackoff, nowMs);
  if (wait > 0) {
    d.requeueAfter(ctx.key, wait);
    return { active };
  }
  diff = Math.min(diff, MAX_POD_CREATE_DELETE_PER_SYNC);
  let indexes: number[] = [];
  if (isIndexedJob(job)) {
    indexes = firstPendingIndexes(ctx, diff, completions ?? 0);
    if (perIndex) {
      const ready = indexesReadyNow(indexes, ctx.delayedDeletion, nowMs);
      if (ready.waitMs > 0) d.requeueAfter(ctx.key, ready.waitMs);
      indexes = ready.now;
    }
    diff = indexes.length;
    if (diff === 0) return { active };
  }
  const r = await createPods(d, ctx, diff, indexes);
  active += r.created;
  return { active, error: r.error };
}
