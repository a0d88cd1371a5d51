/**
 * syncJob driven by hand, to pin an event ordering the controller tests cannot force: a pod's
 * finalizer removal (issued by the previous sync) seen by the informer after this sync listed
 * the pods. The list then holds the pod's older copy (being deleted, finalizer on).
 */
import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { Expectations } from '../../../../../apiserver/controllers/workloads/expectations';
import { syncJob, type SyncDeps } from '../../../../../apiserver/controllers/workloads/job-sync';
import { FinalizerExpectations } from '../../../../../apiserver/controllers/workloads/job-tracking';
import { PodControl } from '../../../../../apiserver/controllers/workloads/pod-control';
import { controllerContext } from '../../../../../apiserver/store/system-context';
import { adminCtx, conditionTypes, finishPod, jobOf, openBatch, statusOf, type Batch } from './batch-fixture';

const ctx = controllerContext('job-controller');
const TRACKING = 'batch.kubernetes.io/job-tracking';

function deps(b: Batch): SyncDeps {
  return {
    store: b.f.store,
    jobs: b.jobs,
    pods: b.pods,
    ctx,
    podControl: new PodControl(b.f.store, b.pods, b.recorder, ctx),
    expectations: new Expectations(() => b.f.clock.ms),
    // Empty: every removal the previous sync issued has been observed by now.
    finalizerExpectations: new FinalizerExpectations(),
    recorder: b.recorder,
    now: b.f.clock.now,
    backoff: new Map(),
    requeueAfter: () => undefined,
    saveBackoff: () => undefined,
  };
}

function podOf(job: KObject, index: number): KObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `leader-${index}`,
      namespace: 'default',
      finalizers: [TRACKING],
      annotations: { 'batch.kubernetes.io/job-completion-index': String(index) },
      labels: { 'batch.kubernetes.io/job-completion-index': String(index) },
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: job.metadata.name!, uid: job.metadata.uid!, controller: true, blockOwnerDeletion: true }],
    },
    spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox' }] },
  };
}

/**
 * The state after the sync that met the success policy: SuccessCriteriaMet in the status, index 1
 * deleted with its finalizer then released (so it is gone); the list the next sync works from
 * still has index 1 being deleted with the finalizer on (unscheduled: svc counts it failed).
 */
async function afterSuccessPolicy(b: Batch): Promise<{ job: KObject; listed: KObject[] }> {
  const spec = { completionMode: 'Indexed', completions: 2, parallelism: 2, successPolicy: { rules: [{ succeededIndexes: '0' }] } };
  const job = await b.f.store.create(b.jobs, 'default', jobOf('leader', spec), adminCtx);
  const met = { type: 'SuccessCriteriaMet', status: 'True', reason: 'SuccessPolicy', message: 'Matched rules at index 0', lastProbeTime: '2025-03-01T12:00:00Z', lastTransitionTime: '2025-03-01T12:00:00Z' };
  const status = { conditions: [met], startTime: '2025-03-01T12:00:00Z', succeeded: 1, completedIndexes: '0', terminating: 1, ready: 0, uncountedTerminatedPods: {} };
  await b.f.store.update(b.jobs, 'default', 'leader', (cur) => ({ ...cur!, status }), { ...adminCtx, subresource: 'status' });
  const done = await b.f.store.create(b.pods, 'default', podOf(job, 0), adminCtx);
  await finishPod(b, done, 'Succeeded');
  await b.f.store.update(b.pods, 'default', 'leader-0', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, finalizers: undefined, resourceVersion: undefined } }), adminCtx);
  await b.f.store.create(b.pods, 'default', podOf(job, 1), adminCtx);
  await b.f.store.delete(b.pods, 'default', 'leader-1', {}, adminCtx);
  const stale = await b.f.store.get(b.pods, 'default', 'leader-1');
  if (!stale.metadata.deletionTimestamp || !stale.metadata.finalizers?.includes(TRACKING)) throw new Error('fixture: leader-1 should be deleting with its finalizer on');
  await b.f.store.update(b.pods, 'default', 'leader-1', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, finalizers: undefined, resourceVersion: undefined } }), adminCtx);
  return { job: await b.f.store.get(b.jobs, 'default', 'leader'), listed: [await b.f.store.get(b.pods, 'default', 'leader-0'), stale] };
}

test('a finalizer removal observed after the pods were listed: the stale copy is skipped, not counted as failed (expectations read before the list)', async (t) => {
  const b = await openBatch(t);
  const { job, listed } = await afterSuccessPolicy(b);
  // The controller read the expectations before listing: leader-1's removal was still expected then.
  await syncJob(deps(b), 'default/leader', job, listed, { satisfied: true, expectedRmFinalizers: new Set([listed[1].metadata.uid!]) });
  const after = await b.f.store.get(b.jobs, 'default', 'leader');
  t.deepEqual(conditionTypes(after), ['SuccessCriteriaMet', 'Complete']);
  t.like(statusOf(after), { succeeded: 1, completedIndexes: '0', terminating: 0 });
  t.is(statusOf(after).failed, undefined);
});

test('a pod being deleted with its finalizer and no removal expected counts as failed even after SuccessCriteriaMet (upstream isPodFailed)', async (t) => {
  const b = await openBatch(t);
  const { job, listed } = await afterSuccessPolicy(b);
  await syncJob(deps(b), 'default/leader', job, listed, { satisfied: true, expectedRmFinalizers: new Set() });
  const after = await b.f.store.get(b.jobs, 'default', 'leader');
  t.deepEqual(conditionTypes(after), ['SuccessCriteriaMet', 'Complete']);
  t.like(statusOf(after), { succeeded: 1, failed: 1 });
});
