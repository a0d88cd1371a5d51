import { mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { RuntimeError, isRuntimeError } from '../../../../agent/cri/errors';
import { Simulator } from '../../../../agent/cri/simulator';
import type { SimulatorOptions } from '../../../../agent/cri/sim-options';
import type { ContainerEvent } from '../../../../agent/cri/types';
import { containerConfig, sandboxConfig } from './configs';
import { FakeClock, flush } from '../../../helpers/fake-clock';
import { readTar } from './tar-reader';

const BUSYBOX = 'docker.io/library/busybox:latest';

function setup(opts: SimulatorOptions = {}) {
  const clock = new FakeClock();
  const sim = new Simulator({ clock, ...opts });
  return { clock, sim };
}

async function runningContainer(sim: Simulator, pod = 'p', name = 'c', image = BUSYBOX) {
  const sb = sandboxConfig(pod);
  const sandboxId = await sim.runPodSandbox(sb);
  const id = await sim.createContainer(sandboxId, containerConfig(name, image), sb);
  await sim.startContainer(id);
  return { sandboxId, id, sb };
}

async function rejectsWith(t: import('ava').ExecutionContext, p: Promise<unknown>, code: RuntimeError['code']): Promise<RuntimeError> {
  const e = await t.throwsAsync(p);
  t.true(isRuntimeError(e, code), `expected ${code}, got ${String(e)}`);
  return e as RuntimeError;
}

test('sandbox lifecycle: READY with a pod IP, stop makes it NOTREADY without IP, removes are idempotent', async (t) => {
  const { sim, clock } = setup();
  const id = await sim.runPodSandbox(sandboxConfig('web'));
  t.regex(id, /^[0-9a-f]{64}$/);
  const st = await sim.podSandboxStatus(id);
  t.is(st.status.state, 'SANDBOX_READY');
  t.is(st.status.ip, '10.88.0.2');
  t.is(st.status.createdAt, clock.now());
  t.deepEqual(st.status.metadata, { name: 'web', namespace: 'default', uid: 'uid-default-web', attempt: 0 });
  t.is((await sim.listPodSandbox({ state: 'SANDBOX_READY' })).length, 1);

  await sim.stopPodSandbox(id);
  await sim.stopPodSandbox(id);
  const stopped = await sim.podSandboxStatus(id);
  t.is(stopped.status.state, 'SANDBOX_NOTREADY');
  t.is(stopped.status.ip, '');
  t.is((await sim.listPodSandbox({ state: 'SANDBOX_READY' })).length, 0);

  await sim.removePodSandbox(id);
  await sim.removePodSandbox(id);
  await rejectsWith(t, sim.podSandboxStatus(id), 'NotFound');
  await rejectsWith(t, sim.stopPodSandbox(id), 'NotFound');
  t.deepEqual(await sim.listPodSandbox(), []);
});

test('host-network sandboxes get no IP and refuse a hostname, as on containerd; pod IPs are reused after stop', async (t) => {
  const { sim } = setup();
  const withName = { ...sandboxConfig('hn', { hostNetwork: true }), hostname: 'hn' };
  const refused = await rejectsWith(t, sim.runPodSandbox(withName), 'Unknown');
  t.regex(refused.message, /unable to set hostname without a private UTS namespace/);
  const host = await sim.runPodSandbox(sandboxConfig('h', { hostNetwork: true }));
  t.is((await sim.podSandboxStatus(host)).status.ip, '');
  t.is((await sim.podSandboxStatus(host)).status.namespaceOptions?.network, 'NODE');
  const a = await sim.runPodSandbox(sandboxConfig('a'));
  const b = await sim.runPodSandbox(sandboxConfig('b'));
  t.is((await sim.podSandboxStatus(b)).status.ip, '10.88.0.3');
  await sim.stopPodSandbox(a);
  const c = await sim.runPodSandbox(sandboxConfig('c'));
  t.is((await sim.podSandboxStatus(c)).status.ip, '10.88.0.2');
});

test('a sandbox name (name, namespace, uid, attempt) is reserved until removal', async (t) => {
  const { sim } = setup();
  const id = await sim.runPodSandbox(sandboxConfig('dup'));
  const e = await rejectsWith(t, sim.runPodSandbox(sandboxConfig('dup')), 'AlreadyExists');
  t.regex(e.message, new RegExp(id));
  t.truthy(await sim.runPodSandbox(sandboxConfig('dup', { attempt: 1 })));
  await sim.removePodSandbox(id);
  t.truthy(await sim.runPodSandbox(sandboxConfig('dup')));
  await rejectsWith(t, sim.runPodSandbox({ metadata: { name: '', namespace: 'x', uid: 'u', attempt: 0 } }), 'InvalidArgument');
  await rejectsWith(t, sim.runPodSandbox(sandboxConfig('rh'), 'kata'), 'NotFound');
});

test('container state machine: CREATED -> RUNNING -> EXITED, with times, exit code and reason', async (t) => {
  const { sim, clock } = setup();
  const sb = sandboxConfig('p');
  const sandboxId = await sim.runPodSandbox(sb);
  const id = await sim.createContainer(sandboxId, containerConfig('c', 'busybox'), sb);
  const created = (await sim.containerStatus(id)).status;
  t.is(created.state, 'CONTAINER_CREATED');
  t.is(created.startedAt, 0);
  t.is(created.image.image, BUSYBOX);
  t.regex(created.imageRef, /^docker\.io\/library\/busybox@sha256:[0-9a-f]{64}$/);
  t.regex(created.imageId, /^sha256:[0-9a-f]{64}$/);

  // Stopping a container that never started is a no-op, as on containerd.
  await sim.stopContainer(id, 10);
  t.is((await sim.containerStatus(id)).status.state, 'CONTAINER_CREATED');

  await clock.advance(500);
  await sim.startContainer(id);
  const running = (await sim.containerStatus(id)).status;
  t.is(running.state, 'CONTAINER_RUNNING');
  t.is(running.startedAt, clock.now());
  await rejectsWith(t, sim.startContainer(id), 'FailedPrecondition');

  await clock.advance(1000);
  await sim.stopContainer(id, 30);
  const exited = (await sim.containerStatus(id)).status;
  t.is(exited.state, 'CONTAINER_EXITED');
  t.is(exited.exitCode, 143);
  t.is(exited.reason, 'Error');
  t.is(exited.finishedAt, clock.now());
  await sim.stopContainer(id, 30); // idempotent
  await sim.removeContainer(id);
  await sim.removeContainer(id);
  await rejectsWith(t, sim.containerStatus(id), 'NotFound');
});

test('container names are reserved per sandbox and attempt', async (t) => {
  const { sim } = setup();
  const sb = sandboxConfig('p');
  const sid = await sim.runPodSandbox(sb);
  const first = await sim.createContainer(sid, containerConfig('c', BUSYBOX), sb);
  await rejectsWith(t, sim.createContainer(sid, containerConfig('c', BUSYBOX), sb), 'AlreadyExists');
  t.truthy(await sim.createContainer(sid, containerConfig('c', BUSYBOX, { attempt: 1 }), sb));
  await sim.removeContainer(first);
  t.truthy(await sim.createContainer(sid, containerConfig('c', BUSYBOX), sb));
  await rejectsWith(t, sim.createContainer('nope', containerConfig('x', BUSYBOX), sb), 'NotFound');
  await sim.stopPodSandbox(sid);
  await rejectsWith(t, sim.createContainer(sid, containerConfig('late', BUSYBOX), sb), 'FailedPrecondition');
});

test('a crashing behaviour exits at its due time with its code, without any call, and emits STOPPED', async (t) => {
  const { sim, clock } = setup({ behaviours: [{ name: 'crasher', exitAfterMs: 1000, exitCode: 2 }] });
  const ac = new AbortController();
  const events: ContainerEvent[] = [];
  const it = sim.getContainerEvents({ signal: ac.signal })[Symbol.asyncIterator]();
  const collector = (async () => {
    for (;;) {
      const r = await it.next();
      if (r.done) return;
      events.push(r.value);
    }
  })();
  await flush();
  const { id } = await runningContainer(sim, 'p', 'crasher');
  const startedAt = clock.now();
  await clock.advance(999);
  t.is((await sim.containerStatus(id)).status.state, 'CONTAINER_RUNNING');
  await clock.advance(1);
  await flush();
  const stoppedEvents = events.filter((e) => e.containerId === id && e.type === 'CONTAINER_STOPPED_EVENT');
  t.is(stoppedEvents.length, 1);
  const st = (await sim.containerStatus(id)).status;
  t.is(st.state, 'CONTAINER_EXITED');
  t.is(st.exitCode, 2);
  t.is(st.reason, 'Error');
  t.is(st.finishedAt, startedAt + 1000);
  ac.abort();
  await collector;
  t.is(sim.counts().eventSubscribers, 0);
});

test('a container that ignores SIGTERM is killed at the end of the grace period (137)', async (t) => {
  const { sim, clock } = setup({ behaviours: [{ image: 'busybox', stopDelayMs: Infinity }] });
  const { id } = await runningContainer(sim);
  const t0 = clock.now();
  let done = false;
  const stopping = sim.stopContainer(id, 30).then(() => (done = true));
  await clock.advance(29_999);
  t.false(done);
  t.is((await sim.containerStatus(id)).status.state, 'CONTAINER_RUNNING');
  await clock.advance(1);
  await stopping;
  const st = (await sim.containerStatus(id)).status;
  t.is(st.exitCode, 137);
  t.is(st.finishedAt, t0 + 30_000);
});

test('a graceful stop takes stopDelayMs and exits with stopExitCode; timeout 0 kills at once', async (t) => {
  const { sim, clock } = setup({ behaviours: [{ name: 'slow', stopDelayMs: 2000, stopExitCode: 0 }] });
  const { id, sandboxId, sb } = await runningContainer(sim, 'p', 'slow');
  const t0 = clock.now();
  const stopping = sim.stopContainer(id, 10);
  await clock.advance(2000);
  await stopping;
  const st = (await sim.containerStatus(id)).status;
  t.is(st.exitCode, 0);
  t.is(st.reason, 'Completed');
  t.is(st.finishedAt, t0 + 2000);

  const other = await sim.createContainer(sandboxId, containerConfig('slow', BUSYBOX, { attempt: 1 }), sb);
  await sim.startContainer(other);
  await sim.stopContainer(other, 0);
  t.is((await sim.containerStatus(other)).status.exitCode, 137);
});

test('StopPodSandbox kills running containers; RemovePodSandbox removes them', async (t) => {
  const { sim } = setup();
  const { sandboxId, id } = await runningContainer(sim);
  await sim.stopPodSandbox(sandboxId);
  const st = (await sim.containerStatus(id)).status;
  t.is(st.state, 'CONTAINER_EXITED');
  t.is(st.exitCode, 137);
  await sim.removePodSandbox(sandboxId);
  t.deepEqual(await sim.listContainers(), []);
  t.deepEqual(sim.counts(), { sandboxes: 0, containers: 0, running: 0, eventSubscribers: 0 });
});

test('RemoveContainer on a running container kills it first', async (t) => {
  const { sim } = setup();
  const { id } = await runningContainer(sim);
  await sim.removeContainer(id);
  t.is(sim.counts().containers, 0);
});

test('listContainers filters by id prefix, state, sandbox and labels', async (t) => {
  const { sim } = setup();
  const a = await runningContainer(sim, 'a', 'one');
  const sbB = sandboxConfig('b');
  const b = await sim.runPodSandbox(sbB);
  const created = await sim.createContainer(b, containerConfig('two', BUSYBOX), sbB);
  t.is((await sim.listContainers()).length, 2);
  t.deepEqual((await sim.listContainers({ state: 'CONTAINER_RUNNING' })).map((c) => c.id), [a.id]);
  t.deepEqual((await sim.listContainers({ podSandboxId: b })).map((c) => c.id), [created]);
  t.deepEqual((await sim.listContainers({ id: created.slice(0, 12) })).map((c) => c.id), [created]);
  t.deepEqual((await sim.listContainers({ labelSelector: { 'io.kubernetes.container.name': 'one' } })).map((c) => c.id), [a.id]);
  const listed = (await sim.listContainers({ id: a.id }))[0];
  t.is(listed?.podSandboxId, a.sandboxId);
  t.is(listed?.image.image, BUSYBOX);
  t.deepEqual((await sim.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.name': 'b' } })).map((s) => s.id), [b]);
});

test('images: preloaded, resolved by short name, pulled from the registry, unknown pulls fail NotFound', async (t) => {
  const { sim } = setup({ images: ['busybox'], registryImages: ['busybox', 'nginx:1.27'] });
  t.deepEqual((await sim.listImages()).map((i) => i.repoTags), [[BUSYBOX]]);
  t.is((await sim.imageStatus({ image: 'busybox:latest' })).image?.repoTags[0], BUSYBOX);
  t.is((await sim.imageStatus({ image: 'nginx:1.27' })).image, undefined);

  const ref = await sim.pullImage({ image: 'nginx:1.27' });
  t.regex(ref, /^docker\.io\/library\/nginx@sha256:[0-9a-f]{64}$/);
  const nginx = (await sim.imageStatus({ image: 'docker.io/library/nginx:1.27' })).image;
  t.truthy(nginx);
  t.truthy((await sim.imageStatus({ image: ref })).image, 'resolvable by digest');
  t.truthy((await sim.imageStatus({ image: nginx?.id ?? '' })).image, 'resolvable by ID');

  const e = await rejectsWith(t, sim.pullImage({ image: 'example.com/missing:1' }), 'NotFound');
  t.regex(e.message, /example\.com\/missing:1: not found/);
  await rejectsWith(t, sim.pullImage({ image: 'Bad Name' }), 'InvalidArgument');

  const sb = sandboxConfig('p');
  const sid = await sim.runPodSandbox(sb);
  await rejectsWith(t, sim.createContainer(sid, containerConfig('c', 'example.com/missing:1'), sb), 'NotFound');
  await sim.createContainer(sid, containerConfig('c', 'nginx:1.27'), sb);
  await rejectsWith(t, sim.removeImage({ image: 'nginx:1.27' }), 'FailedPrecondition');
  await sim.removeImage({ image: 'busybox' });
  await sim.removeImage({ image: 'busybox' });
  t.deepEqual((await sim.listImages()).map((i) => i.repoTags[0]), ['docker.io/library/nginx:1.27']);

  const fs = await sim.imageFsInfo();
  t.is(fs.imageFilesystems[0]?.mountpoint, '/var/lib/svc-sim/images');
  t.is(fs.imageFilesystems[0]?.usedBytes, nginx?.size);
});

test('images: without a catalogue the registry serves every reference (kubectl run --image=nginx pulls); failures are opt-in', async (t) => {
  const { sim } = setup({ pullFailures: ['example.com/broken:1', { image: 'private.example.com/app:2', code: 'Unauthenticated', message: 'pull access denied' }] });
  for (const image of ['nginx', 'nginx:1.27', 'quay.io/example/anything:v9', 'registry.example.com:5000/team/app@sha256:' + 'a'.repeat(64)]) {
    const ref = await sim.pullImage({ image });
    t.regex(ref, /@sha256:[0-9a-f]{64}$/, image);
    t.truthy((await sim.imageStatus({ image })).image, `${image} is present once pulled`);
  }
  t.deepEqual((await sim.imageStatus({ image: 'docker.io/library/nginx:latest' })).image?.repoTags, ['docker.io/library/nginx:latest']);
  // The same reference pulled on two simulators is the same image (IDs and digests come from the name).
  t.is(await setup().sim.pullImage({ image: 'nginx' }), await sim.pullImage({ image: 'nginx' }));

  const missing = await rejectsWith(t, sim.pullImage({ image: 'example.com/broken:1' }), 'NotFound');
  t.regex(missing.message, /^failed to pull and unpack image "example\.com\/broken:1": failed to resolve reference .*: not found$/);
  const denied = await rejectsWith(t, sim.pullImage({ image: 'private.example.com/app:2' }), 'Unauthenticated');
  t.is(denied.message, 'pull access denied');
  await rejectsWith(t, sim.pullImage({ image: 'Bad Name' }), 'InvalidArgument');
  // A registry under .invalid never resolves: containerd's unknown-host failure, with no configuration.
  const unreachable = await rejectsWith(t, sim.pullImage({ image: 'registry.invalid/app:1' }), 'Unknown');
  t.is(
    unreachable.message,
    'failed to pull and unpack image "registry.invalid/app:1": failed to resolve reference "registry.invalid/app:1": failed to do request: Head "https://registry.invalid/v2/app/manifests/1": dial tcp: lookup registry.invalid: no such host',
  );
  // Publishing the image lifts its failure (the image appeared in the registry).
  sim.publishImage('example.com/broken:1');
  t.regex(await sim.pullImage({ image: 'example.com/broken:1' }), /^example\.com\/broken@sha256:/);
});

test('execSync: built-ins, behaviour table, handler, missing binary, not running', async (t) => {
  const { sim } = setup({
    behaviours: [{ name: 'probe', exec: { 'cat /tmp/healthy': { stdout: 'ok', exitCode: 0 } } }],
    exec: (ctx) => (ctx.cmd[0] === 'whoami' ? { stdout: `${ctx.podName}/${ctx.containerName}\n` } : undefined),
  });
  const { id, sandboxId, sb } = await runningContainer(sim, 'p', 'probe');
  const hi = await sim.execSync(id, ['echo', 'hi'], 5);
  t.is(hi.stdout.toString(), 'hi\n');
  t.is(hi.exitCode, 0);
  t.is((await sim.execSync(id, ['sh', '-c', 'exit 3'], 5)).exitCode, 3);
  t.is((await sim.execSync(id, ['false'], 5)).exitCode, 1);
  t.is((await sim.execSync(id, ['cat', '/tmp/healthy'], 5)).stdout.toString(), 'ok');
  t.is((await sim.execSync(id, ['whoami'], 5)).stdout.toString(), 'p/probe\n');
  const e = await rejectsWith(t, sim.execSync(id, ['nope'], 5), 'Unknown');
  t.regex(e.message, /executable file not found/);

  const created = await sim.createContainer(sandboxId, containerConfig('idle', BUSYBOX), sb);
  await rejectsWith(t, sim.execSync(created, ['echo'], 5), 'FailedPrecondition');
});

test('execSync longer than its timeout fails DeadlineExceeded after the timeout (clock time)', async (t) => {
  const { sim, clock } = setup();
  const { id } = await runningContainer(sim);
  let settled = false;
  const p = sim.execSync(id, ['sleep', '10'], 2).finally(() => (settled = true));
  p.catch(() => undefined);
  await clock.advance(1999);
  t.false(settled);
  await clock.advance(1);
  await rejectsWith(t, p, 'DeadlineExceeded');
  const ok = sim.execSync(id, ['sleep', '1'], 2);
  await clock.advance(1000);
  t.is((await ok).exitCode, 0);
});

test('stats: CPU time grows with running time; list covers running containers only', async (t) => {
  const { sim, clock } = setup({ behaviours: [{ name: 'hungry', cpuNanoCores: 500_000_000, memoryBytes: 64 << 20 }] });
  const { id, sandboxId, sb } = await runningContainer(sim, 'p', 'hungry');
  await clock.advance(2000);
  const s = await sim.containerStats(id);
  t.is(s.cpu?.usageCoreNanoSeconds, 1_000_000_000);
  t.is(s.cpu?.usageNanoCores, 500_000_000);
  t.is(s.memory?.workingSetBytes, 64 << 20);
  t.is(s.cpu?.timestamp, clock.now());
  t.is(s.metadata.name, 'hungry');
  await sim.createContainer(sandboxId, containerConfig('idle', BUSYBOX), sb);
  t.deepEqual((await sim.listContainerStats()).map((x) => x.id), [id]);
  await rejectsWith(t, sim.containerStats('missing'), 'NotFound');
});

test('checkpointContainer writes a tar with the config dump; Unimplemented when turned off', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-sim-ckpt-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const { sim } = setup();
  const { id, sandboxId, sb } = await runningContainer(sim, 'p', 'c');
  const file = path.join(dir, 'checkpoint-p_default-c-2024.tar');
  await sim.checkpointContainer(id, file, 0);
  const entries = readTar(await readFile(file));
  t.deepEqual(entries.map((e) => e.name), ['config.dump', 'spec.dump', 'checkpoint/pstree.img', 'checkpoint/pages-1.img', 'rootfs-diff.tar']);
  const layer = readTar(entries[4].data);
  t.deepEqual(layer.map((e) => e.name), ['etc/hostname', 'var/lib/app/data.bin']);
  t.is(layer[1].data.length, 16 * 1024, 'default writable layer size');
  const spec = JSON.parse(entries[1]?.data.toString() ?? '{}') as { process: { args: string[] }; annotations: Record<string, string> };
  t.is(spec.annotations['io.kubernetes.container.name'], 'c');
  t.is(spec.annotations['io.kubernetes.pod.name'], 'p');
  const dump = JSON.parse(entries[0]?.data.toString() ?? '{}') as { id: string; name: string; rootfsImage: string };
  t.is(dump.id, id);
  t.is(dump.name, 'c');
  t.is(dump.rootfsImage, BUSYBOX);

  await rejectsWith(t, sim.checkpointContainer(id, 'relative.tar', 0), 'InvalidArgument');
  const idle = await sim.createContainer(sandboxId, containerConfig('idle', BUSYBOX), sb);
  await rejectsWith(t, sim.checkpointContainer(idle, path.join(dir, 'x.tar'), 0), 'FailedPrecondition');

  const off = setup({ checkpoint: false });
  const r = await runningContainer(off.sim);
  await rejectsWith(t, off.sim.checkpointContainer(r.id, path.join(dir, 'y.tar'), 0), 'Unimplemented');
});

test('checkpoint archive: the writable layer size comes from the pod annotation, else the behaviour; bad annotations are InvalidArgument', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-sim-ckpt-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const { sim } = setup({ behaviours: [{ name: 'big', checkpointLayerBytes: 100_000 }] });
  const layerOf = async (id: string, file: string) => {
    await sim.checkpointContainer(id, path.join(dir, file), 0);
    const outer = readTar(await readFile(path.join(dir, file)));
    return readTar(outer.find((e) => e.name === 'rootfs-diff.tar')!.data).find((e) => e.name === 'var/lib/app/data.bin')!.data.length;
  };
  const big = await runningContainer(sim, 'p1', 'big');
  t.is(await layerOf(big.id, 'a.tar'), 100_000);
  for (const [pod, value, expected] of [['p2', '10485760', 10485760], ['p3', '0', 0]] as const) {
    const sb = sandboxConfig(pod);
    sb.annotations = { ...sb.annotations, 'sim.svc.io/writable-layer-bytes': value };
    const sandboxId = await sim.runPodSandbox(sb);
    const id = await sim.createContainer(sandboxId, containerConfig('big', BUSYBOX), sb);
    await sim.startContainer(id);
    t.is(await layerOf(id, `${pod}.tar`), expected);
  }
  const sb = sandboxConfig('p4');
  sb.annotations = { ...sb.annotations, 'sim.svc.io/writable-layer-bytes': '-5' };
  const sandboxId = await sim.runPodSandbox(sb);
  const id = await sim.createContainer(sandboxId, containerConfig('c', BUSYBOX), sb);
  await sim.startContainer(id);
  await rejectsWith(t, sim.checkpointContainer(id, path.join(dir, 'bad.tar'), 0), 'InvalidArgument');
});

test('events: sandbox and container lifecycle in order, with pod and container statuses', async (t) => {
  const { sim } = setup();
  const ac = new AbortController();
  const it = sim.getContainerEvents({ signal: ac.signal })[Symbol.asyncIterator]();
  const first = it.next();
  const { sandboxId, id } = await runningContainer(sim);
  await sim.stopContainer(id, 0);
  await sim.removeContainer(id);
  await sim.stopPodSandbox(sandboxId);
  await sim.removePodSandbox(sandboxId);
  const got: ContainerEvent[] = [(await first).value as ContainerEvent];
  for (let i = 0; i < 7; i++) got.push((await it.next()).value as ContainerEvent);
  t.deepEqual(
    got.map((e) => [e.containerId === sandboxId ? 'sandbox' : 'container', e.type]),
    [
      ['sandbox', 'CONTAINER_CREATED_EVENT'],
      ['sandbox', 'CONTAINER_STARTED_EVENT'],
      ['container', 'CONTAINER_CREATED_EVENT'],
      ['container', 'CONTAINER_STARTED_EVENT'],
      ['container', 'CONTAINER_STOPPED_EVENT'],
      ['container', 'CONTAINER_DELETED_EVENT'],
      ['sandbox', 'CONTAINER_STOPPED_EVENT'],
      ['sandbox', 'CONTAINER_DELETED_EVENT'],
    ],
  );
  t.is(got[3]?.podSandboxStatus?.id, sandboxId);
  t.deepEqual(got[3]?.containersStatuses.map((s) => s.state), ['CONTAINER_RUNNING']);
  t.is(got[4]?.containersStatuses[0]?.exitCode, 137);
  ac.abort();
  t.true((await it.next()).done);

  const off = setup({ events: false });
  await rejectsWith(t, off.sim.getContainerEvents()[Symbol.asyncIterator]().next(), 'Unimplemented');
});

test('faults, latency and availability are injectable', async (t) => {
  const { sim, clock } = setup();
  sim.injectFault('RunPodSandbox', new RuntimeError('Unknown', 'failed to setup network for sandbox: boom'), 1);
  const e = await rejectsWith(t, sim.runPodSandbox(sandboxConfig('a')), 'Unknown');
  t.regex(e.message, /boom/);
  t.truthy(await sim.runPodSandbox(sandboxConfig('a')));

  sim.setLatency('ListPodSandbox', 5000);
  const slow = sim.listPodSandbox(undefined, { timeoutMs: 1000 });
  slow.catch(() => undefined);
  await clock.advance(1000);
  await rejectsWith(t, slow, 'DeadlineExceeded');
  const patient = sim.listPodSandbox(undefined, { timeoutMs: 10_000 });
  await clock.advance(5000);
  t.is((await patient).length, 1);
  const ac = new AbortController();
  const canceled = sim.listPodSandbox(undefined, { signal: ac.signal });
  ac.abort();
  await rejectsWith(t, canceled, 'Canceled');
  sim.setLatency('ListPodSandbox', 0);

  const it = sim.getContainerEvents()[Symbol.asyncIterator]();
  const pending = it.next();
  pending.catch(() => undefined);
  await flush();
  sim.setAvailable(false);
  await rejectsWith(t, sim.version(), 'Unavailable');
  await rejectsWith(t, pending, 'Unavailable');
  sim.setAvailable(true);
  t.is((await sim.version()).runtimeApiVersion, 'v1');
});

test('NetworkReady=false shows in Status and fails pod-network sandboxes but not host-network ones', async (t) => {
  const { sim } = setup();
  sim.setCondition('NetworkReady', false, 'NetworkPluginNotReady', 'cni plugin not initialized');
  const st = await sim.status();
  t.deepEqual(st.conditions.find((c) => c.type === 'NetworkReady'), {
    type: 'NetworkReady',
    status: false,
    reason: 'NetworkPluginNotReady',
    message: 'cni plugin not initialized',
  });
  await rejectsWith(t, sim.runPodSandbox(sandboxConfig('pod')), 'Unknown');
  t.truthy(await sim.runPodSandbox(sandboxConfig('host', { hostNetwork: true })));
});

test('start and create errors from behaviours; a failed start leaves the container EXITED 128', async (t) => {
  const { sim } = setup({
    behaviours: [
      { name: 'badstart', startError: 'exec: "/app": permission denied' },
      { name: 'badcreate', createError: 'failed to create containerd container: boom' },
    ],
  });
  const sb = sandboxConfig('p');
  const sid = await sim.runPodSandbox(sb);
  await rejectsWith(t, sim.createContainer(sid, containerConfig('badcreate', BUSYBOX), sb), 'Unknown');
  const id = await sim.createContainer(sid, containerConfig('badstart', BUSYBOX), sb);
  const e = await rejectsWith(t, sim.startContainer(id), 'Unknown');
  t.regex(e.message, /permission denied/);
  const st = (await sim.containerStatus(id)).status;
  t.is(st.state, 'CONTAINER_EXITED');
  t.is(st.exitCode, 128);
  t.is(st.reason, 'StartError');
  t.regex(st.message, /permission denied/);
});

test('runs are deterministic: the same calls give the same IDs; names tell simulated nodes apart', async (t) => {
  const ids = async (name?: string) => {
    const { sim } = setup(name ? { name } : {});
    const r = await runningContainer(sim);
    return [r.sandboxId, r.id];
  };
  t.deepEqual(await ids(), await ids());
  t.notDeepEqual(await ids('node-1'), await ids('node-2'));
});

test('container logs: the file is created under logDirectory with CRI-format lines; reopen recreates it after a rename', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-sim-logs-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const { sim } = setup({ behaviours: [{ name: 'talker', logLines: ['hello', 'world'] }] });
  const sb = sandboxConfig('p', { logDirectory: path.join(dir, 'default_p_uid') });
  const sid = await sim.runPodSandbox(sb);
  const id = await sim.createContainer(sid, containerConfig('talker', BUSYBOX, { logPath: 'talker/0.log' }), sb);
  await sim.startContainer(id);
  const st = (await sim.containerStatus(id)).status;
  t.is(st.logPath, path.join(dir, 'default_p_uid', 'talker', '0.log'));
  const lines = (await readFile(st.logPath, 'utf8')).trim().split('\n');
  t.is(lines.length, 2);
  t.regex(lines[0] ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z stdout F hello$/);
  // Reopen after a rotation renamed the file away creates it afresh, as containerd does.
  await rename(st.logPath, `${st.logPath}.20250101-000000`);
  await sim.reopenContainerLog(id);
  t.is(await readFile(st.logPath, 'utf8'), '');
  t.is((await readFile(`${st.logPath}.20250101-000000`, 'utf8')).trim().split('\n').length, 2);
  await sim.stopContainer(id, 0);
  await rejectsWith(t, sim.reopenContainerLog(id), 'FailedPrecondition');
});

