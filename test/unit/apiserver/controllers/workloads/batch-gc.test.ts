import test from 'ava';
import { isNotFound } from '../../../../../apiserver/api/errors';
import type { KObject } from '../../../../../apiserver/api/types';
import { GarbageCollector } from '../../../../../apiserver/controllers/garbage-collector';
import { JobController } from '../../../../../apiserver/controllers/workloads/job-controller';
import { adminCtx, jobOf, listAll, openBatch, podsOf, until, type Batch } from './batch-fixture';

/** The garbage collector's cascades over the batch kinds: CronJob → Job → pods, with the Job controller's finalizers in the way. */
async function setup(t: { teardown(fn: () => Promise<void>): void }): Promise<Batch> {
  const b = await openBatch(t);
  const { f } = b;
  const jobs = new JobController(f.store, f.cache, f.registry, { now: f.clock.now, log: f.log, recorder: b.recorder, clock: b.clock, informers: b.informers });
  const gc = new GarbageCollector(f.store, f.cache, f.registry, f.log, b.informers);
  for (const c of [jobs, gc]) b.start((s) => c.run(s));
  return b;
}

const gone = async (b: Batch, t: Batch['jobs'], name: string) => isNotFound(await b.f.store.get(t, 'default', name).catch((e: unknown) => e));

async function runningJob(b: Batch, name: string, owner?: KObject): Promise<{ job: KObject; pods: KObject[] }> {
  const manifest = jobOf(name, { parallelism: 2, completions: 2 });
  if (owner) manifest.metadata.ownerReferences = [{ apiVersion: 'batch/v1', kind: 'CronJob', name: owner.metadata.name!, uid: owner.metadata.uid!, controller: true, blockOwnerDeletion: true }];
  const job = await b.f.store.create(b.jobs, 'default', manifest, adminCtx);
  const pods = await until(b.f, async () => ((p) => (p.length === 2 ? p : undefined))(await podsOf(b, job)));
  return { job, pods };
}

test('background: deleting a CronJob takes its Jobs and their pods', async (t) => {
  const b = await setup(t);
  const cj = await b.f.store.create(b.cronJobs, 'default', { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'nightly' }, spec: { schedule: '0 3 * * *', jobTemplate: { spec: jobOf('x').spec } } }, adminCtx);
  await runningJob(b, 'nightly-1', cj);
  await b.f.store.delete(b.cronJobs, 'default', 'nightly', { propagationPolicy: 'Background' }, adminCtx);
  await until(b.f, async () => (await gone(b, b.jobs, 'nightly-1')) && (await listAll(b, b.pods)).length === 0);
  t.true(await gone(b, b.jobs, 'nightly-1'));
  t.deepEqual(await listAll(b, b.pods), []);
});

test('foreground: a Job stays (terminating) until its pods are gone, which first lose the tracking finalizer', async (t) => {
  const b = await setup(t);
  await runningJob(b, 'fg');
  await b.f.store.delete(b.jobs, 'default', 'fg', { propagationPolicy: 'Foreground' }, adminCtx);
  t.deepEqual((await b.f.store.get(b.jobs, 'default', 'fg')).metadata.finalizers, ['foregroundDeletion']);
  await until(b.f, async () => (await listAll(b, b.pods)).length === 0 && (await gone(b, b.jobs, 'fg')));
  t.true(await gone(b, b.jobs, 'fg'));
  t.deepEqual(await listAll(b, b.pods), []);
});

test('orphan: the Job goes, its pods stay without owner or tracking finalizer', async (t) => {
  const b = await setup(t);
  const { pods } = await runningJob(b, 'orph');
  await b.f.store.delete(b.jobs, 'default', 'orph', { propagationPolicy: 'Orphan' }, adminCtx);
  await until(b.f, () => gone(b, b.jobs, 'orph'));
  const left = await until(b.f, async () => ((p) => (p.every((x) => !x.metadata.ownerReferences && !x.metadata.finalizers) ? p : undefined))(await listAll(b, b.pods)));
  t.deepEqual(left.map((p) => p.metadata.uid).sort(), pods.map((p) => p.metadata.uid).sort());
});
