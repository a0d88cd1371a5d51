import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { RuntimeError, isRuntimeError } from '../../../../agent/cri/errors';
import { GrpcRuntimeService } from '../../../../agent/cri/grpc-client';
import type { RuntimeService } from '../../../../agent/cri/runtime-service';
import { serveRuntimeService, type CriServer } from '../../../../agent/cri/sim-server';
import { Simulator } from '../../../../agent/cri/simulator';
import type { SimulatorOptions } from '../../../../agent/cri/sim-options';
import type { ContainerConfig, ContainerEvent, PodSandboxConfig } from '../../../../agent/cri/types';
import { containerConfig, sandboxConfig } from './configs';
import { FakeClock } from '../../../helpers/fake-clock';
import { readTar } from './tar-reader';

const BUSYBOX = 'docker.io/library/busybox:latest';

interface Call {
  method: string;
  args: unknown[];
}

/** Wraps a RuntimeService, recording the arguments each method receives (after the wire trip). */
function recording(inner: RuntimeService): { svc: RuntimeService; calls: Call[] } {
  const calls: Call[] = [];
  const svc = new Proxy(inner, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        // The server adds CallOptions (deadline, signal) as the last argument; keep only the payload.
        const last = args[args.length - 1];
        const payload = last && typeof last === 'object' && 'signal' in last ? args.slice(0, -1) : args;
        calls.push({ method: String(prop), args: payload });
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { svc, calls };
}

async function harness(t: import('ava').ExecutionContext, simOpts: SimulatorOptions = {}) {
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-cri-'));
  // A still clock, so answers compared across two calls carry the same timestamps.
  const sim = new Simulator({ clock: new FakeClock(), ...simOpts });
  const rec = recording(sim);
  const socket = path.join(dir, 'cri.sock');
  const server = await serveRuntimeService(rec.svc, socket);
  const client = new GrpcRuntimeService(server.endpoint, server.endpoint, { timeoutMs: 10_000, connectTimeoutMs: 5_000 });
  t.teardown(async () => {
    client.close();
    await server.close();
    sim.close();
    await rm(dir, { recursive: true, force: true });
  });
  return { dir, sim, client, server, calls: rec.calls, socket };
}

async function rejectsWith(t: import('ava').ExecutionContext, p: Promise<unknown>, code: RuntimeError['code']): Promise<RuntimeError> {
  const e = await t.throwsAsync(p);
  t.true(isRuntimeError(e, code), `expected ${code}, got ${String(e)}`);
  return e as RuntimeError;
}

/** A sandbox config using every field the agent may set, to prove nothing is lost on the wire. */
function fullSandboxConfig(): PodSandboxConfig {
  return {
    metadata: { name: 'full', uid: 'u-1', namespace: 'ns', attempt: 2 },
    hostname: 'full-host',
    logDirectory: '/var/log/pods/ns_full_u-1',
    dnsConfig: { servers: ['10.96.0.10'], searches: ['ns.svc.cluster.local', 'svc.cluster.local'], options: ['ndots:5'] },
    portMappings: [
      { containerPort: 80, hostPort: 8080 },
      { protocol: 'UDP', containerPort: 53, hostIp: '127.0.0.1' },
    ],
    labels: { app: 'full', 'io.kubernetes.pod.name': 'full' },
    annotations: { 'svc.io/config.seen': '2024-01-01T00:00:00Z', 'a_b': 'under_score keys survive' },
    linux: {
      cgroupParent: '/kubepods/burstable/podu-1',
      sysctls: { 'net.ipv4.ip_unprivileged_port_start': '0' },
      overhead: { cpuShares: 10 },
      resources: { cpuPeriod: 100_000, cpuQuota: 200_000, cpuShares: 2048, memoryLimitInBytes: 2 ** 40, unified: { 'memory.high': 'max' } },
      securityContext: {
        namespaceOptions: { pid: 'CONTAINER', ipc: 'NODE' },
        runAsUser: 0,
        runAsGroup: 3000,
        supplementalGroups: [4000, 5000],
        supplementalGroupsPolicy: 'Strict',
        readonlyRootfs: true,
        seccomp: { profileType: 'RuntimeDefault' },
        selinuxOptions: { level: 's0:c1,c2' },
      },
    },
  };
}

function fullContainerConfig(): ContainerConfig {
  return {
    metadata: { name: 'app', attempt: 3 },
    image: { image: 'busybox', userSpecifiedImage: 'busybox', annotations: { 'io.kubernetes.image': 'x' } },
    command: ['/bin/sh', '-c'],
    args: ['echo "$GREETING"; sleep 3600'],
    workingDir: '/work',
    envs: [
      { key: 'GREETING', value: 'héllo wörld' },
      { key: 'EMPTY', value: '' },
    ],
    mounts: [
      { containerPath: '/data', hostPath: '/var/lib/svc-node/pods/u-1/volumes/empty-dir/data' },
      {
        containerPath: '/etc/config',
        hostPath: '/var/lib/svc-node/pods/u-1/volumes/configmap/cfg',
        readonly: true,
        propagation: 'PROPAGATION_HOST_TO_CONTAINER',
        selinuxRelabel: true,
      },
    ],
    devices: [{ containerPath: '/dev/fuse', hostPath: '/dev/fuse', permissions: 'rwm' }],
    labels: { 'io.kubernetes.container.name': 'app' },
    annotations: { 'io.kubernetes.container.restartCount': '3', 'io.kubernetes.container.terminationMessagePath': '/dev/termination-log' },
    logPath: 'app/3.log',
    stdin: true,
    tty: true,
    linux: {
      resources: { cpuPeriod: 100_000, cpuQuota: 50_000, cpuShares: 512, memoryLimitInBytes: 268_435_456, oomScoreAdj: 999, hugepageLimits: [{ pageSize: '2MB', limit: 0 }] },
      securityContext: {
        capabilities: { addCapabilities: ['NET_ADMIN'], dropCapabilities: ['ALL'] },
        namespaceOptions: { pid: 'CONTAINER' },
        runAsUser: 1000,
        runAsGroup: 0,
        noNewPrivs: true,
        maskedPaths: ['/proc/kcore'],
        readonlyPaths: ['/proc/sys'],
        seccomp: { profileType: 'Localhost', localhostRef: '/var/lib/svc-node/seccomp/audit.json' },
        apparmor: { profileType: 'Unconfined' },
      },
    },
    cdiDevices: ['vendor.com/gpu=0'],
    stopSignal: 'SIGNAL_SIGQUIT',
  };
}

/** Drops keys whose value is undefined, as a wire trip does. */
function defined<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

test('every RuntimeService call round-trips through gRPC: arguments arrive intact, results match the runtime', async (t) => {
  const { client, sim, calls, dir } = await harness(t);
  const v = await client.connect();
  t.deepEqual(v, { version: '0.1.0', runtimeName: 'svc-sim', runtimeVersion: '0.1.0', runtimeApiVersion: 'v1' });
  t.deepEqual(await client.version(), v);
  t.deepEqual(await client.status(true), await sim.status(true));

  const sb = fullSandboxConfig();
  const sandboxId = await client.runPodSandbox(sb);
  const runCall = calls.find((c) => c.method === 'runPodSandbox');
  t.deepEqual(runCall?.args, [defined(sb), '']);
  t.deepEqual(await client.podSandboxStatus(sandboxId, true), defined(await sim.podSandboxStatus(sandboxId, true)) as never);
  t.deepEqual(await client.listPodSandbox(), await sim.listPodSandbox());
  t.deepEqual(await client.listPodSandbox({ id: sandboxId, state: 'SANDBOX_READY', labelSelector: { app: 'full' } }), await sim.listPodSandbox());
  t.deepEqual(calls.filter((c) => c.method === 'listPodSandbox').at(-1)?.args[0], { id: sandboxId, state: 'SANDBOX_READY', labelSelector: { app: 'full' } });

  const cc = fullContainerConfig();
  const id = await client.createContainer(sandboxId, cc, sb);
  const createCall = calls.find((c) => c.method === 'createContainer');
  t.deepEqual(createCall?.args, [sandboxId, defined(cc), defined(sb)]);
  await client.startContainer(id);
  const status = await client.containerStatus(id, false);
  t.deepEqual(status, defined(await sim.containerStatus(id)) as never);
  t.is(status.status.state, 'CONTAINER_RUNNING');
  t.is(status.status.user?.uid, 1000);
  t.is(status.status.user?.gid, 0);
  t.deepEqual(status.status.resources, cc.linux?.resources);
  t.is(status.status.stopSignal, 'SIGNAL_SIGQUIT');
  t.deepEqual(await client.listContainers({ podSandboxId: sandboxId, state: 'CONTAINER_RUNNING' }), await sim.listContainers());
  t.deepEqual(calls.filter((c) => c.method === 'listContainers').at(-1)?.args[0], { podSandboxId: sandboxId, state: 'CONTAINER_RUNNING' });

  const exec = await client.execSync(id, ['echo', 'hi'], 5);
  t.is(exec.stdout.toString(), 'hi\n');
  t.is(exec.stderr.length, 0);
  t.is(exec.exitCode, 0);
  t.is((await client.execSync(id, ['sh', '-c', 'exit 7'], 0)).exitCode, 7);

  const stats = await client.containerStats(id);
  t.is(stats.id, id);
  t.deepEqual(stats.metadata, { name: 'app', attempt: 3 });
  t.is(typeof stats.cpu?.usageCoreNanoSeconds, 'number');
  t.is(stats.memory?.workingSetBytes, 4 * 1024 * 1024);
  t.is(stats.memory?.availableBytes, 268_435_456 - 4 * 1024 * 1024);
  t.is(stats.writableLayer?.mountpoint, '/var/lib/svc-sim/snapshots');
  t.deepEqual((await client.listContainerStats({ podSandboxId: sandboxId })).map((s) => s.id), [id]);
  // ListPodSandboxStats: the simulator's answer arrives whole (pod CPU, memory, network, processes, container stats), the filter too.
  const podStats = await client.listPodSandboxStats({ id: sandboxId });
  t.is(podStats.length, 1);
  t.deepEqual(calls.find((c) => c.method === 'listPodSandboxStats')?.args[0], { id: sandboxId });
  t.deepEqual(podStats, await sim.listPodSandboxStats({ id: sandboxId }));
  t.is(podStats[0].network?.defaultInterface?.name, 'eth0');
  t.deepEqual(podStats[0].containers.map((c) => c.id), [id]);

  await client.updateContainerResources(id, { cpuQuota: 75_000 });
  t.deepEqual(calls.find((c) => c.method === 'updateContainerResources')?.args, [id, { cpuQuota: 75_000 }]);
  await client.reopenContainerLog(id);

  const archive = path.join(dir, 'ckpt.tar');
  await client.checkpointContainer(id, archive, 30);
  t.deepEqual(calls.find((c) => c.method === 'checkpointContainer')?.args, [id, archive, 30]);
  t.is(readTar(await readFile(archive))[0]?.name, 'config.dump');

  await client.stopContainer(id, 5);
  t.deepEqual(calls.find((c) => c.method === 'stopContainer')?.args, [id, 5]);
  const exited = await client.containerStatus(id);
  t.is(exited.status.state, 'CONTAINER_EXITED');
  t.is(exited.status.exitCode, 143);
  t.is(exited.status.finishedAt, (await sim.containerStatus(id)).status.finishedAt);
  await client.removeContainer(id);
  await client.stopPodSandbox(sandboxId);
  await client.removePodSandbox(sandboxId);
  t.deepEqual(await client.listPodSandbox(), []);
});

test('image calls round-trip: list, status present and absent, pull, remove, fs info', async (t) => {
  const { client, sim, calls } = await harness(t, { images: ['busybox'], registryImages: ['busybox', { ref: 'nginx:1.27', uid: 101, username: 'nginx', size: 5 * 2 ** 30 }] });
  t.deepEqual(await client.listImages(), await sim.listImages());
  t.deepEqual(await client.listImages({ image: 'busybox' }), await sim.listImages({ image: 'busybox' }));
  const absent = await client.imageStatus({ image: 'nginx:1.27' });
  t.is(absent.image, undefined);
  const ref = await client.pullImage(
    { image: 'nginx:1.27' },
    { username: 'u', password: 'p', serverAddress: 'docker.io' },
    sandboxConfig('puller'),
  );
  const pullCall = calls.find((c) => c.method === 'pullImage');
  t.deepEqual(pullCall?.args, [{ image: 'nginx:1.27' }, { username: 'u', password: 'p', serverAddress: 'docker.io' }, defined(sandboxConfig('puller'))]);
  t.regex(ref, /^docker\.io\/library\/nginx@sha256:/);
  const present = await client.imageStatus({ image: 'nginx:1.27' }, true);
  t.deepEqual(present, await sim.imageStatus({ image: 'nginx:1.27' }));
  t.is(present.image?.uid, 101);
  t.is(present.image?.size, 5 * 2 ** 30);
  await client.removeImage({ image: 'nginx:1.27' });
  t.is((await client.imageStatus({ image: 'nginx:1.27' })).image, undefined);
  t.deepEqual(await client.imageFsInfo(), await sim.imageFsInfo());
});

test('runtime errors arrive as RuntimeError with the code and the runtime message verbatim', async (t) => {
  // The simulated registry serves every reference unless a failure is configured.
  const { client, sim } = await harness(t, { checkpoint: false, pullFailures: ['nope:1'] });
  const notFound = await rejectsWith(t, client.containerStatus('missing'), 'NotFound');
  t.is(notFound.message, 'an error occurred when try to find container "missing": not found');
  t.is(notFound.rpc, 'ContainerStatus');
  t.false(notFound.retriable);

  const sb = sandboxConfig('p');
  const sid = await client.runPodSandbox(sb);
  await rejectsWith(t, client.runPodSandbox(sb), 'AlreadyExists');
  const pull = await rejectsWith(t, client.pullImage({ image: 'nope:1' }), 'NotFound');
  t.regex(pull.message, /docker\.io\/library\/nope:1: not found/);
  await rejectsWith(t, client.runPodSandbox({ metadata: { name: '', uid: '', namespace: '', attempt: 0 } }), 'InvalidArgument');
  const id = await client.createContainer(sid, containerConfig('c', BUSYBOX), sb);
  await rejectsWith(t, client.execSync(id, ['echo'], 1), 'FailedPrecondition');
  await client.startContainer(id);
  const unknown = await rejectsWith(t, client.execSync(id, ['nope'], 1), 'Unknown');
  t.regex(unknown.message, /executable file not found in \$PATH/);
  const unimpl = await rejectsWith(t, client.checkpointContainer(id, '/tmp/x.tar', 0), 'Unimplemented');
  t.is(unimpl.rpc, 'CheckpointContainer');
  sim.injectFault('ListContainers', new RuntimeError('ResourceExhausted', 'too many requests'));
  t.true((await rejectsWith(t, client.listContainers(), 'ResourceExhausted')).retriable);
});

test('connect refuses a runtime reporting another CRI version, naming runtime, endpoint and version', async (t) => {
  const { client, server } = await harness(t, { runtimeApiVersion: 'v1alpha2', runtimeName: 'containerd', runtimeVersion: '1.5.0' });
  const e = await rejectsWith(t, client.connect(), 'UnsupportedVersion');
  t.is(e.message, `runtime containerd 1.5.0 at ${server.endpoint} speaks CRI v1alpha2; svc-node needs runtime.v1`);
});

test('connect refuses a socket that serves gRPC but not runtime.v1', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-cri-'));
  const sim = new Simulator();
  const server = await serveRuntimeService(sim, path.join(dir, 'img.sock'), { services: ['image'] });
  const client = new GrpcRuntimeService(server.endpoint);
  t.teardown(async () => {
    client.close();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });
  const e = await rejectsWith(t, client.connect(), 'UnsupportedVersion');
  t.regex(e.message, /^runtime at unix:\/\/\/.*img\.sock does not serve CRI runtime\.v1 \(.*\); svc-node needs runtime\.v1$/);
});