test('connect refuses a runtime that claims another CRI version', async (t) => {
  const { sim } = setup({ runtimeApiVersion: 'v1alpha2', runtimeName: 'oldd', runtimeVersion: '1.4' });
  const e = await rejectsWith(t, sim.connect(), 'UnsupportedVersion');
  t.is(e.message, 'runtime oldd 1.4 at sim://sim speaks CRI v1alpha2; svc-node needs runtime.v1');
  const ok = setup();
  t.is((await ok.sim.connect()).runtimeApiVersion, 'v1');
});

test('updateContainerResources merges into the reported resources; exited containers refuse', async (t) => {
  const { sim } = setup();
  const { id } = await runningContainer(sim);
  await sim.updateContainerResources(id, { cpuQuota: 50_000, cpuPeriod: 100_000 });
  t.deepEqual((await sim.containerStatus(id)).status.resources, { cpuQuota: 50_000, cpuPeriod: 100_000 });
  await sim.stopContainer(id, 0);
  await rejectsWith(t, sim.updateContainerResources(id, { cpuQuota: 1 }), 'FailedPrecondition');
});

test('close makes later calls Unavailable and ends event streams', async (t) => {
  const { sim } = setup();
  const it = sim.getContainerEvents()[Symbol.asyncIterator]();
  const pending = it.next();
  await flush();
  sim.close();
  t.true((await pending).done);
  await rejectsWith(t, sim.listContainers(), 'Unavailable');
});

