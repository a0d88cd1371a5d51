import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { JobController } from '../../../../../apiserver/controllers/workloads/job-controller';
import { StoreInformers } from '../../../../../apiserver/store/list-watch';
import { adminCtx, conditionTypes, finishPod, getJob, jobOf, openBatch, podsOf, statusOf, until, type Batch, timerSet } from './batch-fixture';

async function setup(t: { teardown(fn: () => Promise<void>): void }): Promise<Batch> {
  const b = await openBatch(t);
  startJobController(b);
  return b;
}

/** Starts a Job controller; a restarted one (fresh) gets informers of its own, as a new process would. */
function startJobController(b: Batch, fresh = false): () => Promise<void> {
  const informers = fresh ? new StoreInformers(b.f.store, b.f.cache, { log: b.f.log }) : b.informers;
  const c = new JobController(b.f.store, b.f.cache, b.f.registry, { now: b.f.clock.now, log: b.f.log, recorder: b.recorder, clock: b.clock, informers });
  return b.start((s) => c.run(s));
}

async function create(b: Batch, job: KObject): Promise<KObject> {
  return b.f.store.create(b.jobs, 'default', job, adminCtx);
}

/** Waits for the Job's pods to be exactly n active ones (not terminal, not deleted) and returns them. */
async function activePods(b: Batch, job: KObject, n: number): Promise<KObject[]> {
  return until(b.f, async () => {
    const pods = (await podsOf(b, job)).filter((p) => !p.metadata.deletionTimestamp && !['Succeeded', 'Failed'].includes(String((p.status as any)?.phase)));
    return pods.length === n ? pods : undefined;
  });
}

const jobWhere = (b: Batch, name: string, pred: (j: KObject) => boolean) => until(b.f, async () => ((j) => (pred(j) ? j : undefined))(await getJob(b, name)));

test('a Job runs completions pods one at a time, tracks each with the finalizer, and completes as upstream', async (t) => {
  const b = await setup(t);
  const job = await create(b, jobOf('pi', { completions: 2 }));
  const [first] = await activePods(b, job, 1);
  t.true(first.metadata.name!.startsWith('pi-'));
  t.deepEqual(first.metadata.finalizers, ['batch.kubernetes.io/job-tracking']);
  t.like(first.metadata.labels, { 'batch.kubernetes.io/job-name': 'pi', 'job-name': 'pi', 'batch.kubernetes.io/controller-uid': job.metadata.uid, 'controller-uid': job.metadata.uid });
  t.like(first.metadata.ownerReferences?.[0], { apiVersion: 'batch/v1', kind: 'Job', name: 'pi', uid: job.metadata.uid, controller: true, blockOwnerDeletion: true });
  t.like(statusOf(await jobWhere(b, 'pi', (j) => statusOf(j).active === 1)), { active: 1, ready: 0, terminating: 0, startTime: '2025-03-01T12:00:00Z' });
  await finishPod(b, first, 'Succeeded');
  const [second] = await activePods(b, job, 1);
  t.not(second.metadata.uid, first.metadata.uid);
  await finishPod(b, second, 'Succeeded');
  const done = await jobWhere(b, 'pi', (j) => conditionTypes(j).includes('Complete'));
  t.deepEqual(conditionTypes(done), ['SuccessCriteriaMet', 'Complete']);
  const complete = statusOf(done).conditions.find((c: any) => c.type === 'Complete');
  t.like(complete, { reason: 'CompletionsReached', message: 'Reached expected number of succeeded pods' });
  t.like(statusOf(done), { succeeded: 2, completionTime: '2025-03-01T12:00:00Z', uncountedTerminatedPods: {} });
  t.is(statusOf(done).active, undefined);
  // Every pod counted has given up its finalizer.
  for (const p of await podsOf(b, job)) t.is(p.metadata.finalizers, undefined);
  t.deepEqual(
    b.events.filter((e) => e.kind === 'Job').map((e) => [e.type, e.reason, e.reason === 'SuccessfulCreate' ? e.message.startsWith('Created pod: pi-') : e.message]),
    [
      ['Normal', 'SuccessfulCreate', true],
      ['Normal', 'SuccessfulCreate', true],
      ['Normal', 'Completed', 'Job completed'],
    ],
  );
});

