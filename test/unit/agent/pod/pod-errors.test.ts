/**
 * What goes wrong shows in pod status with upstream's reasons: image pulls per policy
 * (ErrImagePull, ImagePullBackOff, ErrImageNeverPull), CreateContainerError, RunContainerError,
 * CreateContainerConfigError, and a runtime that is down or slow.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { RuntimeError } from '../../../../agent/cri/errors';
import { BUSYBOX, isRunningReady, startHarness, waitingReason } from './harness';

test('imagePullPolicy: Never needs the image present; IfNotPresent pulls once and records the pull; Always pulls every time', async (t) => {
  const h = await startHarness({ sim: { registryImages: ['svc.local/busybox:latest', 'svc.local/app:1.0'] } });
  try {
    h.createPod('never', { containers: [{ name: 'c', image: 'svc.local/app:1.0', imagePullPolicy: 'Never' }] });
    h.createPod('ifnp', { containers: [{ name: 'c', image: 'svc.local/app:1.0', imagePullPolicy: 'IfNotPresent' }] });
    t.true(await h.until(() => isRunningReady(h.status('ifnp'))));
    t.deepEqual(h.sim.pulls, ['svc.local/app:1.0']);
    // The Never pod was synced before the pull (or its back-off keeps it waiting): it reports ErrImageNeverPull until it retries.
    const never = h.status('never');
    t.true(waitingReason(never, 'c') === 'ErrImageNeverPull' || isRunningReady(never), JSON.stringify(never?.containerStatuses));
    const pulled = path.join(h.root, 'root', 'image_manager', 'pulled');
    const records = await readdir(pulled);
    t.is(records.length, 1);
    const rec = JSON.parse(await readFile(path.join(pulled, records[0]), 'utf8')) as { kind: string; images: string[]; imageRef: string };
    t.is(rec.kind, 'ImagePulledRecord');
    t.deepEqual(rec.images, ['svc.local/app:1.0']);
    t.deepEqual(await readdir(path.join(h.root, 'root', 'image_manager', 'pulling')), []);

    h.createPod('ifnp2', { containers: [{ name: 'c', image: 'svc.local/app:1.0', imagePullPolicy: 'IfNotPresent' }] });
    h.createPod('always', { containers: [{ name: 'c', image: 'svc.local/app:1.0', imagePullPolicy: 'Always' }] });
    t.true(await h.until(() => isRunningReady(h.status('ifnp2')) && isRunningReady(h.status('always'))));
    t.deepEqual(h.sim.pulls, ['svc.local/app:1.0', 'svc.local/app:1.0'], 'IfNotPresent found it; Always pulled again');
  } finally {
    await h.stop();
  }
});

test('Never with an absent image: ErrImageNeverPull with upstream message', async (t) => {
  const h = await startHarness();
  try {
    h.createPod('np', { containers: [{ name: 'c', image: 'svc.local/absent:1', imagePullPolicy: 'Never' }] });
    t.true(await h.until(() => waitingReason(h.status('np'), 'c') === 'ErrImageNeverPull'));
    t.is(h.status('np')!.containerStatuses![0].state.waiting?.message, 'Container image "svc.local/absent:1" is not present with pull policy of Never');
    t.is(h.status('np')!.phase, 'Pending');
    t.deepEqual(h.sim.pulls, []);
  } finally {
    await h.stop();
  }
});

test('an image that does not exist: ErrImagePull, then ImagePullBackOff while the back-off lasts, then another pull', async (t) => {
  // The simulated registry serves every reference unless told otherwise: this one it does not have.
  const h = await startHarness({ sim: { pullFailures: ['svc.local/nope:1'] } });
  try {
    h.createPod('ghost', { containers: [{ name: 'c', image: 'svc.local/nope:1', imagePullPolicy: 'IfNotPresent' }] });
    // Every waiting state the agent wrote, in order.
    const written = () =>
      h.api
        .callsOf('patch', 'pods')
        .filter((c) => c.name === 'ghost')
        .map((c) => (c.body as { status: { containerStatuses?: { state: { waiting?: { reason: string; message?: string } } }[] } }).status.containerStatuses?.[0]?.state.waiting)
        .filter((w) => w !== undefined);
    t.true(await h.until(() => waitingReason(h.status('ghost'), 'c') === 'ImagePullBackOff'));
    const first = written().find((w) => w.reason === 'ErrImagePull');
    t.regex(first?.message ?? '', /failed to pull and unpack image "svc\.local\/nope:1"/);
    t.is(h.status('ghost')!.containerStatuses![0].state.waiting?.message, 'Back-off pulling image "svc.local/nope:1"');
    t.is(h.sim.pulls.length, 1, 'no pull during the back-off');
    await h.clock.advance(5000);
    t.is(h.sim.pulls.length, 1);
    // After 10 s the pull is tried again (and fails again), then the back-off doubles.
    t.true(await h.until(() => h.sim.pulls.length === 2, 10_000));
    t.true(await h.until(() => h.sim.pulls.length === 3, 25_000));
    t.true(await h.until(async () => (await readdir(path.join(h.root, 'root', 'image_manager', 'pulling'))).length === 0, 2000), 'failed pulls leave no intent');
    t.true(written().filter((w) => w.reason === 'ErrImagePull').length >= 2);
    // Once the image appears, the pod starts.
    h.sim.publishImage('svc.local/nope:1');
    t.true(await h.until(() => isRunningReady(h.status('ghost')), 120_000));
  } finally {
    await h.stop();
  }
});

test('CreateContainerError and RunContainerError carry the runtime message; a failed start becomes a crash loop', async (t) => {
  const h = await startHarness({
    sim: {
      behaviours: [
        { podName: 'nocreate', createError: 'failed to create containerd container: boom' },
        { podName: 'nostart', startError: 'exec: "nope": executable file not found in $PATH' },
      ],
    },
  });
  try {
    h.createPod('nocreate', { containers: [{ name: 'c', image: BUSYBOX, imagePullPolicy: 'IfNotPresent' }] });
    h.createPod('nostart', { containers: [{ name: 'c', image: BUSYBOX, imagePullPolicy: 'IfNotPresent' }] });
    // CreateContainerError stays in the API status. RunContainerError lasts only until the next
    // sync, which the exit event of the failed start triggers at once: the status manager writes
    // the latest status, so the API may never hold it. The sync reports it in its log line.
    t.true(await h.until(() => h.status('nocreate')?.containerStatuses?.[0]?.state.waiting?.reason === 'CreateContainerError'));
    t.is(h.status('nocreate')!.containerStatuses![0].state.waiting?.message, 'failed to create containerd container: boom');
    t.true(await h.until(() => h.log.find('container not started').some((l) => l.obj['reason'] === 'RunContainerError')));
    const run = h.log.find('container not started').find((l) => l.obj['reason'] === 'RunContainerError')!;
    t.is(run.obj['pod'], `nostart_default(${h.pod('nostart')!.metadata.uid})`);
    t.regex(String(run.obj['message']), /executable file not found/);
    t.true(await h.until(() => waitingReason(h.status('nostart'), 'c') === 'CrashLoopBackOff', 30_000));
    t.is(h.status('nostart')!.containerStatuses![0].lastState.terminated?.exitCode, 128);
  } finally {
    await h.stop();
  }
});

test('a missing configmap is CreateContainerConfigError until it exists; env comes from configmaps, secrets, fields and $(VAR)', async (t) => {
  const h = await startHarness();
  try {
    h.secret('creds', { password: 's3cret' });
    h.createPod('envs', {
      containers: [
        {
          name: 'c',
          image: BUSYBOX,
          imagePullPolicy: 'IfNotPresent',
          command: ['echo'],
          args: ['$(GREETING) from $(MY_POD)', '$$(GREETING)'],
          envFrom: [{ configMapRef: { name: 'settings' }, prefix: 'CFG_' }],
          env: [
            { name: 'GREETING', valueFrom: { configMapKeyRef: { name: 'settings', key: 'greeting' } } },
            { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'creds', key: 'password' } } },
            { name: 'MY_POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            { name: 'MY_NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
            { name: 'MY_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
            { name: 'OPTIONAL', valueFrom: { configMapKeyRef: { name: 'settings', key: 'absent', optional: true } } },
            { name: 'COMBINED', value: '$(MY_NODE)/$(UNKNOWN)' },
            { name: 'MEM', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
          ],
          resources: { limits: { memory: '64Mi' } },
        },
      ],
    });
    t.true(await h.until(() => waitingReason(h.status('envs'), 'c') === 'CreateContainerConfigError'));
    t.is(h.status('envs')!.containerStatuses![0].state.waiting?.message, 'configmap "settings" not found');
    h.configMap('settings', { greeting: 'hello', level: 'debug' });
    t.true(await h.until(() => isRunningReady(h.status('envs')), 30_000));
    const cfg = h.sim.lastConfig('c')!;
    const env = Object.fromEntries((cfg.envs ?? []).map((e) => [e.key, e.value]));
    t.is(env['GREETING'], 'hello');
    t.is(env['CFG_greeting'], 'hello');
    t.is(env['CFG_level'], 'debug');
    t.is(env['PASSWORD'], 's3cret');
    t.is(env['MY_POD'], 'envs');
    t.is(env['MY_NODE'], 'node-1');
    t.regex(env['MY_IP'] ?? '', /^10\.88\./);
    t.false('OPTIONAL' in env);
    t.is(env['COMBINED'], 'node-1/$(UNKNOWN)');
    t.is(env['MEM'], '64');
    t.deepEqual(cfg.args, ['hello from envs', '$(GREETING)']);
  } finally {
    await h.stop();
  }
});

test('volumes: configMap and secret files with modes, emptyDir, hostPath, mounts with subPath and readOnly; resources reach the runtime', async (t) => {
  const h = await startHarness();
  try {
    h.configMap('web', { 'index.html': '<h1>hi</h1>', 'app.conf': 'x=1' });
    h.secret('tls', { 'tls.key': 'KEY' });
    const hostDir = path.join(h.root, 'host-data');
    const pod = h.createPod('vols', {
      volumes: [
        { name: 'site', configMap: { name: 'web', items: [{ key: 'index.html', path: 'html/index.html', mode: 0o444 }] } },
        { name: 'certs', secret: { secretName: 'tls', defaultMode: 0o600 } },
        { name: 'scratch', emptyDir: {} },
        { name: 'data', hostPath: { path: hostDir, type: 'DirectoryOrCreate' } },
      ],
      containers: [
        {
          name: 'c',
          image: BUSYBOX,
          imagePullPolicy: 'IfNotPresent',
          resources: { requests: { cpu: '250m', memory: '32Mi' }, limits: { cpu: '500m', memory: '64Mi' } },
          volumeMounts: [
            { name: 'site', mountPath: '/usr/share/html', readOnly: true },
            { name: 'certs', mountPath: '/etc/tls' },
            { name: 'scratch', mountPath: '/tmp/x', subPath: 'sub' },
            { name: 'data', mountPath: '/data' },
          ],
        },
      ],
    });
    t.true(await h.until(() => isRunningReady(h.status('vols'))));
    const vols = path.join(h.root, 'root', 'pods', pod.metadata.uid!, 'volumes');
    t.is(await readFile(path.join(vols, 'svc.io~configmap', 'site', 'html', 'index.html'), 'utf8'), '<h1>hi</h1>');
    t.false(existsSync(path.join(vols, 'svc.io~configmap', 'site', 'app.conf')), 'items select keys');
    t.is(await readFile(path.join(vols, 'svc.io~secret', 'certs', 'tls.key'), 'utf8'), 'KEY');
    const { statSync } = await import('node:fs');
    t.is(statSync(path.join(vols, 'svc.io~secret', 'certs', 'tls.key')).mode & 0o777, 0o600);
    t.is(statSync(path.join(vols, 'svc.io~configmap', 'site', 'html', 'index.html')).mode & 0o777, 0o444);
    t.true(statSync(hostDir).isDirectory(), 'DirectoryOrCreate made it');
    const cfg = h.sim.lastConfig('c')!;
    const mounts = Object.fromEntries((cfg.mounts ?? []).map((m) => [m.containerPath, m]));
    t.is(mounts['/usr/share/html']?.hostPath, path.join(vols, 'svc.io~configmap', 'site'));
    t.true(mounts['/usr/share/html']?.readonly);
    t.is(mounts['/tmp/x']?.hostPath, path.join(vols, 'svc.io~empty-dir', 'scratch', 'sub'));
    t.is(mounts['/data']?.hostPath, hostDir);
    t.truthy(mounts['/dev/termination-log']);
    const r = cfg.linux?.resources;
    t.is(r?.cpuShares, 256);
    t.is(r?.cpuPeriod, 100_000);
    t.is(r?.cpuQuota, 50_000);
    t.is(r?.memoryLimitInBytes, 64 * 2 ** 20);
    t.true((r?.oomScoreAdj ?? -1) >= 2 && (r?.oomScoreAdj ?? 1000) <= 999);
    t.is(h.status('vols')!.qosClass, 'Burstable');
    // A configMap update reaches the volume on a later sync.
    h.configMap('web', { 'index.html': '<h1>v2</h1>' });
    h.createPod('poke', { containers: [{ name: 'c', image: BUSYBOX, imagePullPolicy: 'IfNotPresent' }] });
    await h.clock.advance(61_000);
    t.true(await h.until(async () => (await readFile(path.join(vols, 'svc.io~configmap', 'site', 'html', 'index.html'), 'utf8')) === '<h1>v2</h1>', 70_000));
  } finally {
    await h.stop();
  }
});

test('a Guaranteed pod never asks for a negative oom_score_adj; sandbox carries the cgroup parent and hostname', async (t) => {
  const h = await startHarness();
  try {
    const pod = h.createPod('guar', {
      containers: [{ name: 'c', image: BUSYBOX, imagePullPolicy: 'IfNotPresent', resources: { limits: { cpu: '1', memory: '128Mi' } } }],
    });
    t.true(await h.until(() => isRunningReady(h.status('guar'))));
    t.is(h.status('guar')!.qosClass, 'Guaranteed');
    t.is(h.sim.lastConfig('c')!.linux?.resources?.oomScoreAdj, 0);
    const sb = h.sim.sandboxes.at(-1)!;
    t.is(sb.linux?.cgroupParent, `/svc-node/pod${pod.metadata.uid}`);
    t.is(sb.hostname, 'guar');
    t.is(sb.logDirectory, path.join(h.root, 'logs', `default_guar_${pod.metadata.uid}`));
  } finally {
    await h.stop();
  }
});

test('a runtime that goes away: syncs fail without touching the pod, and it recovers when the runtime is back', async (t) => {
  const h = await startHarness({ sim: { behaviours: [{ podName: 'flaky', exitAfterMs: 20_000, exitCode: 1 }] } });
  try {
    const pod = h.createPod('flaky', { containers: [{ name: 'c', image: BUSYBOX, imagePullPolicy: 'IfNotPresent' }] });
    t.true(await h.until(() => isRunningReady(h.status('flaky'))));
    h.sim.setAvailable(false);
    // The container exits meanwhile; the next periodic sync (1 min) fails.
    await h.clock.advance(65_000);
    t.true(h.log.find('pod sync failed; retrying').length > 0);
    t.is(h.status('flaky')!.phase, 'Running', 'status not rewritten from a runtime that cannot answer');
    h.sim.setAvailable(true);
    t.true(await h.until(async () => (await h.containers(pod.metadata.uid!)).some((c) => c.metadata.attempt === 1), 60_000));
    t.true(await h.until(() => (h.status('flaky')?.containerStatuses?.[0]?.restartCount ?? 0) >= 1, 30_000));
  } finally {
    await h.stop();
  }
});

test('a slow runtime: a CreateContainer past its deadline is CreateContainerError, the worker is not stuck and retries', async (t) => {
  const h = await startHarness({ manager: { runtimeRequestTimeoutMs: 5000 } });
  try {
    h.sim.setLatency('CreateContainer', 60_000);
    h.createPod('slow', { containers: [{ name: 'c', image: BUSYBOX, imagePullPolicy: 'IfNotPresent' }] });
    t.true(await h.until(() => waitingReason(h.status('slow'), 'c') === 'CreateContainerError', 30_000));
    t.regex(h.status('slow')!.containerStatuses![0].state.waiting?.message ?? '', /deadline exceeded/);
    h.sim.setLatency('CreateContainer', 0);
    t.true(await h.until(() => isRunningReady(h.status('slow')), 60_000));
  } finally {
    await h.stop();
  }
});

test('a failing sandbox creation keeps the pod ContainerCreating with the reason, and is retried', async (t) => {
  const h = await startHarness();
  try {
    h.sim.injectFault('RunPodSandbox', new RuntimeError('Unknown', 'failed to setup network for sandbox: cni plugin not initialized', 'RunPodSandbox'), 2);
    h.createPod('nonet', { containers: [{ name: 'c', image: BUSYBOX, imagePullPolicy: 'IfNotPresent' }] });
    t.true(await h.until(() => waitingReason(h.status('nonet'), 'c') === 'ContainerCreating' && /cni plugin/.test(h.status('nonet')?.containerStatuses?.[0]?.state.waiting?.message ?? '')));
    t.true(await h.until(() => isRunningReady(h.status('nonet')), 60_000));
  } finally {
    await h.stop();
  }
});

test('an image name that does not parse is InvalidImageName', async (t) => {
  const h = await startHarness();
  try {
    h.createPod('badname', { containers: [{ name: 'c', image: 'Not A Valid Image!', imagePullPolicy: 'IfNotPresent' }] });
    t.true(await h.until(() => waitingReason(h.status('badname'), 'c') === 'InvalidImageName'));
    t.regex(h.status('badname')!.containerStatuses![0].state.waiting!.message!, /^Failed to apply default image tag "Not A Valid Image!"/);
    t.deepEqual(h.sim.pulls, []);
  } finally {
    await h.stop();
  }
});
