/** Housekeeping removes what the runtime and the disk hold for pods the agent does not know; container GC keeps the newest and one dead per container. */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { planContainerGc } from '../../../../agent/pod/container-gc';
import { PodCgroups } from '../../../../agent/pod/pod-cgroups';
import type { Container, PodSandbox } from '../../../../agent/cri/types';
import { BUSYBOX, isRunningReady, startHarness } from './harness';

const labels = { 'svc.io/managed-by': 'svc-node' };

test('sandboxes and containers of unknown pods, their pod dirs and cgroups are removed once the sources are synced; other runtime objects are left alone', async (t) => {
  const h = await startHarness({
    prepare: async (root) => {
      await mkdir(path.join(root, 'root', 'pods', 'ghost-uid', 'volumes'), { recursive: true });
      await mkdir(path.join(root, 'cgroup', 'cpu', 'svc-node', 'podghost-uid'), { recursive: true });
    },
  });
  try {
    // Left behind by an earlier run: a pod the API no longer has.
    const sb = { metadata: { name: 'ghost', namespace: 'default', uid: 'ghost-uid', attempt: 0 }, labels: { ...labels, 'io.kubernetes.pod.uid': 'ghost-uid' }, hostname: 'ghost' };
    const sbId = await h.sim.runPodSandbox(sb);
    const cId = await h.sim.createContainer(sbId, { metadata: { name: 'c', attempt: 0 }, image: { image: BUSYBOX }, labels: { ...labels, 'io.kubernetes.pod.uid': 'ghost-uid' } }, sb);
    await h.sim.startContainer(cId);
    // Not ours: no svc-node label.
    const foreign = { metadata: { name: 'other', namespace: 'default', uid: 'other-uid', attempt: 0 }, labels: { 'io.kubernetes.pod.uid': 'other-uid' }, hostname: 'other' };
    await h.sim.runPodSandbox(foreign);
    const live = h.createPod('live', { containers: [{ name: 'c', image: BUSYBOX, imagePullPolicy: 'IfNotPresent' }] });
    t.true(await h.until(() => isRunningReady(h.status('live'))));
    t.true(await h.until(async () => (await h.sim.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': 'ghost-uid' } })).length === 0, 10_000));
    t.is((await h.sim.listContainers({ labelSelector: { 'io.kubernetes.pod.uid': 'ghost-uid' } })).length, 0);
    t.is((await h.sim.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': 'other-uid' } })).length, 1, 'foreign sandbox kept');
    t.is((await h.sim.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': live.metadata.uid! } })).length, 1, 'live pod kept');
    t.true(await h.until(() => !existsSync(path.join(h.root, 'root', 'pods', 'ghost-uid')), 5000));
    t.true(await h.until(() => !existsSync(path.join(h.root, 'cgroup', 'cpu', 'svc-node', 'podghost-uid')), 5000));
    t.true(existsSync(path.join(h.root, 'root', 'pods', live.metadata.uid!)));
  } finally {
    await h.stop();
  }
});

function container(id: string, uid: string, name: string, attempt: number, state: Container['state'], sandbox = 's1'): Container {
  return {
    id,
    podSandboxId: sandbox,
    metadata: { name, attempt },
    image: { image: BUSYBOX },
    imageRef: 'sha256:x',
    imageId: 'sha256:x',
    state,
    createdAt: attempt * 1000,
    labels: { 'io.kubernetes.pod.uid': uid, 'io.kubernetes.container.name': name },
    annotations: {},
  };
}

function sandbox(id: string, uid: string, attempt: number, state: PodSandbox['state']): PodSandbox {
  return { id, metadata: { name: 'p', namespace: 'd', uid, attempt }, state, createdAt: attempt, labels: { 'io.kubernetes.pod.uid': uid }, annotations: {}, runtimeHandler: '' };
}

test('container GC plan: newest kept, one dead before it kept, older dead removed; old empty sandboxes removed; unknown pods untouched', (t) => {
  const containers = [
    container('a0', 'u1', 'app', 0, 'CONTAINER_EXITED', 's0'),
    container('a1', 'u1', 'app', 1, 'CONTAINER_EXITED'),
    container('a2', 'u1', 'app', 2, 'CONTAINER_EXITED'),
    container('a3', 'u1', 'app', 3, 'CONTAINER_RUNNING'),
    container('b0', 'u1', 'side', 0, 'CONTAINER_EXITED'),
    container('b1', 'u1', 'side', 1, 'CONTAINER_EXITED'),
    container('b2', 'u1', 'side', 2, 'CONTAINER_EXITED'),
    container('x0', 'gone', 'app', 0, 'CONTAINER_EXITED'),
    container('x1', 'gone', 'app', 1, 'CONTAINER_EXITED'),
  ];
  const sandboxes = [sandbox('s0', 'u1', 0, 'SANDBOX_NOTREADY'), sandbox('s1', 'u1', 1, 'SANDBOX_READY'), sandbox('old', 'u1', -1, 'SANDBOX_NOTREADY')];
  const plan = planContainerGc(containers, sandboxes, new Set(['u1']));
  t.deepEqual(plan.containers.sort(), ['a0', 'a1', 'b0']);
  t.deepEqual(plan.sandboxes.sort(), ['old', 's0']);
});

test('pod cgroups: parent names per driver; only empty directories are removed, and never with clean=false', async (t) => {
  const root = await mkdtemp(path.join(tmpdir(), 'svc-cg-'));
  try {
    const fs = path.join(root, 'cgroup');
    await mkdir(path.join(fs, 'memory', 'svc-node', 'poda', 'c1'), { recursive: true });
    await mkdir(path.join(fs, 'memory', 'svc-node', 'podb'), { recursive: true });
    // A directory that still holds a file stands for a cgroup with processes: rmdir fails.
    await writeFile(path.join(fs, 'memory', 'svc-node', 'podb', 'busy'), '');
    t.is(new PodCgroups({ driver: 'systemd', root: '/svc-node' }).parentFor('ab-cd'), 'svc_node-podab_cd.slice');
    const off = new PodCgroups({ driver: 'cgroupfs', root: '/svc-node', fsRoot: fs, clean: false });
    t.is(off.parentFor('a'), '/svc-node/poda');
    t.deepEqual(await off.podUids(), []);
    t.deepEqual(await off.remove('a'), []);
    t.true(existsSync(path.join(fs, 'memory', 'svc-node', 'poda')));
    const on = new PodCgroups({ driver: 'cgroupfs', root: '/svc-node', fsRoot: fs });
    t.deepEqual((await on.podUids()).sort(), ['a', 'b']);
    t.deepEqual(await on.remove('a'), []);
    t.false(existsSync(path.join(fs, 'memory', 'svc-node', 'poda')));
    t.deepEqual(await on.remove('b'), [path.join(fs, 'memory', 'svc-node', 'podb')]);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
