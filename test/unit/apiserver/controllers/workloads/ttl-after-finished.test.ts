import test from 'ava';
import { isNotFound } from '../../../../../apiserver/api/errors';
import { GarbageCollector } from '../../../../../apiserver/controllers/garbage-collector';
import { JobController } from '../../../../../apiserver/controllers/workloads/job-controller';
import { jobExpiresAt, TtlAfterFinishedController } from '../../../../../apiserver/controllers/workloads/ttl-after-finished';
import { adminCtx, conditionTypes, finishPod, getJob, jobOf, listAll, openBatch, podsOf, until, timerSet } from './batch-fixture';

test('jobExpiresAt: the finish condition time plus the TTL; nothing for unfinished Jobs, Jobs without TTL or being deleted', (t) => {
  const done = { metadata: { name: 'j' }, spec: { ttlSecondsAfterFinished: 100 }, status: { conditions: [{ type: 'SuccessCriteriaMet', status: 'True', lastTransitionTime: '2025-03-01T11:00:00Z' }, { type: 'Complete', status: 'True', lastTransitionTime: '2025-03-01T12:00:00Z' }] } };
  t.is(jobExpiresAt(done), Date.parse('2025-03-01T12:01:40Z'));
  t.is(jobExpiresAt({ ...done, spec: {} }), undefined);
  t.is(jobExpiresAt({ ...done, status: { conditions: [{ type: 'FailureTarget', status: 'True', lastTransitionTime: '2025-03-01T12:00:00Z' }] } }), undefined);
  t.is(jobExpiresAt({ ...done, metadata: { name: 'j', deletionTimestamp: '2025-03-01T12:00:00Z' } }), undefined);
  const failed = { ...done, spec: { ttlSecondsAfterFinished: 0 }, status: { conditions: [{ type: 'Failed', status: 'True', lastTransitionTime: '2025-03-01T12:00:00Z' }] } };
  t.is(jobExpiresAt(failed), Date.parse('2025-03-01T12:00:00Z'));
});

test('a finished Job is deleted with its pods once ttlSecondsAfterFinished has passed', async (t) => {
  const b = await openBatch(t);
  const { f } = b;
  const jobs = new JobController(f.store, f.cache, f.registry, { now: f.clock.now, log: f.log, recorder: b.recorder, clock: b.clock, informers: b.informers });
  const ttl = new TtlAfterFinishedController(f.store, f.cache, f.registry, { now: f.clock.now, log: f.log, clock: b.clock, informers: b.informers });
  const gc = new GarbageCollector(f.store, f.cache, f.registry, f.log, b.informers);
  for (const c of [jobs, ttl, gc]) b.start((s) => c.run(s));
  const job = await f.store.create(b.jobs, 'default', jobOf('brief', { ttlSecondsAfterFinished: 60 }), adminCtx);
  const pod = await until(f, async () => (await podsOf(b, job))[0]);
  await finishPod(b, pod, 'Succeeded');
  await until(f, async () => conditionTypes(await getJob(b, 'brief')).includes('Complete'));
  // The controller comes back exactly when the TTL expires, not before.
  await timerSet(b, 60_000);
  t.truthy(await getJob(b, 'brief'));
  b.timers.advance(60_000);
  await until(f, async () => isNotFound(await getJob(b, 'brief').catch((e: unknown) => e)));
  t.deepEqual(await until(f, async () => ((await listAll(b, b.pods)).length === 0 ? [] : undefined)), []);
});
