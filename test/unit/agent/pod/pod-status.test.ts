/** Pod phase and conditions from container states, as upstream's getPhase and condition generators. */
import test from 'ava';
import { generatePodStatus, podPhase, rfc3339 } from '../../../../agent/pod/pod-status';
import type { ContainerStatus, Pod } from '../../../../agent/api/core-v1';
import type { RuntimeContainer, RuntimePod } from '../../../../agent/pod/runtime-pod';

const running: ContainerStatus = { name: 'a', state: { running: {} }, lastState: {}, ready: true, restartCount: 0, image: '', imageID: '' };
const waiting: ContainerStatus = { name: 'a', state: { waiting: { reason: 'ContainerCreating' } }, lastState: {}, ready: false, restartCount: 0, image: '', imageID: '' };
const crashLooping: ContainerStatus = { ...waiting, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 1 } } };
const succeeded: ContainerStatus = { ...waiting, state: { terminated: { exitCode: 0 } } };
const failed: ContainerStatus = { ...waiting, state: { terminated: { exitCode: 2 } } };

function pod(restartPolicy: 'Always' | 'OnFailure' | 'Never'): Pod {
  return { metadata: { name: 'p', namespace: 'd', uid: 'u' }, spec: { restartPolicy, containers: [{ name: 'a', image: 'i' }] } };
}

test('phase: waiting is Pending, running is Running, all stopped depends on the restart policy', (t) => {
  t.is(podPhase(pod('Always'), [], [waiting], false), 'Pending');
  t.is(podPhase(pod('Always'), [], [running], false), 'Running');
  t.is(podPhase(pod('Always'), [], [crashLooping], false), 'Running', 'a crash-looping container counts as stopped, and Always keeps the pod Running');
  t.is(podPhase(pod('Always'), [], [succeeded], false), 'Running');
  t.is(podPhase(pod('OnFailure'), [], [succeeded], false), 'Succeeded');
  t.is(podPhase(pod('OnFailure'), [], [failed], false), 'Running');
  t.is(podPhase(pod('Never'), [], [failed], false), 'Failed');
  t.is(podPhase(pod('Never'), [], [succeeded, failed], false), 'Failed');
  t.is(podPhase(pod('Never'), [], [succeeded, running], false), 'Running');
  // Init containers: running or waiting ones keep the pod Pending; a failed one with Never fails it.
  t.is(podPhase(pod('Always'), [running], [waiting], false), 'Pending');
  t.is(podPhase(pod('Never'), [failed], [waiting], false), 'Failed');
  t.is(podPhase(pod('Always'), [crashLooping], [waiting], false), 'Pending');
  // A pod torn down (deleted) ends in a terminal phase.
  t.is(podPhase(pod('Always'), [], [succeeded], true), 'Succeeded');
  t.is(podPhase(pod('Always'), [], [failed], true), 'Failed');
  t.is(podPhase(pod('Always'), [], [waiting], true), 'Failed');
});

function rc(over: Partial<RuntimeContainer>): RuntimeContainer {
  return {
    id: 'c1',
    sandboxId: 's1',
    name: 'a',
    kind: 'container',
    attempt: 0,
    state: 'CONTAINER_RUNNING',
    createdAt: 1000,
    startedAt: 2000,
    finishedAt: 0,
    exitCode: 0,
    reason: '',
    message: '',
    image: 'docker.io/library/i:latest',
    imageRef: 'sha256:abc',
    hash: '',
    logPath: '',
    ...over,
  };
}

function status(rp: RuntimePod, over: { previous?: Pod['status']; waiting?: Map<string, { reason: string; message: string }>; now?: number; policy?: 'Always' | 'Never' } = {}) {
  return generatePodStatus({
    pod: pod(over.policy ?? 'Always'),
    runtime: rp,
    waiting: over.waiting ?? new Map(),
    ready: () => true,
    started: () => true,
    hostIPs: ['10.0.0.1'],
    startTime: 500,
    runtimeName: 'containerd',
    terminal: false,
    ...(over.previous ? { previous: over.previous } : {}),
    now: over.now ?? 10_000,
  });
}

test('container statuses: running with startedAt and ids; a restart pending shows the waiting reason with the exit as lastState', (t) => {
  const sandbox = { id: 's1', attempt: 0, state: 'SANDBOX_READY' as const, createdAt: 0, ips: ['10.88.0.5'], hostNetwork: false };
  const s = status({ sandboxes: [sandbox], containers: [rc({})] });
  const c = s.containerStatuses![0];
  t.deepEqual(c.state, { running: { startedAt: rfc3339(2000) } });
  t.is(c.containerID, 'containerd://c1');
  t.is(c.image, 'docker.io/library/i:latest');
  t.is(c.imageID, 'sha256:abc');
  t.is(s.podIP, '10.88.0.5');
  t.is(s.startTime, rfc3339(500));

  const exited = rc({ id: 'c2', attempt: 1, state: 'CONTAINER_EXITED', exitCode: 137, reason: 'OOMKilled', finishedAt: 5000 });
  const looping = status(
    { sandboxes: [sandbox], containers: [exited, rc({ state: 'CONTAINER_EXITED', exitCode: 1, finishedAt: 3000 })] },
    { waiting: new Map([['a', { reason: 'CrashLoopBackOff', message: 'back-off 10s restarting failed container=a pod=p_d(u)' }]]) },
  );
  const l = looping.containerStatuses![0];
  t.is(l.state.waiting?.reason, 'CrashLoopBackOff');
  t.is(l.lastState.terminated?.reason, 'OOMKilled');
  t.is(l.lastState.terminated?.exitCode, 137);
  t.is(l.restartCount, 1);

  // restartPolicy Never: nothing will restart it, so it stays terminated (reason Error when the runtime gives none).
  const never = status({ sandboxes: [sandbox], containers: [rc({ state: 'CONTAINER_EXITED', exitCode: 3, finishedAt: 3000 })] }, { policy: 'Never', waiting: new Map([['a', { reason: 'CrashLoopBackOff', message: '' }]]) });
  t.is(never.containerStatuses![0].state.terminated?.reason, 'Error');
  t.is(never.phase, 'Failed');
});

test('conditions keep their transition time while unchanged and take a new one when they flip', (t) => {
  const rp: RuntimePod = { sandboxes: [], containers: [rc({})] };
  const first = status(rp, { now: 10_000 });
  const again = status(rp, { previous: first, now: 50_000 });
  t.is(again.conditions!.find((c) => c.type === 'Ready')!.lastTransitionTime, rfc3339(10_000));
  const down = status({ sandboxes: [], containers: [rc({ state: 'CONTAINER_EXITED', exitCode: 1 })] }, { previous: again, now: 90_000, policy: 'Never' });
  const ready = down.conditions!.find((c) => c.type === 'Ready')!;
  t.is(ready.status, 'False');
  t.is(ready.lastTransitionTime, rfc3339(90_000));
  t.is(ready.reason, 'ContainersNotReady');
  // Once terminal, the phase never goes back.
  const after = status(rp, { previous: down, now: 100_000 });
  t.is(after.phase, 'Failed');
});