test('a missing socket: calls fail Unavailable, connect gives up at its timeout with a clear message', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-cri-'));
  const endpoint = `unix://${path.join(dir, 'absent.sock')}`;
  const client = new GrpcRuntimeService(endpoint);
  t.teardown(async () => {
    client.close();
    await rm(dir, { recursive: true, force: true });
  });
  const e = await rejectsWith(t, client.version(), 'Unavailable');
  t.true(e.retriable);
  const c = await t.throwsAsync(client.connect({ timeoutMs: 300 }));
  t.true(isRuntimeError(c, 'DeadlineExceeded') || isRuntimeError(c, 'Unavailable'));
  t.regex(c?.message ?? '', new RegExp(`container runtime at ${endpoint} did not answer Version within 300ms: `));
});

test('per-call deadlines and cancellation map to DeadlineExceeded and Canceled', async (t) => {
  const { client, sim } = await harness(t);
  sim.setLatency('ListContainers', 60_000);
  await rejectsWith(t, client.listContainers(undefined, { timeoutMs: 100 }), 'DeadlineExceeded');
  const ac = new AbortController();
  const p = client.listContainers(undefined, { signal: ac.signal });
  setImmediate(() => ac.abort());
  await rejectsWith(t, p, 'Canceled');
  await rejectsWith(t, client.listContainers(undefined, { signal: AbortSignal.abort() }), 'Canceled');
  sim.setLatency('ListContainers', 0);
  t.deepEqual(await client.listContainers(), []);
});

