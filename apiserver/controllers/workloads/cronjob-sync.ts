import type { EventRecorder } from '../../../common/events/recorder';
import { CRONJOB_SCHEDULED_TIMESTAMP } from '../../api/batch-names';
import { CronParseError, parseCronSchedule, type CronSchedule } from '../../api/cron-schedule';
import { ApiError, isAlreadyExists, isNotFound } from '../../api/errors';
import { rfc3339 } from '../../api/time';
import type { KObject } from '../../api/types';
import { Zone } from '../../api/zoned-time';
import { num, rec, str } from '../../registry/obj-access';
import type { ResourceType } from '../../registry/resource-type';
import type { ObjectStore, WriteContext } from '../../store/object-store';
import { controllerRefOf, newControllerRef } from './controller-ref';
import { jobNameFor, mostRecentScheduleTime, nextScheduleTimeDuration, rfc3339In } from './cronjob-schedule';
import { finishedType } from './job-conditions';
import { refTo } from './pod-control';

/**
 * Upstream syncCronJob (pkg/controller/cronjob/cronjob_controllerv2.go): reconcile the active list
 * with the CronJob's Jobs, then, unless suspended, start the Job of the most recent scheduled time
 * not yet run (at most one, however many were missed) within startingDeadlineSeconds, as the
 * concurrency policy allows. Returns when to look again.
 */

export interface CronSyncDeps {
  store: ObjectStore;
  jobs: ResourceType;
  ctx: WriteContext;
  recorder: EventRecorder;
  now(): Date;
  /** The zone of schedules without timeZone (upstream: the controller manager's local zone). */
  localZone: string;
}

type Ref = { kind?: string; namespace?: string; name?: string; uid?: string; apiVersion?: string; resourceVersion?: string };

export interface CronStatus {
  active: Ref[];
  lastScheduleTime?: string;
  lastSuccessfulTime?: string;
}

export function readCronStatus(cj: KObject): CronStatus {
  const s = (cj.status ?? {}) as Partial<CronStatus>;
  return { ...s, active: [...(s.active ?? [])] };
}

const jobRef = (job: KObject): Ref => ({ kind: 'Job', namespace: job.metadata.namespace, name: job.metadata.name, uid: job.metadata.uid, apiVersion: 'batch/v1', resourceVersion: job.metadata.resourceVersion });

/** Upstream formatSchedule: the schedule with its zone as a TZ= prefix (warning about a TZ= the user wrote). */
function formatSchedule(cj: KObject, recorder?: EventRecorder): string {
  const spec = rec(cj.spec) ?? {};
  const schedule = str(spec.schedule) ?? '';
  if (schedule.includes('TZ')) {
    recorder?.event(refTo(cj), 'Warning', 'UnsupportedSchedule', `CRON_TZ or TZ used in schedule ${JSON.stringify(schedule)} is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details`);
    return schedule;
  }
  const tz = str(spec.timeZone);
  if (tz === undefined) return schedule;
  try {
    Zone.load(tz);
  } catch {
    return schedule;
  }
  return `TZ=${tz} ${schedule}`;
}

/** The CronJob's schedule, or the parser's message. */
export function scheduleOf(cj: KObject, localZone: string, recorder?: EventRecorder): CronSchedule | { error: string } {
  try {
    return parseCronSchedule(formatSchedule(cj, recorder), localZone);
  } catch (err) {
    if (err instanceof CronParseError) return { error: err.message };
    throw err;
  }
}

/** Upstream getJobFromTemplate2: the template's labels, annotations and spec, the scheduled time, a controller reference. */
function jobFor(cj: KObject, scheduledMs: number): KObject {
  const tpl = rec(rec(cj.spec)?.jobTemplate) ?? {};
  const meta = rec(tpl.metadata) ?? {};
  // Upstream formats the annotation in the CronJob's zone, or UTC (time.LoadLocation("")) without one.
  const zone = Zone.load(str(rec(cj.spec)?.timeZone) ?? '');
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: jobNameFor(cj, scheduledMs),
      ...(meta.labels ? { labels: { ...(meta.labels as Record<string, string>) } } : {}),
      annotations: { ...((meta.annotations as Record<string, string> | undefined) ?? {}), [CRONJOB_SCHEDULED_TIMESTAMP]: rfc3339In(scheduledMs, zone) },
      ownerReferences: [newControllerRef(cj, 'batch/v1', 'CronJob')],
    },
    spec: structuredClone(tpl.spec ?? {}),
  };
}

