import test from 'ava';
import { parseCronSchedule } from '../../../../../apiserver/api/cron-schedule';
import { rfc3339 } from '../../../../../apiserver/api/time';
import type { KObject } from '../../../../../apiserver/api/types';
import { CronJobController } from '../../../../../apiserver/controllers/workloads/cronjob-controller';
import { mostRecentScheduleTime } from '../../../../../apiserver/controllers/workloads/cronjob-schedule';
import { adminCtx, listAll, openBatch, until, type Batch, timerSet } from './batch-fixture';

const T0 = Date.parse('2025-03-01T12:00:00Z');
const minutes = (iso: string) => Math.floor(Date.parse(iso) / 60_000);

async function setup(t: { teardown(fn: () => Promise<void>): void }, timeZone = 'UTC'): Promise<Batch> {
  const b = await openBatch(t);
  const c = new CronJobController(b.f.store, b.f.cache, b.f.registry, { now: b.f.clock.now, log: b.f.log, recorder: b.recorder, clock: b.clock, informers: b.informers, timeZone });
  b.start((s) => c.run(s));
  return b;
}

function cronJob(name: string, spec: Record<string, unknown>): KObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name, namespace: 'default' },
    spec: {
      jobTemplate: { metadata: { labels: { app: name }, annotations: { team: 'a' } }, spec: { template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'c', image: 'busybox' }] } } } },
      ...spec,
    },
  };
}

const jobsOf = async (b: Batch) => (await listAll(b, b.jobs)).sort((x, y) => (x.metadata.name! < y.metadata.name! ? -1 : 1));
const cronStatus = async (b: Batch, name: string) => ((await b.f.store.get(b.cronJobs, 'default', name)).status ?? {}) as Record<string, any>;
const waitJobs = (b: Batch, n: number) => until(b.f, async () => ((j) => (j.length === n ? j : undefined))(await jobsOf(b)));

/** Plays the Job controller's part: the Job finished at the fake clock's now. */
async function finishJob(b: Batch, job: KObject, type: 'Complete' | 'Failed'): Promise<void> {
  const now = rfc3339(b.f.clock.now());
  await b.f.store.update(
    b.jobs,
    'default',
    job.metadata.name!,
    (cur) => ({ ...cur!, metadata: { ...cur!.metadata, resourceVersion: undefined }, status: { startTime: now, conditions: [{ type, status: 'True', lastTransitionTime: now }], ...(type === 'Complete' ? { completionTime: now, succeeded: 1 } : { failed: 1 }) } }),
    { ...adminCtx, subresource: 'status' },
  );
}

test('mostRecentScheduleTime: none yet, one, a few missed (one catch-up), more than 100 missed', (t) => {
  const sched = parseCronSchedule('*/5 * * * *', 'UTC');
  const cj = (last?: string): KObject => ({ metadata: { name: 'x', creationTimestamp: '2025-03-01T12:00:00Z' }, spec: {}, status: last ? { lastScheduleTime: last } : {} });
  t.deepEqual(mostRecentScheduleTime(cj(), T0 + 60_000, sched, true), { earliest: T0, missed: 'none' });
  t.deepEqual(mostRecentScheduleTime(cj(), T0 + 6 * 60_000, sched, true), { earliest: T0, mostRecent: T0 + 5 * 60_000, missed: 'none' });
  t.like(mostRecentScheduleTime(cj(), T0 + 62 * 60_000, sched, true), { mostRecent: T0 + 60 * 60_000, missed: 'few' });
  t.like(mostRecentScheduleTime(cj(), T0 + 9 * 3600_000, sched, true), { mostRecent: T0 + 9 * 3600_000, missed: 'many' });
  // startingDeadlineSeconds moves the earliest time up: older misses are not looked at.
  const withDeadline: KObject = { ...cj(), spec: { startingDeadlineSeconds: 200 } };
  t.like(mostRecentScheduleTime(withDeadline, T0 + 9 * 3600_000 + 100_000, sched, true), { mostRecent: T0 + 9 * 3600_000, missed: 'none' });
  t.like(mostRecentScheduleTime(cj(), T0, parseCronSchedule('0 0 30 2 *', 'UTC'), true), { error: 'time difference between two schedules is less than 1 second' });
});

