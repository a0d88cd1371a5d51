/**
 * The events the agent records about pods and containers, with upstream's kubelet reasons,
 * messages and references (fieldPath spec.containers{name}), on the CRI simulator with fake time.
 */
import test from 'ava';
import { DeviceAdmissionError } from '../../../../agent/devices/allocator';
import { goMillis } from '../../../../agent/pod/pod-events';
import { RecordingRecorder } from '../../../helpers/recording-recorder';
import { BUSYBOX, isRunningReady, startHarness, waitingReason } from './harness';

test('goMillis prints durations as Go does after Truncate(time.Millisecond)', (t) => {
  t.is(goMillis(0), '0s');
  t.is(goMillis(523.9), '523ms');
  t.is(goMillis(1234), '1.234s');
  t.is(goMillis(60_000), '1m0s');
  t.is(goMillis(123_500), '2m3.5s');
  t.is(goMillis(3_600_000), '1h0m0s');
});

test('a pod that starts: Pulling, Pulled, Created, Started about the container; an image present is "already present on machine"', async (t) => {
  const recorder = new RecordingRecorder();
  const h = await startHarness({ manager: { recorder } });
  try {
    const pod = h.createPod('web', {
      containers: [
        { name: 'app', image: 'svc.local/app:1', imagePullPolicy: 'Always' },
        { name: 'side', image: BUSYBOX, imagePullPolicy: 'IfNotPresent' },
      ],
    });
    t.true(await h.until(() => isRunningReady(h.status('web'))));
    const app = recorder.events.filter((e) => e.regarding.fieldPath === 'spec.containers{app}');
    t.deepEqual(app.map((e) => e.reason), ['Pulling', 'Pulled', 'Created', 'Started']);
    t.is(app[0].message, 'Pulling image "svc.local/app:1"');
    t.regex(app[1].message, /^Successfully pulled image "svc\.local\/app:1" in \d[\w.]* \(\d[\w.]* including waiting\)\. Image size: \d+ bytes\.$/);
    t.is(app[2].message, 'Created container: app');
    t.is(app[3].message, 'Started container app');
    t.like(app[0].regarding, { apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'web', uid: pod.metadata.uid, fieldPath: 'spec.containers{app}' });
    t.true(app.every((e) => e.type === 'Normal'));
    const side = recorder.events.filter((e) => e.regarding.fieldPath === 'spec.containers{side}');
    t.deepEqual(side.map((e) => `${e.reason}: ${e.message}`).slice(0, 1), [`Pulled: Container image "${BUSYBOX}" already present on machine`]);
    h.deletePod('web', 5);
    t.true(await h.until(() => recorder.reasons().filter((r) => r === 'Killing').length === 2, 30_000));
    t.deepEqual(recorder.events.filter((e) => e.reason === 'Killing').map((e) => e.message).sort(), ['Stopping container app', 'Stopping container side']);
  } finally {
    await h.stop();
  }
});

test('a failing pull: Failed with the registry\'s error, Failed "Error: ErrImagePull", then BackOff and "Error: ImagePullBackOff"', async (t) => {
  const recorder = new RecordingRecorder();
  const h = await startHarness({ sim: { pullFailures: ['svc.local/nope:1'] }, manager: { recorder } });
  try {
    h.createPod('ghost', { containers: [{ name: 'c', image: 'svc.local/nope:1', imagePullPolicy: 'IfNotPresent' }] });
    t.true(await h.until(() => waitingReason(h.status('ghost'), 'c') === 'ImagePullBackOff'));
    const lines = recorder.lines();
    t.is(lines[0], 'Pulling: Pulling image "svc.local/nope:1"');
    t.regex(lines[1], /^Failed: Failed to pull image "svc\.local\/nope:1": .*failed to pull and unpack image "svc\.local\/nope:1"/);
    t.is(lines[2], 'Failed: Error: ErrImagePull');
    t.true(lines.includes('BackOff: Back-off pulling image "svc.local/nope:1"'));
    t.true(lines.includes('Failed: Error: ImagePullBackOff'));
    t.is(recorder.events.find((e) => e.reason === 'BackOff')?.type, 'Normal', 'upstream records the pull back-off as Normal');
    t.true(recorder.events.filter((e) => e.reason === 'Failed').every((e) => e.type === 'Warning'));
  } finally {
    await h.stop();
  }
});

