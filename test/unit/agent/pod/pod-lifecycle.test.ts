/**
 * Pods from the API run on the simulator: sandbox and containers as the spec says, status written
 * to pods/status, deletion with the grace period ending in the API object's removal.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { podsResource } from '../../../../agent/pod/config-objects';
import { BUSYBOX, HOST_IP, isRunningReady, startHarness, waitingReason } from './harness';

test('a pod bound to the node gets a sandbox and a running container; its status says Running and Ready with IPs', async (t) => {
  const h = await startHarness();
  try {
    const pod = h.createPod('web', {
      containers: [{ name: 'app', image: BUSYBOX, imagePullPolicy: 'IfNotPresent', command: ['sleep'], args: ['3600'], ports: [{ containerPort: 8080 }] }],
    });
    t.true(await h.until(() => isRunningReady(h.status('web'))));
    const s = h.status('web')!;
    t.regex(s.podIP ?? '', /^10\.88\./);
    t.deepEqual(s.podIPs, [{ ip: s.podIP! }]);
    t.is(s.hostIP, HOST_IP);
    t.deepEqual(s.hostIPs, [{ ip: HOST_IP }]);
    t.truthy(s.startTime);
    t.is(s.qosClass, 'BestEffort');
    t.deepEqual(
      s.conditions?.map((c) => [c.type, c.status]),
      [
        ['Initialized', 'True'],
        ['Ready', 'True'],
        ['ContainersReady', 'True'],
        ['PodScheduled', 'True'],
      ],
    );
    const cs = s.containerStatuses![0];
    t.is(cs.name, 'app');
    t.truthy(cs.state.running?.startedAt);
    t.is(cs.restartCount, 0);
    t.true(cs.ready);
    t.true(cs.started);
    t.regex(cs.containerID ?? '', /^svc-sim:\/\/[0-9a-f]{64}$/);
    t.is(cs.image, BUSYBOX);
    t.regex(cs.imageID, /^(sha256:|svc\.local\/busybox@sha256:)/);

    const sandboxes = await h.sim.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': pod.metadata.uid! } });
    t.is(sandboxes.length, 1);
    const sst = await h.sim.podSandboxStatus(sandboxes[0].id);
    t.is(sst.status.metadata.name, 'web');
    const containers = await h.containers(pod.metadata.uid!);
    t.is(containers.length, 1);
    t.is(containers[0].labels['io.kubernetes.container.name'], 'app');
    t.is(containers[0].logPath, path.join(h.root, 'logs', `default_web_${pod.metadata.uid}`, 'app', '0.log'));
    // Status is written when it changes, not on every sync.
    const writes = h.api.callsOf('patch', 'pods').length;
    await h.clock.advance(120_000);
    t.is(h.api.callsOf('patch', 'pods').length, writes);
  } finally {
    await h.stop();
  }
});

test.serial('a container that exits is restarted with crash-loop back-off: 10 s, then 20 s, and the status shows CrashLoopBackOff', async (t) => {
  // Housekeeping (container GC) only when asked, so every attempt stays visible.
  const h = await startHarness({ sim: { behaviours: [{ name: 'crasher', exitAfterMs: 1000, exitCode: 2 }] }, manager: { housekeepingPeriodMs: 3_600_000 } });
  try {
    const pod = h.createPod('crash', { containers: [{ name: 'crasher', image: BUSYBOX, imagePullPolicy: 'IfNotPresent' }] });
    t.true(await h.until(() => waitingReason(h.status('crash'), 'crasher') === 'CrashLoopBackOff', 60_000));
    const s = h.status('crash')!;
    const cs = s.containerStatuses![0];
    t.regex(cs.state.waiting?.message ?? '', /^back-off 10s restarting failed container=crasher pod=crash_default\(pod-uid-crash-\d+\)$/);
    t.is(cs.lastState.terminated?.exitCode, 2);
    t.is(cs.lastState.terminated?.reason, 'Error');
    t.is(cs.restartCount, 1);
    t.is(s.phase, 'Running');
    t.is(s.conditions?.find((c) => c.type === 'Ready')?.reason, 'ContainersNotReady');
    // The back-off doubles: the next wait is announced as 20 s.
    t.true(await h.until(() => /^back-off 20s restarting failed container=crasher /.test(h.status('crash')?.containerStatuses?.[0]?.state.waiting?.message ?? ''), 120_000));
    t.true(await h.until(async () => (await h.containers(pod.metadata.uid!)).some((c) => c.metadata.attempt === 3), 120_000));
    const all = await h.containers(pod.metadata.uid!);
    const created = new Map(all.map((c) => [c.metadata.attempt, c]));
    // Never earlier than the back-off after the previous exit. No upper bound: fake time moves in
    // 100 ms steps while the agent does real file I/O, so on a loaded machine it may act later.
    const gap = (a: number) => created.get(a)!.createdAt - created.get(a - 1)!.finishedAt;
    t.true(gap(2) >= 10_000, `second restart after ${gap(2)} ms`);
    t.true(gap(3) >= 20_000, `third restart after ${gap(3)} ms`);
    t.true(await h.until(() => (h.status('crash')?.containerStatuses?.[0]?.restartCount ?? 0) >= 3, 30_000));
    // Garbage collection keeps the newest container and one dead one before it.
    await h.mgr.housekeepOnce();
    const kept = await h.containers(pod.metadata.uid!);
    t.true(kept.length <= 2, `${kept.length} containers kept`);
    t.true(kept.some((c) => c.metadata.attempt >= 3));
  } finally {
    await h.stop();
  }
});

test('restartPolicy Never: a failed container makes the pod Failed and its sandbox is stopped; OnFailure with exit 0 ends Succeeded', async (t) => {
  const h = await startHarness({
    sim: {
      behaviours: [
        { podName: 'once', exitAfterMs: 500, exitCode: 1 },
        { podName: 'done', exitAfterMs: 500, exitCode: 0 },
      ],
    },
  });
  try {
    const once = h.createPod('once', { restartPolicy: 'Never', containers: [{ name: 'c', image: BUSYBOX, imagePullPolicy: 'IfNotPresent' }] });
    h.createPod('done', { restartPolicy: 'OnFailure', containers: [{ name: 'c', image: BUSYBOX, imagePullPolicy: 'IfNotPresent' }] });
    t.true(await h.until(() => h.status('once')?.phase === 'Failed' && h.status('done')?.phase === 'Succeeded'));
    const s = h.status('once')!;
    t.is(s.containerStatuses![0].state.terminated?.reason, 'Error');
    t.is(s.containerStatuses![0].state.terminated?.exitCode, 1);
    t.is(s.conditions?.find((c) => c.type === 'Ready')?.status, 'False');
    t.is(h.status('done')!.containerStatuses![0].state.terminated?.reason, 'Completed');
    t.is(h.status('done')!.conditions?.find((c) => c.type === 'Ready')?.reason, 'PodCompleted');
    t.true(await h.until(async () => (await h.sim.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': once.metadata.uid! } }))[0]?.state === 'SANDBOX_NOTREADY'));
    await h.clock.advance(60_000);
    t.is((await h.containers(once.metadata.uid!)).length, 1, 'never restarted');
  } finally {
    await h.stop();
  }
});

test('init containers run in order before the app; the pod is PodInitializing until they finish', async (t) => {
  const h = await startHarness({ sim: { behaviours: [{ name: 'init-a', exitAfterMs: 2000 }, { name: 'init-b', exitAfterMs: 2000 }] } });
  try {
    const pod = h.createPod('init', {
      initContainers: [
        { name: 'init-a', image: BUSYBOX, imagePullPolicy: 'IfNotPresent' },
        { name: 'init-b', image: BUSYBOX, imagePullPolicy: 'IfNotPresent' },
      ],
      containers: [{ name: 'app', image: BUSYBOX, imagePullPolicy: 'IfNotPresent' }],
    });
    t.true(await h.until(() => h.status('init')?.initContainerStatuses?.[0]?.state.running !== undefined));
    const s = h.status('init')!;
    t.is(s.phase, 'Pending');
    t.is(waitingReason(s, 'init-b'), 'PodInitializing');
    t.is(waitingReason(s, 'app'), 'PodInitializing');
    t.is(s.conditions?.find((c) => c.type === 'Initialized')?.message, 'containers with incomplete status: [init-a init-b]');
    t.true(await h.until(() => isRunningReady(h.status('init'))));
    const order = (await h.containers(pod.metadata.uid!)).map((c) => c.metadata.name);
    t.deepEqual(order, ['init-a', 'init-b', 'app']);
    const done = h.status('init')!;
    t.is(done.initContainerStatuses![1].state.terminated?.reason, 'Completed');
    t.is(done.conditions?.find((c) => c.type === 'Initialized')?.status, 'True');
  } finally {
    await h.stop();
  }
});

test('a failing init container with restartPolicy Never fails the pod without starting the app', async (t) => {
  const h = await startHarness({ sim: { behaviours: [{ name: 'setup', exitAfterMs: 500, exitCode: 3 }] } });
  try {
    const pod = h.createPod('badinit', {
      restartPolicy: 'Never',
      initContainers: [{ name: 'setup', image: BUSYBOX, imagePullPolicy: 'IfNotPresent' }],
      containers: [{ name: 'app', image: BUSYBOX, imagePullPolicy: 'IfNotPresent' }],
    });
    t.true(await h.until(() => h.status('badinit')?.phase === 'Failed'));
    t.deepEqual((await h.containers(pod.metadata.uid!)).map((c) => c.metadata.name), ['setup']);
    t.is(h.status('badinit')!.initContainerStatuses![0].state.terminated?.exitCode, 3);
  } finally {
    await h.stop();
  }
});

test('deletion stops containers with the grace period, removes everything the pod had on the node, and deletes the API object', async (t) => {
  const h = await startHarness({ sim: { behaviours: [{ name: 'stubborn', stopDelayMs: Infinity }] } });
  try {
    const pod = h.createPod('del', {
      terminationGracePeriodSeconds: 30,
      volumes: [{ name: 'scratch', emptyDir: {} }],
      containers: [{ name: 'stubborn', image: BUSYBOX, imagePullPolicy: 'IfNotPresent', volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }] }],
    });
    const uid = pod.metadata.uid!;
    t.true(await h.until(() => isRunningReady(h.status('del'))));
    const podDir = path.join(h.root, 'root', 'pods', uid);
    t.true(existsSync(path.join(podDir, 'volumes', 'svc.io~empty-dir', 'scratch')));
    // The runtime created the pod's cgroup parent; the agent must remove it afterwards.
    const cg = path.join(h.root, 'cgroup', 'cpu', 'svc-node', `pod${uid}`);
    await mkdir(path.join(cg, 'container'), { recursive: true });

    h.deletePod('del', 5);
    const start = h.clock.now();
    t.true(await h.until(() => h.pod('del') === undefined, 60_000));
    const [c] = (await h.sim.listContainers()).filter((x) => x.labels['io.kubernetes.pod.uid'] === uid);
    t.true(c === undefined, 'containers removed');
    t.deepEqual(await h.sim.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': uid } }), []);
    t.false(existsSync(podDir));
    t.false(existsSync(cg));
    // The container ignored SIGTERM: it was killed when the 5 s grace period ran out, not before.
    const killed = h.log.find('killing container').find((l) => l.obj['pod'] === `del_default(${uid})`);
    t.is(killed?.obj['graceSeconds'], 5);
    t.true(h.clock.now() - start >= 5000);
    // The final status went out before the delete, with a terminal phase.
    const finalPatch = h.api.callsOf('patch', 'pods').filter((c) => c.name === 'del').at(-1)!;
    t.is((finalPatch.body as { status: { phase: string } }).status.phase, 'Failed');
    t.is(h.api.callsOf('delete', 'pods').filter((c) => c.name === 'del').length, 1);
  } finally {
    await h.stop();
  }
});

test('a pod removed from the API without graceful deletion is stopped and cleaned up', async (t) => {
  const h = await startHarness();
  try {
    const pod = h.createPod('gone', { containers: [{ name: 'c', image: BUSYBOX, imagePullPolicy: 'IfNotPresent' }] });
    t.true(await h.until(() => isRunningReady(h.status('gone'))));
    h.api.remove(podsResource, 'gone', 'default');
    t.true(await h.until(async () => (await h.sim.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': pod.metadata.uid! } })).length === 0));
    t.true(await h.until(() => h.mgr.workerUids.length === 0));
    t.is(h.api.callsOf('delete', 'pods').length, 0, 'nothing to delete: the object is gone already');
  } finally {
    await h.stop();
  }
});

test('hostNetwork pods get a sandbox without hostname on the node network and the host IP as pod IP', async (t) => {
  const h = await startHarness();
  try {
    const pod = h.createPod('hostnet', { hostNetwork: true, containers: [{ name: 'c', image: BUSYBOX, imagePullPolicy: 'IfNotPresent' }] });
    t.true(await h.until(() => isRunningReady(h.status('hostnet'))));
    t.is(h.status('hostnet')!.podIP, HOST_IP);
    const [sb] = await h.sim.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': pod.metadata.uid! } });
    const st = await h.sim.podSandboxStatus(sb.id);
    t.is(st.status.namespaceOptions?.network, 'NODE');
    t.is(st.status.ip, '');
  } finally {
    await h.stop();
  }
});

test('activeDeadlineSeconds fails the pod with DeadlineExceeded and stops it', async (t) => {
  const h = await startHarness();
  try {
    h.createPod('deadline', { activeDeadlineSeconds: 30, containers: [{ name: 'c', image: BUSYBOX, imagePullPolicy: 'IfNotPresent' }] });
    t.true(await h.until(() => isRunningReady(h.status('deadline'))));
    t.true(await h.until(() => h.status('deadline')?.phase === 'Failed', 40_000));
    const s = h.status('deadline')!;
    t.is(s.reason, 'DeadlineExceeded');
    t.is(s.message, 'Pod was active on the node longer than the specified deadline');
    // Stopped with SIGTERM (the simulated process honours it).
    t.is(s.containerStatuses![0].state.terminated?.exitCode, 143);
  } finally {
    await h.stop();
  }
});

test('an agent restart adopts running containers: no new attempt, the start time and restart count are kept', async (t) => {
  const first = await startHarness();
  let second: Awaited<ReturnType<typeof startHarness>> | undefined;
  try {
    const pod = first.createPod('keep', { containers: [{ name: 'c', image: BUSYBOX, imagePullPolicy: 'IfNotPresent' }] });
    t.true(await first.until(() => isRunningReady(first.status('keep'))));
    const before = first.status('keep')!;
    await first.stopAgent();
    await first.clock.advance(60_000);
    second = await startHarness({ reuse: { sim: first.sim, api: first.api, root: first.root, clock: first.clock } });
    const s = second;
    await s.clock.advance(5000);
    t.true(await s.until(() => s.log.find('connected to the container runtime').length > 0));
    await s.clock.advance(5000);
    const containers = await s.containers(pod.metadata.uid!);
    t.is(containers.length, 1, 'the running container was adopted, not replaced');
    t.is(s.sim.sandboxes.length, 1, 'no second sandbox');
    const after = s.status('keep')!;
    t.is(after.startTime, before.startTime);
    t.is(after.containerStatuses![0].containerID, before.containerStatuses![0].containerID);
    t.true(isRunningReady(after));
  } finally {
    await second?.stop();
    await first.stop().catch(() => undefined);
  }
});

test('a runtime that is not there at start: the agent keeps trying and runs pods once it answers', async (t) => {
  const h = await startHarness();
  try {
    // The harness connected already; a second manager against an unavailable runtime shows the retry.
    h.sim.setAvailable(false);
    const late = await startHarness({ reuse: { sim: h.sim, api: h.api, root: h.root, clock: h.clock } });
    try {
      await late.clock.advance(3000);
      t.truthy(late.log.find('container runtime not available yet')[0]);
      h.sim.setAvailable(true);
      t.true(await late.until(() => late.log.find('connected to the container runtime').length > 0, 60_000));
    } finally {
      await late.stopAgent();
    }
  } finally {
    await h.stop();
  }
});