test('failed pods are replaced after 10 s, then 20 s of back-off; two failures and a success end Complete with failed=2 succeeded=1', async (t) => {
  const b = await setup(t);
  const job = await create(b, jobOf('flaky'));
  let [pod] = await activePods(b, job, 1);
  for (const wait of [10_000, 20_000]) {
    await finishPod(b, pod, 'Failed', 1);
    await jobWhere(b, 'flaky', (j) => statusOf(j).failed === (wait === 10_000 ? 1 : 2));
    // The replacement waits for its back-off: the sync asked to come back exactly then.
    await timerSet(b, wait);
    t.is((await podsOf(b, job)).length, wait === 10_000 ? 1 : 2);
    b.timers.advance(wait);
    [pod] = await activePods(b, job, 1);
  }
  await finishPod(b, pod, 'Succeeded');
  const done = await jobWhere(b, 'flaky', (j) => conditionTypes(j).includes('Complete'));
  t.like(statusOf(done), { failed: 2, succeeded: 1 });
  t.is((await podsOf(b, job)).length, 3);
});

test('backoffLimit: one failure too many fails the Job with BackoffLimitExceeded', async (t) => {
  const b = await setup(t);
  const job = await create(b, jobOf('doomed', { backoffLimit: 0 }));
  const [pod] = await activePods(b, job, 1);
  await finishPod(b, pod, 'Failed', 2);
  const failed = await jobWhere(b, 'doomed', (j) => conditionTypes(j).includes('Failed'));
  t.deepEqual(conditionTypes(failed), ['FailureTarget', 'Failed']);
  t.like(statusOf(failed).conditions[1], { type: 'Failed', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' });
  t.like(statusOf(failed), { failed: 1 });
  t.is(statusOf(failed).completionTime, undefined);
  t.deepEqual(b.events.filter((e) => e.type === 'Warning').map((e) => [e.reason, e.message]), [['BackoffLimitExceeded', 'Job has reached the specified backoff limit']]);
});

test('activeDeadlineSeconds: at the deadline the active pods are stopped and the Job fails with DeadlineExceeded', async (t) => {
  const b = await setup(t);
  const job = await create(b, jobOf('slow', { activeDeadlineSeconds: 30, parallelism: 2, completions: 4 }));
  await activePods(b, job, 2);
  await timerSet(b, 30_000);
  b.timers.advance(30_000);
  const failed = await jobWhere(b, 'slow', (j) => conditionTypes(j).includes('Failed'));
  t.like(statusOf(failed).conditions.find((c: any) => c.type === 'Failed'), { reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' });
  // Both pods were deleted and, once finished, counted as failed.
  t.like(statusOf(failed), { failed: 2, terminating: 0 });
  for (const p of await podsOf(b, job)) t.truthy(p.metadata.deletionTimestamp);
});

test('Indexed: one pod per index with its annotation, label, hostname and JOB_COMPLETION_INDEX; completedIndexes as intervals', async (t) => {
  const b = await setup(t);
  const job = await create(b, jobOf('idx', { completionMode: 'Indexed', completions: 3, parallelism: 3 }));
  const pods = await activePods(b, job, 3);
  const byIndex = new Map(pods.map((p) => [p.metadata.annotations?.['batch.kubernetes.io/job-completion-index'], p]));
  t.deepEqual([...byIndex.keys()].sort(), ['0', '1', '2']);
  const one = byIndex.get('1')!;
  t.true(one.metadata.name!.startsWith('idx-1-'));
  t.is(one.metadata.labels?.['batch.kubernetes.io/job-completion-index'], '1');
  t.is((one.spec as any).hostname, 'idx-1');
  t.deepEqual((one.spec as any).containers[0].env, [{ name: 'JOB_COMPLETION_INDEX', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: "metadata.labels['batch.kubernetes.io/job-completion-index']" } } }]);
  await finishPod(b, one, 'Succeeded');
  t.like(statusOf(await jobWhere(b, 'idx', (j) => statusOf(j).completedIndexes === '1')), { succeeded: 1, active: 2 });
  // A failed index is retried with the same index.
  await finishPod(b, byIndex.get('0')!, 'Failed');
  await jobWhere(b, 'idx', (j) => statusOf(j).failed === 1);
  b.timers.advance(10_000);
  const retry = (await activePods(b, job, 2)).find((p) => p.metadata.uid !== byIndex.get('2')!.metadata.uid)!;
  t.is(retry.metadata.annotations?.['batch.kubernetes.io/job-completion-index'], '0');
  await finishPod(b, retry, 'Succeeded');
  await finishPod(b, byIndex.get('2')!, 'Succeeded');
  const done = await jobWhere(b, 'idx', (j) => conditionTypes(j).includes('Complete'));
  t.like(statusOf(done), { completedIndexes: '0-2', succeeded: 3, failed: 1 });
});

test('successPolicy: the listed index succeeding completes an Indexed Job; the rest are stopped, not counted as failed', async (t) => {
  const b = await setup(t);
  const job = await create(b, jobOf('leader', { completionMode: 'Indexed', completions: 3, parallelism: 3, successPolicy: { rules: [{ succeededIndexes: '0' }] } }));
  const pods = await activePods(b, job, 3);
  await finishPod(b, pods.find((p) => p.metadata.annotations?.['batch.kubernetes.io/job-completion-index'] === '0')!, 'Succeeded');
  const done = await jobWhere(b, 'leader', (j) => conditionTypes(j).includes('Complete'));
  t.deepEqual(conditionTypes(done), ['SuccessCriteriaMet', 'Complete']);
  t.like(statusOf(done).conditions[1], { reason: 'SuccessPolicy', message: 'Matched rules at index 0' });
  t.like(statusOf(done), { succeeded: 1, completedIndexes: '0' });
  t.is(statusOf(done).failed, undefined);
});

test('podFailurePolicy: Ignore on DisruptionTarget is not counted; FailJob on an exit code fails the Job at once', async (t) => {
  const b = await setup(t);
  const policy = {
    rules: [
      { action: 'FailJob', onExitCodes: { containerName: 'main', operator: 'In', values: [42] } },
      { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] },
    ],
  };
  const job = await create(b, jobOf('pfp', { podFailurePolicy: policy, backoffLimit: 3 }));
  const [evicted] = await activePods(b, job, 1);
  await finishPod(b, evicted, 'Failed', 137, { conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'DeletionByTaintManager' }] });
  // Ignored: nothing counted; the replacement comes after the back-off (upstream counts every new failure there).
  await timerSet(b, 10_000);
  t.is(statusOf(await getJob(b, 'pfp')).failed, undefined);
  b.timers.advance(10_000);
  const [next] = await activePods(b, job, 1);
  t.not(next.metadata.uid, evicted.metadata.uid);
  t.is(statusOf(await getJob(b, 'pfp')).failed, undefined);
  await finishPod(b, next, 'Failed', 42);
  const failed = await jobWhere(b, 'pfp', (j) => conditionTypes(j).includes('Failed'));
  t.like(statusOf(failed).conditions.find((c: any) => c.type === 'Failed'), {
    reason: 'PodFailurePolicy',
    message: `Container main for pod default/${next.metadata.name} failed with exit code 42 matching FailJob rule at index 0`,
  });
  t.like(statusOf(failed), { failed: 1 });
});