test('a crash loop: BackOff "Back-off restarting failed container c in pod name_ns(uid)"', async (t) => {
  const recorder = new RecordingRecorder();
  const h = await startHarness({ sim: { behaviours: [{ name: 'crasher', exitAfterMs: 1000, exitCode: 2 }] }, manager: { recorder, housekeepingPeriodMs: 3_600_000 } });
  try {
    const pod = h.createPod('cl', { containers: [{ name: 'crasher', image: BUSYBOX, imagePullPolicy: 'IfNotPresent' }] });
    t.true(await h.until(() => waitingReason(h.status('cl'), 'crasher') === 'CrashLoopBackOff', 60_000));
    const backoff = recorder.events.find((e) => e.reason === 'BackOff');
    t.like(backoff, { type: 'Warning', message: `Back-off restarting failed container crasher in pod cl_default(${pod.metadata.uid})`, regarding: { fieldPath: 'spec.containers{crasher}' } });
  } finally {
    await h.stop();
  }
});

test('a failing liveness probe: Unhealthy on each failed run, then Killing with the reason', async (t) => {
  const recorder = new RecordingRecorder();
  const h = await startHarness({
    sim: { exec: (ctx) => (ctx.cmd[0] === 'check' ? { exitCode: 1, stdout: 'not yet' } : undefined) },
    manager: { recorder },
  });
  try {
    h.createPod('sick', {
      containers: [{ name: 'c', image: BUSYBOX, imagePullPolicy: 'IfNotPresent', livenessProbe: { exec: { command: ['check'] }, periodSeconds: 5, failureThreshold: 3 } }],
    });
    t.true(await h.until(() => recorder.reasons().includes('Killing'), 60_000));
    const killing = recorder.reasons().indexOf('Killing');
    const unhealthy = recorder.events.slice(0, killing).filter((e) => e.reason === 'Unhealthy');
    t.is(unhealthy.length, 3, 'one per failed run up to failureThreshold');
    t.like(unhealthy[0], { type: 'Warning', message: 'Liveness probe failed: command ["check"] exited with 1: not yet', regarding: { fieldPath: 'spec.containers{c}' } });
    t.is(recorder.events.find((e) => e.reason === 'Killing')?.message, 'Container c failed liveness probe, will be restarted');
  } finally {
    await h.stop();
  }
});

test('a volume that cannot be mounted: FailedMount about the pod with upstream\'s message; a refused pod: a Warning with the admission reason', async (t) => {
  const recorder = new RecordingRecorder();
  const h = await startHarness({ manager: { recorder } });
  try {
    h.createPod('nocm', {
      containers: [{ name: 'c', image: BUSYBOX, imagePullPolicy: 'IfNotPresent' }],
      volumes: [{ name: 'cfg', configMap: { name: 'missing' } }],
    });
    h.createPod('huge', { containers: [{ name: 'c', image: BUSYBOX, imagePullPolicy: 'IfNotPresent', resources: { requests: { cpu: '64' } } }] });
    t.true(await h.until(() => recorder.reasons().includes('FailedMount') && recorder.reasons().includes('OutOfcpu')));
    t.like(recorder.events.find((e) => e.reason === 'FailedMount'), {
      type: 'Warning',
      message: 'MountVolume.SetUp failed for volume "cfg" : configmap "missing" not found',
      regarding: { kind: 'Pod', name: 'nocm' },
    });
    const refused = recorder.events.find((e) => e.reason === 'OutOfcpu');
    t.like(refused, { type: 'Warning', regarding: { kind: 'Pod', name: 'huge' } });
    t.regex(refused!.message, /Node didn't have enough resource: cpu/);
  } finally {
    await h.stop();
  }
});

test('a pod the device plugins cannot serve: a Warning UnexpectedAdmissionError event with upstream\'s message', async (t) => {
  const recorder = new RecordingRecorder();
  const message = 'Allocate failed due to requested number of devices unavailable for example.com/gpu. Requested: 1, Available: 0, which is unexpected';
  const devices = {
    admitPod: () => Promise.reject(new DeviceAdmissionError(message)),
    runOptions: () => Promise.resolve(undefined),
    releasePod: () => Promise.resolve(),
    retainPods: () => Promise.resolve(),
    recoverFromRuntime: () => Promise.resolve(0),
  };
  const h = await startHarness({ manager: { recorder, devices } });
  try {
    h.createPod('gpu', { containers: [{ name: 'c', image: BUSYBOX, imagePullPolicy: 'IfNotPresent' }] });
    t.true(await h.until(() => h.status('gpu')?.phase === 'Failed'));
    t.true(await h.until(() => recorder.reasons().includes('UnexpectedAdmissionError')));
    t.like(recorder.events.find((e) => e.reason === 'UnexpectedAdmissionError'), { type: 'Warning', message, regarding: { kind: 'Pod', name: 'gpu' } });
  } finally {
    await h.stop();
  }
});