test('verbose ContainerStatus shows the config CreateContainer got (info["info"].config), plain status none', async (t) => {
  const { sim } = setup();
  const sb = sandboxConfig('v');
  const sandboxId = await sim.runPodSandbox(sb);
  const cfg = { ...containerConfig('c', 'busybox'), devices: [{ containerPath: '/dev/x', hostPath: '/dev/null', permissions: 'rw' }], cdiDevices: ['example.com/x=1'] };
  const id = await sim.createContainer(sandboxId, cfg, sb);
  t.deepEqual((await sim.containerStatus(id)).info, {});
  const info = JSON.parse((await sim.containerStatus(id, true)).info['info']) as { sandboxID: string; config: typeof cfg };
  t.is(info.sandboxID, sandboxId);
  t.deepEqual(info.config.devices, cfg.devices);
  t.deepEqual(info.config.cdiDevices, ['example.com/x=1']);
});

test('pod annotations sim.svc.io/exit-after-ms and exit-code make every container of the pod run to completion; malformed ones fail creation', async (t) => {
  const { sim, clock } = setup();
  const sb = sandboxConfig('job-pod');
  sb.annotations = { ...sb.annotations, 'sim.svc.io/exit-after-ms': '500', 'sim.svc.io/exit-code': '3' };
  const sandboxId = await sim.runPodSandbox(sb);
  const id = await sim.createContainer(sandboxId, containerConfig('main', BUSYBOX), sb);
  await sim.startContainer(id);
  await clock.advance(500);
  const st = (await sim.containerStatus(id)).status;
  t.is(st.state, 'CONTAINER_EXITED');
  t.is(st.exitCode, 3);
  t.is(st.reason, 'Error');
  const ok = sandboxConfig('ok');
  ok.annotations = { ...ok.annotations, 'sim.svc.io/exit-after-ms': '0' };
  const okId = await sim.createContainer(await sim.runPodSandbox(ok), containerConfig('main', BUSYBOX), ok);
  await sim.startContainer(okId);
  await clock.advance(0);
  t.like((await sim.containerStatus(okId)).status, { state: 'CONTAINER_EXITED', exitCode: 0, reason: 'Completed' });
  const bad = sandboxConfig('bad');
  bad.annotations = { ...bad.annotations, 'sim.svc.io/exit-after-ms': 'soon' };
  const e = await rejectsWith(t, sim.createContainer(await sim.runPodSandbox(bad), containerConfig('main', BUSYBOX), bad), 'Unknown');
  t.is(e.message, 'annotation sim.svc.io/exit-after-ms="soon": must be a number of milliseconds');
});