test('suspend: no pods and Suspended=True; resuming creates them, sets Suspended=False and a fresh startTime', async (t) => {
  const b = await setup(t);
  await create(b, jobOf('later', { suspend: true }));
  const suspended = await jobWhere(b, 'later', (j) => conditionTypes(j).includes('Suspended'));
  t.like(statusOf(suspended).conditions[0], { reason: 'JobSuspended', message: 'Job suspended' });
  t.is(statusOf(suspended).startTime, undefined);
  b.f.clock.advance(60_000);
  await b.f.store.update(b.jobs, 'default', 'later', (cur) => ({ ...cur!, spec: { ...(cur!.spec as object), suspend: false } }), adminCtx);
  const resumed = await jobWhere(b, 'later', (j) => statusOf(j).active === 1);
  t.like(statusOf(resumed).conditions[0], { type: 'Suspended', status: 'False', reason: 'JobResumed', message: 'Job resumed' });
  t.is(statusOf(resumed).startTime, '2025-03-01T12:01:00Z');
  t.deepEqual(b.events.filter((e) => e.reason === 'Suspended' || e.reason === 'Resumed').map((e) => e.reason), ['Suspended', 'Resumed']);
  // Suspending again deletes the active pod without counting it.
  await b.f.store.update(b.jobs, 'default', 'later', (cur) => ({ ...cur!, spec: { ...(cur!.spec as object), suspend: true } }), adminCtx);
  const again = await jobWhere(b, 'later', (j) => conditionTypes(j).includes('Suspended') && !statusOf(j).active);
  t.is(statusOf(again).failed, undefined);
});

