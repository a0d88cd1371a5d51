import type { EventRecorder } from '../../../common/events/recorder';
import { isNotFound } from '../../api/errors';
import type { Interval } from '../../api/job-indexes';
import type { KObject } from '../../api/types';
import type { ResourceType } from '../../registry/resource-type';
import type { ObjectStore, WriteContext } from '../../store/object-store';
import type { BackoffRecord } from './job-backoff';
import type { JobCondition } from './job-conditions';
import { refTo } from './pod-control';

/**
 * The state one sync of a Job works on (upstream syncJobCtx), the Job's status as the controller
 * keeps it, and the status write. Shared by job-sync.ts, job-manage.ts and job-tracking.ts.
 */

export interface JobStatus {
  conditions: JobCondition[];
  startTime?: string;
  completionTime?: string;
  active: number;
  succeeded: number;
  failed: number;
  terminating?: number;
  ready?: number;
  completedIndexes?: string;
  failedIndexes?: string;
  uncountedTerminatedPods: { succeeded: string[]; failed: string[] };
}

export interface SyncCtx {
  /** The queue key: namespace/name. */
  key: string;
  /** A copy of the Job; its status is `status`. */
  job: KObject;
  status: JobStatus;
  /** Every pod the Job controls, claimed. */
  pods: KObject[];
  activePods: KObject[];
  ready: number;
  terminating: number;
  /** The uids of status.uncountedTerminatedPods at the start of the sync. */
  uncounted: { succeeded: Set<string>; failed: Set<string> };
  /** Pods whose finalizer removal was issued and not yet seen. */
  expectedRmFinalizers: ReadonlySet<string>;
  succeeded: number;
  failed: number;
  newBackoff: BackoffRecord;
  /** The condition the Job finishes (or is about to finish) with, when it does. */
  finishedCondition?: JobCondition;
  prevSucceededIndexes: Interval[];
  succeededIndexes: Interval[];
  failedIndexes?: Interval[];
  /** backoffLimitPerIndex: per index, the failed pod whose finalizer waits for its replacement (it carries the index's failure count). */
  delayedDeletion: Map<number, KObject>;
}

/** The status as read from the Job, with upstream's empty uncountedTerminatedPods when absent. */
export function readStatus(job: KObject): JobStatus {
  const s = (job.status ?? {}) as Partial<JobStatus>;
  return {
    ...s,
    conditions: [...(s.conditions ?? [])],
    active: s.active ?? 0,
    succeeded: s.succeeded ?? 0,
    failed: s.failed ?? 0,
    uncountedTerminatedPods: { succeeded: [...(s.uncountedTerminatedPods?.succeeded ?? [])], failed: [...(s.uncountedTerminatedPods?.failed ?? [])] },
  };
}

/** The status in upstream's JSON form: zero counters, empty texts and empty lists omitted. */
function wireStatus(s: JobStatus): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (s.conditions.length) out.conditions = s.conditions;
  if (s.startTime) out.startTime = s.startTime;
  if (s.completionTime) out.completionTime = s.completionTime;
  if (s.active) out.active = s.active;
  if (s.succeeded) out.succeeded = s.succeeded;
  if (s.failed) out.failed = s.failed;
  if (s.terminating !== undefined) out.terminating = s.terminating;
  if (s.completedIndexes) out.completedIndexes = s.completedIndexes;
  if (s.failedIndexes !== undefined) out.failedIndexes = s.failedIndexes;
  const u: Record<string, string[]> = {};
  if (s.uncountedTerminatedPods.succeeded.length) u.succeeded = s.uncountedTerminatedPods.succeeded;
  if (s.uncountedTerminatedPods.failed.length) u.failed = s.uncountedTerminatedPods.failed;
  out.uncountedTerminatedPods = u;
  if (s.ready !== undefined) out.ready = s.ready;
  return out;
}

export interface StatusWriter {
  store: ObjectStore;
  jobs: ResourceType;
  ctx: WriteContext;
  /** Told the resourceVersion of every status the controller writes. */
  written?(key: string, resourceVersion: string): void;
}

/**
 * Writes ctx.status to the Job's status sub-resource at the resourceVersion the sync read (a
 * concurrent change is a conflict and the sync is retried, as upstream's UpdateStatus), and
 * carries the new resourceVersion into the working copy for the next write of the same sync.
 */
export async function writeStatus(w: StatusWriter, ctx: SyncCtx): Promise<void> {
  const job = ctx.job;
  const desired = { ...job, status: wireStatus(ctx.status) };
  const { object } = await w.store.update(w.jobs, job.metadata.namespace ?? '', job.metadata.name!, () => structuredClone(desired), { ...w.ctx, subresource: 'status' });
  job.metadata.resourceVersion = object.metadata.resourceVersion;
  job.status = object.status;
  w.written?.(ctx.key, object.metadata.resourceVersion ?? '');
}

/** Removes the tracking finalizer from a pod, if it is still the same pod; a pod already gone is success. */
export async function removeTrackingFinalizer(w: Pick<StatusWriter, 'store' | 'ctx'>, pods: ResourceType, pod: KObject, finalizer: string): Promise<void> {
  try {
    await w.store.update(
      pods,
      pod.metadata.namespace ?? '',
      pod.metadata.name!,
      (cur) => {
        if (!cur || cur.metadata.uid !== pod.metadata.uid) return cur ?? pod;
        const rest = (cur.metadata.finalizers ?? []).filter((f) => f !== finalizer);
        if (rest.length) cur.metadata.finalizers = rest;
        else delete cur.metadata.finalizers;
        delete cur.metadata.resourceVersion;
        return cur;
      },
      w.ctx,
    );
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

/** Upstream recordJobFinished: Completed, or the failure reason and message, as an event on the Job. */
export function recordFinished(recorder: EventRecorder, job: KObject, cond: JobCondition, completions: number | undefined, succeeded: number): void {
  if (cond.type === 'Complete') {
    if (completions !== undefined && succeeded > completions) recorder.event(refTo(job), 'Warning', 'TooManySucceededPods', 'Too many succeeded pods running after completion count reached');
    recorder.event(refTo(job), 'Normal', 'Completed', 'Job completed');
  } else {
    recorder.event(refTo(job), 'Warning', cond.reason ?? '', cond.message ?? '');
  }
}