/** Upstream deleteJob: the Job and its pods (background propagation), and its active reference. */
export async function deleteJob(d: CronSyncDeps, cj: KObject, status: CronStatus, job: KObject): Promise<boolean> {
  try {
    await d.store.delete(d.jobs, job.metadata.namespace ?? '', job.metadata.name!, { propagationPolicy: 'Background' }, d.ctx);
  } catch (err) {
    if (!isNotFound(err)) {
      d.recorder.event(refTo(cj), 'Warning', 'FailedDelete', `Deleted job: ${(err as Error).message}`);
      return false;
    }
  }
  status.active = status.active.filter((r) => r.uid !== job.metadata.uid);
  d.recorder.event(refTo(cj), 'Normal', 'SuccessfulDelete', `Deleted job ${job.metadata.name}`);
  return true;
}

/** The active list against the Jobs: finished ones leave it, missing ones too, unknown running ones are reported. */
async function reconcileActive(d: CronSyncDeps, cj: KObject, status: CronStatus, jobs: readonly KObject[]): Promise<boolean> {
  let changed = false;
  const uids = new Set(jobs.map((j) => j.metadata.uid));
  for (const j of jobs) {
    const listed = status.active.some((r) => r.uid === j.metadata.uid);
    const finished = finishedType(j);
    if (!listed && !finished) {
      d.recorder.event(refTo(cj), 'Warning', 'UnexpectedJob', `Saw a job that the controller did not create or forgot: ${j.metadata.name}`);
    } else if (listed && finished) {
      status.active = status.active.filter((r) => r.uid !== j.metadata.uid);
      d.recorder.event(refTo(cj), 'Normal', 'SawCompletedJob', `Saw completed job: ${j.metadata.name}, condition: ${finished}`);
      changed = true;
    }
    if (finished === 'Complete') {
      const at = str(rec(j.status)?.completionTime);
      if (at && (!status.lastSuccessfulTime || Date.parse(at) > Date.parse(status.lastSuccessfulTime))) {
        status.lastSuccessfulTime = at;
        changed = true;
      }
    }
  }
  for (const r of [...status.active]) {
    if (uids.has(r.uid)) continue;
    // Not in the cache: ask the store before declaring it gone (a slow watch is not a missing Job).
    try {
      await d.store.get(d.jobs, r.namespace ?? cj.metadata.namespace ?? '', r.name ?? '');
    } catch (err) {
      if (!isNotFound(err)) throw err;
      d.recorder.event(refTo(cj), 'Normal', 'MissingJob', `Active job went missing: ${r.name}`);
      status.active = status.active.filter((x) => x.uid !== r.uid);
      changed = true;
    }
  }
  return changed;
}

export interface CronSyncResult {
  /** Wait this long before the next sync (undefined: only a change brings it back). */
  requeueAfterMs?: number;
  statusChanged: boolean;
}