test('GetContainerEvents streams over gRPC until aborted; Unimplemented runtimes throw on iteration', async (t) => {
  const { client, sim } = await harness(t);
  const ac = new AbortController();
  const it = client.getContainerEvents({ signal: ac.signal })[Symbol.asyncIterator]();
  const first = it.next();
  // Events published before the server has subscribed are not delivered (as on a real runtime).
  while (sim.counts().eventSubscribers === 0) await new Promise((r) => setTimeout(r, 5));
  const sandboxId = await client.runPodSandbox(sandboxConfig('ev'));
  const created = (await first).value as ContainerEvent;
  t.is(created.type, 'CONTAINER_CREATED_EVENT');
  t.is(created.containerId, sandboxId);
  t.is(created.podSandboxStatus?.state, 'SANDBOX_READY');
  t.is(created.podSandboxStatus?.ip, '10.88.0.2');
  t.is(((await it.next()).value as ContainerEvent).type, 'CONTAINER_STARTED_EVENT');
  ac.abort();
  t.true((await it.next()).done);
  while (sim.counts().eventSubscribers !== 0) await new Promise((r) => setTimeout(r, 5));

  const off = await harness(t, { events: false });
  await rejectsWith(t, off.client.getContainerEvents()[Symbol.asyncIterator]().next(), 'Unimplemented');
});

