/**
 * Seccomp profiles reach the runtime in the CRI security context (profile_type, localhost_ref),
 * and a Localhost profile that is missing or invalid fails container creation with
 * CreateContainerError naming the file (spec Appendix D and section 7).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { BUSYBOX, isRunningReady, startHarness, waitingReason } from './harness';

test('a missing Localhost profile is CreateContainerError naming the file; once the file is there the container starts with it', async (t) => {
  const h = await startHarness();
  try {
    h.createPod('sc', {
      containers: [
        { name: 'c', image: BUSYBOX, imagePullPolicy: 'IfNotPresent', securityContext: { seccompProfile: { type: 'Localhost', localhostProfile: 'profiles/audit.json' } } },
      ],
    });
    const file = path.join(h.root, 'root', 'seccomp', 'profiles', 'audit.json');
    t.true(await h.until(() => waitingReason(h.status('sc'), 'c') === 'CreateContainerError'));
    t.is(h.status('sc')!.containerStatuses![0].state.waiting?.message, `cannot load seccomp profile "${file}": no such file or directory`);
    t.is(h.status('sc')!.phase, 'Pending');

    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, JSON.stringify({ defaultAction: 'SCMP_ACT_ALLOW', syscalls: [{ names: ['bogus name'], action: 'SCMP_ACT_NOPE' }] }));
    t.true(await h.until(() => /^invalid seccomp profile/.test(h.status('sc')?.containerStatuses?.[0]?.state.waiting?.message ?? ''), 15_000));
    t.regex(h.status('sc')!.containerStatuses![0].state.waiting!.message!, /syscalls\[0\]\.action: unsupported action "SCMP_ACT_NOPE"/);

    await writeFile(file, JSON.stringify({ defaultAction: 'SCMP_ACT_LOG' }));
    t.true(await h.until(() => isRunningReady(h.status('sc')), 15_000));
    t.deepEqual(h.sim.lastConfig('c')!.linux?.securityContext?.seccomp, { profileType: 'Localhost', localhostRef: file });
  } finally {
    await h.stop();
  }
});

test('inheritance: pod-level profile for containers and init containers, container overrides, privileged is Unconfined, seccompDefault gives RuntimeDefault', async (t) => {
  const h = await startHarness({
    manager: { seccompDefault: true },
    sim: { behaviours: [{ name: 'init', exitAfterMs: 100 }] },
    prepare: async (root) => {
      await mkdir(path.join(root, 'root', 'seccomp'), { recursive: true });
      await writeFile(path.join(root, 'root', 'seccomp', 'pod.json'), JSON.stringify({ defaultAction: 'SCMP_ACT_ERRNO', defaultErrnoRet: 1, syscalls: [{ names: ['read', 'write'], action: 'SCMP_ACT_ALLOW' }] }));
    },
  });
  try {
    h.createPod('inherit', {
      securityContext: { seccompProfile: { type: 'Localhost', localhostProfile: 'pod.json' } },
      initContainers: [{ name: 'init', image: BUSYBOX, imagePullPolicy: 'IfNotPresent' }],
      containers: [
        { name: 'plain', image: BUSYBOX, imagePullPolicy: 'IfNotPresent' },
        { name: 'own', image: BUSYBOX, imagePullPolicy: 'IfNotPresent', securityContext: { seccompProfile: { type: 'Unconfined' } } },
        { name: 'priv', image: BUSYBOX, imagePullPolicy: 'IfNotPresent', securityContext: { privileged: true } },
      ],
    });
    h.createPod('defaulted', { containers: [{ name: 'dflt', image: BUSYBOX, imagePullPolicy: 'IfNotPresent' }] });
    t.true(await h.until(() => isRunningReady(h.status('inherit')) && isRunningReady(h.status('defaulted'))));
    const podFile = path.join(h.root, 'root', 'seccomp', 'pod.json');
    const sec = (n: string) => h.sim.lastConfig(n)!.linux?.securityContext?.seccomp;
    t.deepEqual(sec('init'), { profileType: 'Localhost', localhostRef: podFile });
    t.deepEqual(sec('plain'), { profileType: 'Localhost', localhostRef: podFile });
    t.deepEqual(sec('own'), { profileType: 'Unconfined' });
    t.deepEqual(sec('priv'), { profileType: 'Unconfined' });
    t.true(h.sim.lastConfig('priv')!.linux?.securityContext?.privileged);
    t.deepEqual(sec('dflt'), { profileType: 'RuntimeDefault' });
    const sandbox = h.sim.sandboxes.find((s) => s.metadata.name === 'inherit')!;
    t.deepEqual(sandbox.linux?.securityContext?.seccomp, { profileType: 'Localhost', localhostRef: podFile });
    t.true(sandbox.linux?.securityContext?.privileged, 'a privileged container makes the sandbox privileged');
  } finally {
    await h.stop();
  }
});

test('a localhostProfile that leaves the seccomp directory is refused', async (t) => {
  const h = await startHarness();
  try {
    h.createPod('escape', {
      securityContext: { seccompProfile: { type: 'Localhost', localhostProfile: '../../etc/passwd' } },
      containers: [{ name: 'c', image: BUSYBOX, imagePullPolicy: 'IfNotPresent' }],
    });
    t.true(await h.until(() => waitingReason(h.status('escape'), 'c') === 'CreateContainerError'));
    t.regex(h.status('escape')!.containerStatuses![0].state.waiting!.message!, /leaves the seccomp directory/);
    // The sandbox still runs (with RuntimeDefault), so the error is the container's.
    t.deepEqual(h.sim.sandboxes.at(-1)!.linux?.securityContext?.seccomp, { profileType: 'RuntimeDefault' });
  } finally {
    await h.stop();
  }
});