test('a schedule fires at its time: a Job named after the minute, with the template, annotation, owner; active and lastScheduleTime', async (t) => {
  const b = await setup(t);
  await b.f.store.create(b.cronJobs, 'default', cronJob('hello', { schedule: '*/5 * * * *' }), adminCtx);
  // Created at 12:00:00: the next time is 12:05, and the controller comes back 100 ms after it.
  await timerSet(b, 300_100);
  t.deepEqual(await jobsOf(b), []);
  b.timers.advance(300_100);
  const [job] = await waitJobs(b, 1);
  t.is(job.metadata.name, `hello-${minutes('2025-03-01T12:05:00Z')}`);
  t.deepEqual(job.metadata.annotations, { team: 'a', 'batch.kubernetes.io/cronjob-scheduled-timestamp': '2025-03-01T12:05:00Z' });
  t.like(job.metadata.labels, { app: 'hello' });
  t.like(job.metadata.ownerReferences?.[0], { apiVersion: 'batch/v1', kind: 'CronJob', name: 'hello', controller: true });
  const s = await until(b.f, async () => ((x) => (x.lastScheduleTime ? x : undefined))(await cronStatus(b, 'hello')));
  t.is(s.lastScheduleTime, '2025-03-01T12:05:00Z');
  t.like(s.active[0], { kind: 'Job', name: job.metadata.name, uid: job.metadata.uid, apiVersion: 'batch/v1' });
  await finishJob(b, job, 'Complete');
  const after = await until(b.f, async () => ((x) => (!x.active ? x : undefined))(await cronStatus(b, 'hello')));
  t.is(after.lastSuccessfulTime, rfc3339(b.f.clock.now()));
  t.deepEqual(
    b.events.map((e) => [e.reason, e.message]),
    [
      ['SuccessfulCreate', `Created job ${job.metadata.name}`],
      ['SawCompletedJob', `Saw completed job: ${job.metadata.name}, condition: Complete`],
    ],
  );
});

test('Forbid skips a run while one is active; Replace deletes it and starts the new one', async (t) => {
  const b = await setup(t);
  await b.f.store.create(b.cronJobs, 'default', cronJob('forbid', { schedule: '*/1 * * * *', concurrencyPolicy: 'Forbid' }), adminCtx);
  await timerSet(b, 60_100);
  b.timers.advance(60_100);
  await waitJobs(b, 1);
  await timerSet(b, 60_000);
  b.timers.advance(60_000);
  await until(b.f, () => b.events.some((e) => e.reason === 'JobAlreadyActive'), b.timers);
  t.is((await jobsOf(b)).length, 1);
  t.is(b.events.find((e) => e.reason === 'JobAlreadyActive')?.message, 'Not starting job because prior execution is running and concurrency policy is Forbid');
  await b.f.store.update(b.cronJobs, 'default', 'forbid', (cur) => ({ ...cur!, spec: { ...(cur!.spec as object), concurrencyPolicy: 'Replace' } }), adminCtx);
  await timerSet(b, 60_000);
  b.timers.advance(60_000);
  const [replacement] = await until(b.f, async () => ((j) => (j.length === 1 && j[0].metadata.name === `forbid-${minutes('2025-03-01T12:03:00Z')}` ? j : undefined))(await jobsOf(b)));
  t.truthy(replacement);
  t.true(b.events.some((e) => e.reason === 'SuccessfulDelete' && e.message === `Deleted job forbid-${minutes('2025-03-01T12:01:00Z')}`));
});

test('after downtime: one catch-up run for the most recent time; past 100 misses a TooManyMissedTimes warning too', async (t) => {
  const b = await openBatch(t);
  await b.f.store.create(b.cronJobs, 'default', cronJob('hourly', { schedule: '0 * * * *' }), adminCtx);
  await b.f.store.create(b.cronJobs, 'default', cronJob('minutely', { schedule: '*/1 * * * *' }), adminCtx);
  // The controller was down for three hours and a half.
  b.f.clock.advance(3.5 * 3600_000);
  const c = new CronJobController(b.f.store, b.f.cache, b.f.registry, { now: b.f.clock.now, log: b.f.log, recorder: b.recorder, clock: b.clock, informers: b.informers, timeZone: 'UTC' });
  b.start((s) => c.run(s));
  const jobs = await waitJobs(b, 2);
  t.deepEqual(jobs.map((j) => j.metadata.name), [`hourly-${minutes('2025-03-01T15:00:00Z')}`, `minutely-${minutes('2025-03-01T15:30:00Z')}`]);
  t.deepEqual(
    b.events.filter((e) => e.type === 'Warning').map((e) => [e.name, e.reason, e.message]),
    [['minutely', 'TooManyMissedTimes', 'too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew']],
  );
});

