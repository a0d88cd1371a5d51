/** Housekeeping removes what the runtime and the disk hold for pods the agent does not know; container GC keeps the newest and one dead per container. */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { Simulator } from '../../../../agent/cri/simulator';
import { planContainerGc } from '../../../../agent/pod/container-gc';
import { Housekeeping } from '../../../../agent/pod/housekeeping';
import { MemLog } from '../node/fakes/mem-log';
import { PodCgroups } from '../../../../agent/pod/pod-cgroups';
import type { Container, PodSandbox } from '../../../../agent/cri/types';
import { BUSYBOX, isRunningReady, startHarness } from './harness';

const labels = { 'svc.io/managed-by': 'svc-node' };

test('sandboxes and containers of unknown pods, their pod dirs and cgroups are removed once the sources are synced; other runtime objects are left alone', async (t) => {
  const h = await startHarness({
    prepare: async (root) => {
      await mkdir(path.join(root, 'root', 'pods', 'ghost-uid', 'volumes'), { recursive: true });
      await mkdir(path.join(root, 'cgroup', 'cpu', 'svc-node', 'podghost-uid'), { recursive: true });
      // The ghost's log directory with a container log, and a directory that is not a pod's.
      await mkdir(path.join(root, 'logs', 'default_ghost_ghost-uid', 'c'), { recursive: true });
      await writeFile(path.join(root, 'logs', 'default_ghost_ghost-uid', 'c', '0.log'), 'old output\n');
      await mkdir(path.join(root, 'logs', 'not-a-pod-dir'), { recursive: true });
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
    t.true(await h.until(() => !existsSync(path.join(h.root, 'logs', 'default_ghost_ghost-uid')), 5000));
    t.true(existsSync(path.join(h.root, 'logs', `default_live_${live.metadata.uid!}`)), 'the live pod keeps its logs');
    t.true(existsSync(path.join(h.root, 'logs', 'not-a-pod-dir')), 'other directories are left alone');
  } finally {
    await h.stop();
  }
});

test('collecting a dead container deletes its log file and rotated logs; the kept containers keep theirs', async (t) => {
  const root = await mkdtemp(path.join(tmpdir(), 'svc-gc-logs-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const sim = new Simulator({ writeLogs: false });
  const uid = 'live-uid';
  const logDirectory = path.join(root, `default_p_${uid}`);
  const sb = { metadata: { name: 'p', namespace: 'default', uid, attempt: 0 }, labels: { ...labels, 'io.kubernetes.pod.uid': uid }, hostname: 'p', logDirectory };
  const sbId = await sim.runPodSandbox(sb);
  const ids: string[] = [];
  for (let attempt = 0; attempt < 3; attempt++) {
    const logPath = `c/${attempt}.log`;
    const id = await sim.createContainer(sbId, { metadata: { name: 'c', attempt }, image: { image: BUSYBOX }, labels: { ...labels, 'io.kubernetes.pod.uid': uid, 'io.kubernetes.container.name': 'c' }, logPath }, sb);
    await sim.startContainer(id);
    await sim.stopContainer(id, 0);
    await mkdir(path.join(logDirectory, 'c'), { recursive: true });
    await writeFile(path.join(logDirectory, logPath), `attempt ${attempt}\n`);
    ids.push(id);
  }
  await writeFile(path.join(logDirectory, 'c', '0.log.20260101-000000.gz'), 'rotated');
  const hk = new Housekeeping({
    runtime: sim,
    syncer: {} as never,
    volumes: {} as never,
    cgroups: {} as never,
    podLogsDir: root,
    log: new MemLog(),
    knownUids: () => new Set([uid]),
    sourcesReady: () => false,
    callTimeoutMs: 5000,
  });
  const report = await hk.runOnce();
  t.is(report.removedContainers, 1);
  t.deepEqual((await readdir(path.join(logDirectory, 'c'))).sort(), ['1.log', '2.log']);
  t.deepEqual((await sim.listContainers()).map((c) => c.id).sort(), ids.slice(1).sort());
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