/** Upstream syncCronJob, up to the Job creation and the active list update. */
export async function syncCronJob(d: CronSyncDeps, cj: KObject, status: CronStatus, jobs: readonly KObject[]): Promise<CronSyncResult> {
  let changed = await reconcileActive(d, cj, status, jobs);
  const spec = rec(cj.spec) ?? {};
  if (cj.metadata.deletionTimestamp) return { statusChanged: changed };
  const tz = str(spec.timeZone);
  if (tz !== undefined) {
    try {
      Zone.load(tz);
    } catch (err) {
      d.recorder.event(refTo(cj), 'Warning', 'UnknownTimeZone', `invalid timeZone: ${JSON.stringify(tz)}: ${(err as Error).message}`);
      return { statusChanged: changed };
    }
  }
  if (spec.suspend === true) return { statusChanged: changed };
  const sched = scheduleOf(cj, d.localZone, d.recorder);
  if ('error' in sched) {
    d.recorder.event(refTo(cj), 'Warning', 'UnparseableSchedule', `unparseable schedule: ${JSON.stringify(spec.schedule)} : ${sched.error}`);
    return { statusChanged: changed };
  }
  const now = d.now().getTime();
  // The status as this sync has it (lastScheduleTime) decides the times.
  const view: KObject = { ...cj, status };
  const recent = mostRecentScheduleTime(view, now, sched, true);
  const later = () => nextScheduleTimeDuration(view, now, sched);
  if (recent.error !== undefined) {
    d.recorder.event(refTo(cj), 'Warning', 'InvalidSchedule', `invalid schedule: ${str(spec.schedule)} : ${recent.error}`);
    return { statusChanged: changed };
  }
  if (recent.mostRecent === undefined || recent.mostRecent > now) return { requeueAfterMs: later(), statusChanged: changed };
  if (recent.missed === 'many') {
    d.recorder.event(refTo(cj), 'Warning', 'TooManyMissedTimes', 'too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew');
  }
  const scheduled = recent.mostRecent;
  const deadline = num(spec.startingDeadlineSeconds);
  if (deadline !== undefined && scheduled + deadline * 1000 < now) {
    d.recorder.event(refTo(cj), 'Warning', 'MissSchedule', `Missed scheduled time to start a job: ${new Date(scheduled).toUTCString().replace('GMT', '+0000')}`);
    return { requeueAfterMs: later(), statusChanged: changed };
  }
  const name = jobNameFor(cj, scheduled);
  if (status.active.some((r) => r.name === name) || (status.lastScheduleTime && Date.parse(status.lastScheduleTime) === scheduled)) {
    return { requeueAfterMs: later(), statusChanged: changed };
  }
  if (spec.concurrencyPolicy === 'Forbid' && status.active.length > 0) {
    d.recorder.event(refTo(cj), 'Normal', 'JobAlreadyActive', 'Not starting job because prior execution is running and concurrency policy is Forbid');
    return { requeueAfterMs: later(), statusChanged: changed };
  }
  if (spec.concurrencyPolicy === 'Replace') {
    for (const r of [...status.active]) {
      let job: KObject;
      try {
        job = await d.store.get(d.jobs, r.namespace ?? cj.metadata.namespace ?? '', r.name ?? '');
      } catch (err) {
        d.recorder.event(refTo(cj), 'Warning', 'FailedGet', `Get job: ${(err as Error).message}`);
        throw err;
      }
      if (!(await deleteJob(d, cj, status, job))) throw new Error(`could not replace job ${job.metadata.namespace}/${job.metadata.name}`);
      changed = true;
    }
  }
  const created = await createJob(d, cj, status, scheduled);
  if (!created) return { statusChanged: changed };
  status.active.push(jobRef(created));
  status.lastScheduleTime = rfc3339(new Date(scheduled));
  return { requeueAfterMs: later(), statusChanged: true };
}

/** Creates the scheduled Job; one already there (a restart between create and status) is taken if it is ours and unlisted. */
async function createJob(d: CronSyncDeps, cj: KObject, status: CronStatus, scheduled: number): Promise<KObject | undefined> {
  const ns = cj.metadata.namespace ?? '';
  const want = jobFor(cj, scheduled);
  try {
    const job = await d.store.create(d.jobs, ns, want, d.ctx);
    d.recorder.event(refTo(cj), 'Normal', 'SuccessfulCreate', `Created job ${job.metadata.name}`);
    return job;
  } catch (err) {
    if (err instanceof ApiError && err.code === 403 && /is being terminated/.test(err.message)) throw err;
    if (!isAlreadyExists(err)) {
      d.recorder.event(refTo(cj), 'Warning', 'FailedCreate', `Error creating job: ${(err as Error).message}`);
      throw err;
    }
  }
  const existing = await d.store.get(d.jobs, ns, want.metadata.name!);
  if (controllerRefOf(existing)?.uid !== cj.metadata.uid) return undefined;
  if (status.active.some((r) => r.uid === existing.metadata.uid)) return undefined;
  return existing;
}
