import { isDeepStrictEqual } from 'node:util';
import { CronParseError, parseCronSchedule } from '../../api/cron-schedule';
import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { Zone } from '../../api/zoned-time';
import { objectReferenceSchema, withMeta } from '../common-schemas';
import { nonNegative } from '../common-validation';
import { coveredByDeclarative, invalid, notSupported, required } from '../field-errors';
import { formatLabelSelector } from '../../api/label-selector';
import { containerCells } from '../container-cells';
import { validateAnnotations, validateLabels } from '../meta-validation';
import { ensureRec, rec, setDefault, str } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { atomicList, bool, described, int32, int64, obj, ptr, str as strField, strEnum, time } from '../schema-builders';
import { ageColumn, column, translateTimestampSince, type Now } from '../table';
import { jobTemplateSpecSchema } from './job-schema';
import { validateJobSpecBody } from './job-validation';
import { defaultPodTemplate } from './pod-template';

/**
 * batch/v1 CronJob: schema with upstream's field numbers, defaults (SetDefaults_CronJob),
 * validation (schedule by robfig/cron's grammar, timeZone from the tz database, the Job template
 * as a Job's but with a generated selector) and the `kubectl get cronjobs` columns. The
 * controller is controllers/workloads/cronjob-controller.ts.
 */

const BATCH = 'k8s.io.api.batch.v1';

export const CONCURRENCY_POLICIES: readonly string[] = ['Allow', 'Forbid', 'Replace'];

export const cronJobSchema = withMeta(`${BATCH}.CronJob`, {
  spec: [
    2,
    described('Specification of the desired behavior of the CronJob, including the schedule.', obj(`${BATCH}.CronJobSpec`, {
      schedule: [1, ptr(strField('The schedule in Cron format (five fields, or a macro such as @hourly).'))],
      timeZone: [8, ptr(strField('The tz database name of the zone the schedule is read in; the controller\'s local zone when unset.'))],
      startingDeadlineSeconds: [2, ptr(int64('How late (seconds) a Job may still be started for a missed schedule.'))],
      concurrencyPolicy: [3, strEnum(CONCURRENCY_POLICIES, 'How concurrent runs are treated: Allow (default), Forbid (skip a run while one is active) or Replace.')],
      suspend: [4, ptr(bool('Whether subsequent runs are suspended (running Jobs are left alone). Defaults to false.'))],
      jobTemplate: [5, described('The Job created at each scheduled time.', jobTemplateSpecSchema)],
      successfulJobsHistoryLimit: [6, ptr(int32('How many successful finished Jobs to keep. Defaults to 3.'))],
      failedJobsHistoryLimit: [7, ptr(int32('How many failed finished Jobs to keep. Defaults to 1.'))],
    })),
  ],
  status: [
    3,
    described('Current status of the CronJob.', obj(`${BATCH}.CronJobStatus`, {
      active: [1, atomicList(objectReferenceSchema, 'References to the Jobs currently running.')],
      lastScheduleTime: [4, time('The last time a Job was scheduled.')],
      lastSuccessfulTime: [5, time('The last time a Job completed successfully.')],
    })),
  ],
});

export function defaultCronJob(cj: KObject): void {
  const spec = ensureRec(cj, 'spec');
  setDefault(spec, 'concurrencyPolicy', 'Allow');
  setDefault(spec, 'suspend', false, false);
  setDefault(spec, 'successfulJobsHistoryLimit', 3, false);
  setDefault(spec, 'failedJobsHistoryLimit', 1, false);
  defaultPodTemplate(rec(rec(spec.jobTemplate)?.spec)?.template);
}

/** Upstream's timeZone name rule (IANA naming, 0-9 and + tolerated for legacy names). */
const TIME_ZONE_PART = /^[A-Za-z.\-_0-9+]{1,14}$/;

/** Upstream validateTimeZone. */
export function validateTimeZone(tz: unknown, path: string): Cause[] {
  if (tz === undefined || tz === null) return [];
  if (typeof tz !== 'string' || tz.length === 0) return [invalid(path, tz, 'timeZone must be nil or non-empty string')];
  for (const part of tz.split('/')) {
    if (part === '.' || part === '..' || part.startsWith('-') || !TIME_ZONE_PART.test(part)) return [invalid(path, tz, `unknown time zone ${tz}`)];
  }
  const out: Cause[] = [];
  if (tz.toLowerCase() === 'local') out.push(invalid(path, tz, 'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones'));
  try {
    Zone.load(tz);
  } catch (err) {
    out.push(invalid(path, tz, (err as Error).message));
  }
  return out;
}

