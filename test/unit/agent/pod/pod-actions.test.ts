/** computePodActions: upstream's decisions about sandboxes, init containers, restarts and kills. */
import test from 'ava';
import { computePodActions, nextInitContainer, type ProbeVerdicts } from '../../../../agent/pod/pod-actions';
import type { Pod } from '../../../../agent/api/core-v1';
import { containerHash } from '../../../../agent/pod/runtime-labels';
import type { RuntimeContainer, RuntimePod, RuntimeSandbox } from '../../../../agent/pod/runtime-pod';

const ok: ProbeVerdicts = { livenessFailed: () => false, startupFailed: () => false };
const app = { name: 'app', image: 'i' };

function pod(over: Partial<Pod['spec']> = {}): Pod {
  return { metadata: { name: 'p', namespace: 'd', uid: 'u' }, spec: { restartPolicy: 'Always', containers: [app], ...over } };
}

function sb(over: Partial<RuntimeSandbox> = {}): RuntimeSandbox {
  return { id: 's0', attempt: 0, state: 'SANDBOX_READY', createdAt: 1, ips: ['10.88.0.2'], hostNetwork: false, ...over };
}

function c(name: string, over: Partial<RuntimeContainer> = {}): RuntimeContainer {
  return {
    id: `${name}-${over.attempt ?? 0}`,
    sandboxId: 's0',
    name,
    kind: 'container',
    attempt: 0,
    state: 'CONTAINER_RUNNING',
    createdAt: 1,
    startedAt: 1,
    finishedAt: 0,
    exitCode: 0,
    reason: '',
    message: '',
    image: 'i',
    imageRef: 'sha256:x',
    hash: containerHash(app),
    logPath: '',
    ...over,
  };
}

test('no sandbox: create one (attempt 0) and start every container; a dead sandbox is replaced with the next attempt', (t) => {
  const a = computePodActions(pod(), { sandboxes: [], containers: [] }, ok);
  t.true(a.createSandbox);
  t.is(a.sandboxAttempt, 0);
  t.deepEqual(a.containersToStart.map((x) => x.name), ['app']);
  const b = computePodActions(pod(), { sandboxes: [sb({ state: 'SANDBOX_NOTREADY', attempt: 2 })], containers: [c('app', { state: 'CONTAINER_EXITED' })] }, ok);
  t.true(b.createSandbox);
  t.true(b.killPod);
  t.is(b.sandboxAttempt, 3);
});

test('restartPolicy Never with a dead sandbox after the pod ran: no new sandbox', (t) => {
  const a = computePodActions(pod({ restartPolicy: 'Never' }), { sandboxes: [sb({ state: 'SANDBOX_NOTREADY', attempt: 1 })], containers: [c('app', { state: 'CONTAINER_EXITED' })] }, ok);
  t.false(a.createSandbox);
});

test('running containers are kept; exited ones restart by policy; everything done kills the pod', (t) => {
  const rp = (state: RuntimeContainer['state'], exitCode = 0): RuntimePod => ({ sandboxes: [sb()], containers: [c('app', { state, exitCode })] });
  const keep = computePodActions(pod(), rp('CONTAINER_RUNNING'), ok);
  t.false(keep.killPod);
  t.deepEqual(keep.containersToStart, []);
  t.deepEqual(computePodActions(pod(), rp('CONTAINER_EXITED', 0), ok).containersToStart.map((x) => x.name), ['app']);
  t.deepEqual(computePodActions(pod({ restartPolicy: 'OnFailure' }), rp('CONTAINER_EXITED', 1), ok).containersToStart.map((x) => x.name), ['app']);
  const done = computePodActions(pod({ restartPolicy: 'OnFailure' }), rp('CONTAINER_EXITED', 0), ok);
  t.deepEqual(done.containersToStart, []);
  t.true(done.killPod);
  t.true(computePodActions(pod({ restartPolicy: 'Never' }), rp('CONTAINER_EXITED', 1), ok).killPod);
});

test('a failed liveness probe kills and restarts; a changed spec restarts even with Never; a pod being deleted is not restarted', (t) => {
  const rp: RuntimePod = { sandboxes: [sb()], containers: [c('app')] };
  const live = computePodActions(pod(), rp, { livenessFailed: (id) => id === 'app-0', startupFailed: () => false });
  t.deepEqual(live.containersToKill.map((k) => k.message), ['Container app failed liveness probe, will be restarted']);
  t.deepEqual(live.containersToStart.map((x) => x.name), ['app']);
  const never = computePodActions(pod({ restartPolicy: 'Never' }), rp, { livenessFailed: () => true, startupFailed: () => false });
  t.deepEqual(never.containersToKill.map((k) => k.message), ['Container app failed liveness probe']);
  t.deepEqual(never.containersToStart, []);
  const changed = computePodActions(pod({ restartPolicy: 'Never', containers: [{ name: 'app', image: 'i:2' }] }), rp, ok);
  t.deepEqual(changed.containersToKill.map((k) => k.message), ['Container app definition changed, will be restarted']);
  const deleting = pod();
  deleting.metadata.deletionTimestamp = '2025-01-01T00:00:00Z';
  t.deepEqual(computePodActions(deleting, { sandboxes: [sb()], containers: [c('app', { state: 'CONTAINER_EXITED' })] }, ok).containersToStart, []);
});

test('init containers: the first runs first, then the next after success; a failure restarts it or (Never) kills the pod', (t) => {
  const spec = pod({ initContainers: [{ name: 'i1', image: 'i' }, { name: 'i2', image: 'i' }] });
  const fresh = computePodActions(spec, { sandboxes: [], containers: [] }, ok);
  t.is(fresh.nextInitContainer?.name, 'i1');
  t.deepEqual(fresh.containersToStart, []);
  const after1 = computePodActions(spec, { sandboxes: [sb()], containers: [c('i1', { kind: 'init', state: 'CONTAINER_EXITED' })] }, ok);
  t.is(after1.nextInitContainer?.name, 'i2');
  t.is(computePodActions(spec, { sandboxes: [sb()], containers: [c('i1', { kind: 'init' })] }, ok).nextInitContainer, undefined, 'waits while it runs');
  const failedInit = { sandboxes: [sb()], containers: [c('i1', { kind: 'init', state: 'CONTAINER_EXITED', exitCode: 1 })] };
  t.is(computePodActions(spec, failedInit, ok).nextInitContainer?.name, 'i1');
  t.true(computePodActions(pod({ restartPolicy: 'Never', initContainers: spec.spec.initContainers! }), failedInit, ok).killPod);
  const done = { sandboxes: [sb()], containers: [c('i2', { kind: 'init', state: 'CONTAINER_EXITED', attempt: 0 }), c('i1', { kind: 'init', state: 'CONTAINER_EXITED' })] };
  t.true(nextInitContainer(spec, done).done);
  t.deepEqual(computePodActions(spec, done, ok).containersToStart.map((x) => x.name), ['app']);
});
