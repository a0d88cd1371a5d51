import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { makeCronJobType } from '../../../../../apiserver/registry/types/cronjobs';
import { ago, cells, now } from './fixtures';

const cronJobType = makeCronJobType(now);

function cronJob(spec: Record<string, unknown> = {}, name = 'hello'): KObject {
  const o: KObject = {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name, namespace: 'default', creationTimestamp: ago(600_000) },
    spec: { schedule: '*/1 * * * *', jobTemplate: { spec: { template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'hello', image: 'busybox' }] } } } }, ...spec },
  };
  cronJobType.defaults!(o);
  return o;
}

const messages = (o: KObject, old?: KObject) => cronJobType.validate!(o, old).map((c) => `${c.field}: ${c.message}`);

test('defaults: Allow, not suspended, 3 successful and 1 failed Jobs kept; the pod template defaulted, the Job spec left alone', (t) => {
  const o = cronJob();
  t.like(o.spec, { concurrencyPolicy: 'Allow', suspend: false, successfulJobsHistoryLimit: 3, failedJobsHistoryLimit: 1 });
  const jobSpec = (o.spec as any).jobTemplate.spec;
  t.is(jobSpec.completions, undefined);
  t.is(jobSpec.template.spec.dnsPolicy, 'ClusterFirst');
  t.deepEqual(messages(o), []);
});

test('schedule: robfig/cron grammar and messages; TZ= refused in favour of timeZone', (t) => {
  t.deepEqual(messages(cronJob({ schedule: '*/5 * * *' })), ['spec.schedule: Invalid value: "*/5 * * *": expected exactly 5 fields, found 4: [*/5 * * *]']);
  t.deepEqual(messages(cronJob({ schedule: '@hourly' })), []);
  t.deepEqual(messages(cronJob({ schedule: 'TZ=UTC 0 * * * *' })), ['spec.schedule: Invalid value: "TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead']);
  // An object that already had TZ= keeps it (upstream allows it on update), but not with timeZone too.
  const old = cronJob({ schedule: 'TZ=UTC 0 * * * *' });
  t.deepEqual(messages(cronJob({ schedule: 'TZ=UTC 5 * * * *' }), old), []);
  t.deepEqual(messages(cronJob({ schedule: 'TZ=UTC 5 * * * *', timeZone: 'UTC' }), old), ['spec.schedule: Invalid value: "TZ=UTC 5 * * * *": cannot use both timeZone field and TZ or CRON_TZ in schedule']);
  const noSchedule = cronJob();
  delete (noSchedule.spec as any).schedule;
  t.deepEqual(messages(noSchedule), ['spec.schedule: Required value']);
});

test('timeZone: tz database names only', (t) => {
  t.deepEqual(messages(cronJob({ timeZone: 'America/New_York' })), []);
  t.deepEqual(messages(cronJob({ timeZone: 'Mars/Olympus_Mons' })), ['spec.timeZone: Invalid value: "Mars/Olympus_Mons": unknown time zone Mars/Olympus_Mons']);
  t.deepEqual(messages(cronJob({ timeZone: '' })), ['spec.timeZone: Invalid value: "": timeZone must be nil or non-empty string']);
  t.deepEqual(messages(cronJob({ timeZone: 'Local' })), [
    'spec.timeZone: Invalid value: "Local": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones',
    'spec.timeZone: Invalid value: "Local": unknown time zone Local',
  ]);
  t.deepEqual(messages(cronJob({ timeZone: '../etc/passwd' })), ['spec.timeZone: Invalid value: "../etc/passwd": unknown time zone ../etc/passwd']);
});

test('the Job template: selector generated, name short enough for the Job names', (t) => {
  const sel = cronJob();
  (sel.spec as any).jobTemplate.spec.selector = { matchLabels: { a: 'b' } };
  (sel.spec as any).jobTemplate.spec.manualSelector = true;
  t.deepEqual(messages(sel), [
    'spec.jobTemplate.spec.selector: Invalid value: {"matchLabels":{"a":"b"}}: `selector` will be auto-generated',
    'spec.jobTemplate.spec.manualSelector: Unsupported value: true: supported values: "nil", "false"',
  ]);
  t.deepEqual(messages(cronJob({}, 'x'.repeat(53))), [`metadata.name: Invalid value: "${'x'.repeat(53)}": must be no more than 52 characters`]);
  t.deepEqual(messages(cronJob({ concurrencyPolicy: 'Sometimes', startingDeadlineSeconds: -1 })), [
    'spec.startingDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0',
    'spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"',
  ]);
  const always = cronJob();
  (always.spec as any).jobTemplate.spec.template.spec.restartPolicy = 'Always';
  t.deepEqual(messages(always), ['spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"']);
});

test('kubectl columns: SCHEDULE, TIMEZONE, SUSPEND, ACTIVE, LAST SCHEDULE, AGE', (t) => {
  const o = cronJob({ timeZone: 'Etc/UTC' });
  t.deepEqual(cells(cronJobType, o), {
    Schedule: '*/1 * * * *',
    Timezone: 'Etc/UTC',
    Suspend: 'False',
    Active: 0,
    'Last Schedule': '<none>',
    Age: '10m',
    Containers: 'hello',
    Images: 'busybox',
    Selector: '<none>',
  });
  o.status = { active: [{ name: 'hello-1' }], lastScheduleTime: ago(30_000) };
  t.like(cells(cronJobType, o), { Active: 1, 'Last Schedule': '30s' });
  t.like(cells(cronJobType, cronJob()), { Timezone: '<none>' });
});