/** Upstream validateScheduleFormat: robfig's parse, and no TZ= in the schedule (unless the old one had it). */
function validateSchedule(schedule: string, allowTz: boolean, timeZone: unknown, path: string): Cause[] {
  const out: Cause[] = [];
  try {
    parseCronSchedule(schedule, 'UTC');
  } catch (err) {
    if (!(err instanceof CronParseError)) throw err;
    out.push(invalid(path, schedule, err.message));
  }
  if (allowTz && schedule.includes('TZ') && timeZone !== undefined && timeZone !== null) out.push(invalid(path, schedule, 'cannot use both timeZone field and TZ or CRON_TZ in schedule'));
  else if (!allowTz && schedule.includes('TZ')) out.push(invalid(path, schedule, 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead'));
  return out;
}

/** Upstream ValidateJobTemplateSpec: a Job spec whose selector the controller generates. */
function validateJobTemplate(tpl: Record<string, unknown>, path: string): Cause[] {
  const meta = rec(tpl.metadata) ?? {};
  const spec = rec(tpl.spec) ?? {};
  const out = [...validateLabels(meta.labels, `${path}.metadata.labels`), ...validateAnnotations(meta.annotations, `${path}.metadata.annotations`)];
  out.push(...validateJobSpecBody(spec, `${path}.spec`));
  if (spec.selector !== undefined && spec.selector !== null) out.push(invalid(`${path}.spec.selector`, spec.selector, '`selector` will be auto-generated'));
  if (spec.manualSelector === true) out.push(notSupported(`${path}.spec.manualSelector`, true, ['nil', 'false']));
  return out;
}

function validate(cj: KObject, old?: KObject, subresource?: string): Cause[] {
  if (subresource === 'status') return [];
  const spec = rec(cj.spec) ?? {};
  const oldSpec = old ? (rec(old.spec) ?? {}) : undefined;
  const out: Cause[] = [];
  // The controller names each Job <cronjob>-<minutes since the epoch>: 11 characters more, within 63.
  const name = cj.metadata.name ?? '';
  if (name.length > 52) out.push(invalid('metadata.name', name, 'must be no more than 52 characters'));
  const schedule = str(spec.schedule) ?? '';
  if (schedule === '') out.push(required('spec.schedule'));
  else out.push(...validateSchedule(schedule, (str(oldSpec?.schedule) ?? '').includes('TZ'), spec.timeZone, 'spec.schedule'));
  out.push(...nonNegative('spec.startingDeadlineSeconds', spec.startingDeadlineSeconds));
  if (!oldSpec || !isDeepStrictEqual(oldSpec.timeZone, spec.timeZone)) out.push(...validateTimeZone(spec.timeZone, 'spec.timeZone'));
  const policy = spec.concurrencyPolicy;
  if (policy === undefined || policy === null || policy === '') out.push(required('spec.concurrencyPolicy'));
  else if (typeof policy !== 'string' || !CONCURRENCY_POLICIES.includes(policy)) out.push(coveredByDeclarative(notSupported('spec.concurrencyPolicy', policy, CONCURRENCY_POLICIES)));
  out.push(...validateJobTemplate(rec(spec.jobTemplate) ?? {}, 'spec.jobTemplate'));
  out.push(...nonNegative('spec.successfulJobsHistoryLimit', spec.successfulJobsHistoryLimit));
  out.push(...nonNegative('spec.failedJobsHistoryLimit', spec.failedJobsHistoryLimit));
  return out;
}

/** Upstream printBoolPtr. */
const boolCell = (v: unknown) => (v === true ? 'True' : v === false ? 'False' : '<unset>');

export function cronJobColumns(now: Now): TableColumn[] {
  const jobSpec = (o: KObject) => rec(rec(rec(o.spec)?.jobTemplate)?.spec);
  const podSpec = (o: KObject) => rec(jobSpec(o)?.template)?.spec;
  const lastSchedule = (o: KObject) => {
    const t = rec(o.status)?.lastScheduleTime;
    return t === undefined || t === null ? '<none>' : translateTimestampSince(t, now);
  };
  return [
    column('Schedule', 'string', 'The schedule in Cron format.', (o) => str(rec(o.spec)?.schedule) ?? ''),
    column('Timezone', 'string', 'The time zone name for the given schedule.', (o) => str(rec(o.spec)?.timeZone) ?? '<none>'),
    column('Suspend', 'boolean', 'This flag tells the controller to suspend subsequent executions.', (o) => boolCell(rec(o.spec)?.suspend)),
    column('Active', 'integer', 'A list of pointers to currently running jobs.', (o) => (Array.isArray(rec(o.status)?.active) ? (rec(o.status)!.active as unknown[]).length : 0)),
    column('Last Schedule', 'string', 'Information when was the last time the job was successfully scheduled.', lastSchedule),
    ageColumn(now),
    column('Containers', 'string', 'Names of each container in the template.', (o) => containerCells(podSpec(o)).names, 1),
    column('Images', 'string', 'Images referenced by each container in the template.', (o) => containerCells(podSpec(o)).images, 1),
    column('Selector', 'string', 'A label query over pods that should match the pod count.', (o) => formatLabelSelector(jobSpec(o)?.selector), 1),
  ];
}

export function makeCronJobType(now: Now = Date.now): ResourceType {
  return {
    group: 'batch',
    version: 'v1',
    resource: 'cronjobs',
    singular: 'cronjob',
    kind: 'CronJob',
    listKind: 'CronJobList',
    namespaced: true,
    shortNames: ['cj'],
    categories: ['all'],
    schema: cronJobSchema,
    hasStatus: true,
    specFields: ['spec'],
    tableColumns: cronJobColumns(now),
    defaults: defaultCronJob,
    validate,
    declarativeCoverage: ['spec.concurrencyPolicy'],
  };
}

export const cronJobType: ResourceType = makeCronJobType();