test('restart: a success already listed in uncountedTerminatedPods (or with its finalizer gone) is counted exactly once', async (t) => {
  const b = await openBatch(t);
  const stop = startJobController(b, true);
  const job = await create(b, jobOf('twice', { completions: 2, parallelism: 2 }));
  const [a, c] = await activePods(b, job, 2);
  await jobWhere(b, 'twice', (j) => statusOf(j).active === 2);
  await stop();
  // As if the controller had written both uids and died: one before, one after removing the finalizer.
  await finishPod(b, a, 'Succeeded');
  await finishPod(b, c, 'Succeeded');
  await b.f.store.update(b.pods, 'default', c.metadata.name!, (cur) => ({ ...cur!, metadata: { ...cur!.metadata, finalizers: undefined, resourceVersion: undefined } }), adminCtx);
  await b.f.store.update(
    b.jobs,
    'default',
    'twice',
    (cur) => ({ ...cur!, status: { ...(cur!.status as object), uncountedTerminatedPods: { succeeded: [a.metadata.uid, c.metadata.uid] } } }),
    { ...adminCtx, subresource: 'status' },
  );
  startJobController(b, true);
  const done = await jobWhere(b, 'twice', (j) => conditionTypes(j).includes('Complete'));
  t.like(statusOf(done), { succeeded: 2, uncountedTerminatedPods: {} });
  t.is((await podsOf(b, job)).length, 2);
});

test('a deleted Job\'s pods lose their tracking finalizer (orphans)', async (t) => {
  const b = await setup(t);
  const job = await create(b, jobOf('gone'));
  const [pod] = await activePods(b, job, 1);
  await b.f.store.delete(b.jobs, 'default', 'gone', { propagationPolicy: 'Orphan' }, adminCtx);
  await b.f.store.update(b.jobs, 'default', 'gone', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, finalizers: [] } }), adminCtx).catch(() => undefined);
  const freed = await until(b.f, async () => {
    const p = await b.f.store.get(b.pods, 'default', pod.metadata.name!);
    return p.metadata.finalizers === undefined ? p : undefined;
  });
  t.truthy(freed);
});

test('backoffLimitPerIndex: an index retries on its own with its failure count carried over, then is failed; the Job fails with FailedIndexes', async (t) => {
  const b = await setup(t);
  const job = await create(b, jobOf('per-index', { completionMode: 'Indexed', completions: 2, parallelism: 2, backoffLimitPerIndex: 1 }));
  t.is((job.spec as any).backoffLimit, 2147483647);
  const pods = await activePods(b, job, 2);
  const at = (ps: KObject[], ix: string) => ps.find((p) => p.metadata.annotations?.['batch.kubernetes.io/job-completion-index'] === ix)!;
  t.is(at(pods, '0').metadata.annotations?.['batch.kubernetes.io/job-index-failure-count'], '0');
  await finishPod(b, at(pods, '0'), 'Failed');
  // The index waits its own back-off; its failed pod keeps the finalizer until the replacement exists.
  await timerSet(b, 10_000);
  t.deepEqual((await b.f.store.get(b.pods, 'default', at(pods, '0').metadata.name!)).metadata.finalizers, ['batch.kubernetes.io/job-tracking']);
  b.timers.advance(10_000);
  const retry = await until(b.f, async () => (await podsOf(b, job)).find((p) => p.metadata.annotations?.['batch.kubernetes.io/job-index-failure-count'] === '1'));
  t.is(retry.metadata.annotations?.['batch.kubernetes.io/job-completion-index'], '0');
  await jobWhere(b, 'per-index', (j) => statusOf(j).failed === 1);
  await finishPod(b, retry, 'Failed');
  t.like(statusOf(await jobWhere(b, 'per-index', (j) => statusOf(j).failedIndexes === '0' && statusOf(j).failed === 2)), { active: 1 });
  await finishPod(b, at(pods, '1'), 'Succeeded');
  const failed = await jobWhere(b, 'per-index', (j) => conditionTypes(j).includes('Failed'));
  t.like(statusOf(failed), { failedIndexes: '0', completedIndexes: '1', succeeded: 1, failed: 2 });
  t.like(statusOf(failed).conditions.find((c: any) => c.type === 'Failed'), { reason: 'FailedIndexes', message: 'Job has failed indexes' });
  t.is((await podsOf(b, job)).length, 3);
});

test('podFailurePolicy FailIndex fails the index at its first matching failure, whatever retries are left', async (t) => {
  const b = await setup(t);
  const policy = { rules: [{ action: 'FailIndex', onExitCodes: { operator: 'In', values: [42] } }] };
  const job = await create(b, jobOf('fail-index', { completionMode: 'Indexed', completions: 1, backoffLimitPerIndex: 3, podFailurePolicy: policy }));
  const [pod] = await activePods(b, job, 1);
  await finishPod(b, pod, 'Failed', 42);
  const failed = await jobWhere(b, 'fail-index', (j) => conditionTypes(j).includes('Failed'));
  t.like(statusOf(failed), { failedIndexes: '0', failed: 1 });
  t.like(statusOf(failed).conditions.find((c: any) => c.type === 'Failed'), { reason: 'FailedIndexes' });
});