test('a Job created before a crash (status not written) is taken, not created twice', async (t) => {
  const b = await openBatch(t);
  const cj = await b.f.store.create(b.cronJobs, 'default', cronJob('crash', { schedule: '*/5 * * * *' }), adminCtx);
  b.f.clock.advance(5 * 60_000);
  const name = `crash-${minutes('2025-03-01T12:05:00Z')}`;
  const orphan = await b.f.store.create(
    b.jobs,
    'default',
    { apiVersion: 'batch/v1', kind: 'Job', metadata: { name, ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'crash', uid: cj.metadata.uid!, controller: true, blockOwnerDeletion: true }] }, spec: (cj.spec as any).jobTemplate.spec },
    adminCtx,
  );
  const c = new CronJobController(b.f.store, b.f.cache, b.f.registry, { now: b.f.clock.now, log: b.f.log, recorder: b.recorder, clock: b.clock, informers: b.informers, timeZone: 'UTC' });
  b.start((s) => c.run(s));
  const s = await until(b.f, async () => ((x) => (x.active?.length ? x : undefined))(await cronStatus(b, 'crash')));
  t.is(s.active[0].uid, orphan.metadata.uid);
  t.is(s.lastScheduleTime, '2025-03-01T12:05:00Z');
  t.is((await jobsOf(b)).length, 1);
  t.false(b.events.some((e) => e.reason === 'SuccessfulCreate'));
});

test('history limits: finished Jobs beyond successfulJobsHistoryLimit and failedJobsHistoryLimit go, oldest first', async (t) => {
  const b = await setup(t);
  const cj = await b.f.store.create(b.cronJobs, 'default', cronJob('hist', { schedule: '0 0 1 1 *', successfulJobsHistoryLimit: 1, failedJobsHistoryLimit: 0 }), adminCtx);
  const ref = [{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'hist', uid: cj.metadata.uid!, controller: true }];
  for (const [name, type] of [['hist-1', 'Complete'], ['hist-2', 'Complete'], ['hist-3', 'Failed']] as const) {
    const job = await b.f.store.create(b.jobs, 'default', { apiVersion: 'batch/v1', kind: 'Job', metadata: { name, ownerReferences: ref }, spec: (cj.spec as any).jobTemplate.spec }, adminCtx);
    await finishJob(b, job, type);
    b.f.clock.advance(1000);
  }
  const left = await until(b.f, async () => ((j) => (j.length === 1 ? j : undefined))(await jobsOf(b)));
  t.deepEqual(left.map((j) => j.metadata.name), ['hist-2']);
  t.deepEqual(b.events.filter((e) => e.reason === 'SuccessfulDelete').map((e) => e.message).sort(), ['Deleted job hist-1', 'Deleted job hist-3']);
});

test('timeZone: the schedule is read in the zone and the annotation carries its offset; suspend starts nothing', async (t) => {
  const b = await setup(t);
  await b.f.store.create(b.cronJobs, 'default', cronJob('tokyo', { schedule: '0 9 * * *', timeZone: 'Asia/Tokyo' }), adminCtx);
  await b.f.store.create(b.cronJobs, 'default', cronJob('paused', { schedule: '0 9 * * *', timeZone: 'Asia/Tokyo', suspend: true }), adminCtx);
  // 12:00 UTC is 21:00 in Tokyo: 09:00 there is 12 hours away.
  await timerSet(b, 12 * 3600_000 + 100);
  b.timers.advance(12 * 3600_000 + 100);
  const [job] = await waitJobs(b, 1);
  t.is(job.metadata.name, `tokyo-${minutes('2025-03-02T00:00:00Z')}`);
  t.is(job.metadata.annotations?.['batch.kubernetes.io/cronjob-scheduled-timestamp'], '2025-03-02T09:00:00+09:00');
});