test('separate runtime and image endpoints: image calls go to the image socket', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-cri-'));
  const runtimeSim = new Simulator({ images: [] });
  const imageSim = new Simulator({ images: ['busybox'] });
  const rs = await serveRuntimeService(runtimeSim, path.join(dir, 'rt.sock'), { services: ['runtime'] });
  const is = await serveRuntimeService(imageSim, path.join(dir, 'img.sock'), { services: ['image'] });
  const client = new GrpcRuntimeService(rs.endpoint, is.endpoint);
  t.teardown(async () => {
    client.close();
    await rs.close();
    await is.close();
    await rm(dir, { recursive: true, force: true });
  });
  await client.connect();
  t.deepEqual((await client.listImages()).map((i) => i.repoTags[0]), [BUSYBOX]);
  t.is((await client.status()).conditions.length, 2);
});

test('the client reconnects by itself when the runtime comes back on the same socket', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-cri-'));
  const socket = path.join(dir, 'cri.sock');
  const sim = new Simulator();
  let server: CriServer = await serveRuntimeService(sim, socket);
  const client = new GrpcRuntimeService(server.endpoint);
  t.teardown(async () => {
    client.close();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });
  await client.connect();
  await server.close();
  await rejectsWith(t, client.version(), 'Unavailable');
  server = await serveRuntimeService(sim, socket);
  // connect() waits for the channel (waitForReady), so it rides out grpc-js's reconnect back-off.
  t.is((await client.connect({ timeoutMs: 10_000 })).runtimeApiVersion, 'v1');
  t.is((await client.version()).runtimeName, 'svc-sim');
});

test('close makes later calls reject Unavailable', async (t) => {
  const { client } = await harness(t);
  await client.connect();
  client.close();
  await rejectsWith(t, client.version(), 'Unavailable');
});
