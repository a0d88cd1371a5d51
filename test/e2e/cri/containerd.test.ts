/**
 * The CRI client against real containerd (Debian's 1.6 with runc), started by the test itself
 * with a locally built busybox image: runtime.v1 Version and Status, sandboxes on the CNI bridge
 * and on the host network, containers, exec, stats, logs, images, and the calls containerd 1.6 does
 * not implement. Ends by checking nothing is left on the machine.
 */
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { isRuntimeError, RuntimeError } from '../../../agent/cri/errors';
import { GrpcRuntimeService } from '../../../agent/cri/grpc-client';
import { RuntimeHealth } from '../../../agent/cri/runtime-health';
import type { ContainerConfig, ContainerStatus, PodSandboxConfig } from '../../../agent/cri/types';
import { startContainerd, type Containerd } from '../../helpers/containerd';

let ctrd: Containerd | undefined;
let cri: GrpcRuntimeService | undefined;

function env(): { ctrd: Containerd; cri: GrpcRuntimeService } {
  if (!ctrd || !cri) throw new Error('containerd did not start (see the before hook)');
  return { ctrd, cri };
}

test.before(async () => {
  ctrd = await startContainerd();
  cri = new GrpcRuntimeService(ctrd.endpoint, ctrd.endpoint, { timeoutMs: 30_000 });
});

test.after.always(async () => {
  cri?.close();
  await ctrd?.stop();
});

let seq = 0;
function sandbox(name: string, opts: { hostNetwork?: boolean; sharePid?: boolean } = {}): PodSandboxConfig {
  const { ctrd } = env();
  const uid = `uid-${name}-${++seq}`;
  const config: PodSandboxConfig = {
    metadata: { name, namespace: 'e2e', uid, attempt: 0 },
    logDirectory: path.join(ctrd.logRoot, `e2e_${name}_${uid}`),
    labels: { 'io.kubernetes.pod.name': name, 'io.kubernetes.pod.namespace': 'e2e' },
    linux: {
      cgroupParent: `${ctrd.cgroupParent}/pod${uid}`,
      securityContext: { namespaceOptions: opts.hostNetwork ? { network: 'NODE' } : {} },
    },
  };
  // As the kubelet: host-network sandboxes get no hostname (containerd puts them in the host UTS namespace).
  if (!opts.hostNetwork) config.hostname = name;
  return config;
}

function container(name: string, command: string[], opts: { sharePid?: boolean } = {}): ContainerConfig {
  return {
    metadata: { name, attempt: 0 },
    image: { image: env().ctrd.image },
    command,
    envs: [{ key: 'GREETING', value: 'hello from e2e' }],
    logPath: `${name}/0.log`,
    labels: { 'io.kubernetes.container.name': name },
    linux: {
      // The kubelet asks for pid CONTAINER unless the pod shares its process namespace.
      securityContext: { namespaceOptions: opts.sharePid ? {} : { pid: 'CONTAINER' } },
      resources: { cpuShares: 256, memoryLimitInBytes: 64 * 1024 * 1024 },
    },
  };
}

async function waitForState(id: string, state: ContainerStatus['state']): Promise<ContainerStatus> {
  const { cri } = env();
  for (let i = 0; i < 200; i++) {
    const st = (await cri.containerStatus(id)).status;
    if (st.state === state) return st;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`container ${id} never reached ${state}`);
}

function ipInCidr(ip: string, cidr: string): boolean {
  const [net] = cidr.split('/');
  return ip.startsWith((net ?? '').split('.').slice(0, 3).join('.') + '.');
}

test.serial('connect: containerd speaks runtime.v1; Status reports RuntimeReady and NetworkReady', async (t) => {
  const { cri } = env();
  const v = await cri.connect();
  t.is(v.runtimeName, 'containerd');
  t.is(v.runtimeApiVersion, 'v1');
  t.regex(v.runtimeVersion, /^1\./);
  const status = await cri.status();
  t.deepEqual(
    status.conditions.map((c) => [c.type, c.status]),
    [
      ['RuntimeReady', true],
      ['NetworkReady', true],
    ],
  );
  const health = new RuntimeHealth(cri);
  t.deepEqual((await health.probe()).problems, []);
  t.is(await health.runtimeVersion(), `containerd://${v.runtimeVersion}`);
});

test.serial('a pod on the CNI bridge: sandbox, busybox sleep running, exec, stats, logs, stop and removal', async (t) => {
  const { cri, ctrd } = env();
  const sb = sandbox('bridge');
  const sandboxId = await cri.runPodSandbox(sb);
  const sst = await cri.podSandboxStatus(sandboxId);
  t.is(sst.status.state, 'SANDBOX_READY');
  t.true(ipInCidr(sst.status.ip, ctrd.podCidr), `${sst.status.ip} in ${ctrd.podCidr}`);
  t.deepEqual(sst.status.metadata, sb.metadata);

  const id = await cri.createContainer(sandboxId, container('sleeper', ['sh', '-c', 'echo "$GREETING"; exec sleep 3600']), sb);
  t.is((await cri.containerStatus(id)).status.state, 'CONTAINER_CREATED');
  await cri.startContainer(id);
  const running = (await cri.containerStatus(id)).status;
  t.is(running.state, 'CONTAINER_RUNNING');
  t.true(running.startedAt > 0);
  t.is(running.image.image, ctrd.image);
  t.is(running.logPath, path.join(sb.logDirectory ?? '', 'sleeper/0.log'));
  t.deepEqual(
    (await cri.listContainers({ podSandboxId: sandboxId, state: 'CONTAINER_RUNNING' })).map((c) => c.id),
    [id],
  );

  const hi = await cri.execSync(id, ['echo', 'hi'], 10);
  t.is(hi.stdout.toString(), 'hi\n');
  t.is(hi.exitCode, 0);
  const failing = await cri.execSync(id, ['sh', '-c', 'echo oops >&2; exit 3'], 10);
  t.is(failing.exitCode, 3);
  t.is(failing.stderr.toString(), 'oops\n');
  const hostname = await cri.execSync(id, ['hostname'], 10);
  t.is(hostname.stdout.toString().trim(), 'bridge');

  const stats = await cri.containerStats(id);
  t.is(stats.id, id);
  t.is(stats.metadata.name, 'sleeper');
  t.true((stats.cpu?.usageCoreNanoSeconds ?? 0) > 0);
  t.true((stats.memory?.workingSetBytes ?? 0) > 0);
  t.true((await cri.listContainerStats({ podSandboxId: sandboxId })).some((s) => s.id === id));
  // ListPodSandboxStats (containerd 1.6 serves it): the pod cgroup's usage, its network namespace's interfaces, its containers.
  const podStats = await cri.listPodSandboxStats({ id: sandboxId });
  t.deepEqual(podStats.map((p) => p.id), [sandboxId]);
  t.deepEqual(podStats[0].metadata, sb.metadata);
  t.true((podStats[0].cpu?.usageCoreNanoSeconds ?? 0) > 0);
  t.true((podStats[0].memory?.workingSetBytes ?? 0) > 0);
  t.is(podStats[0].network?.defaultInterface?.name, 'eth0');
  t.true(podStats[0].containers.some((s) => s.id === id));

  const log = await readFile(running.logPath, 'utf8');
  t.regex(log, /^\S+ stdout F hello from e2e$/m);

  // Own PID namespace: sleep is PID 1 there and ignores SIGTERM, so the grace period runs out (137).
  await cri.stopContainer(id, 1);
  const exited = (await cri.containerStatus(id)).status;
  t.is(exited.state, 'CONTAINER_EXITED');
  t.is(exited.exitCode, 137);
  t.true(exited.finishedAt >= exited.startedAt);
  await cri.removeContainer(id);
  await cri.removeContainer(id); // idempotent
  await t.throwsAsync(cri.containerStatus(id), { instanceOf: RuntimeError, message: /not found/ });

  await cri.stopPodSandbox(sandboxId);
  const stopped = await cri.podSandboxStatus(sandboxId);
  t.is(stopped.status.state, 'SANDBOX_NOTREADY');
  await cri.removePodSandbox(sandboxId);
  await cri.removePodSandbox(sandboxId); // idempotent
  t.false((await cri.listPodSandbox()).some((s) => s.id === sandboxId));
});

test.serial('a host-network pod: no pod IP, the node hostname, and SIGTERM works with a shared PID namespace', async (t) => {
  const { cri } = env();
  const sb = sandbox('host', { hostNetwork: true });
  const sandboxId = await cri.runPodSandbox(sb);
  const st = await cri.podSandboxStatus(sandboxId);
  t.is(st.status.state, 'SANDBOX_READY');
  t.is(st.status.ip, '');
  const cc = container('sleeper', ['sleep', '3600'], { sharePid: true });
  cc.linux = { ...cc.linux, securityContext: { namespaceOptions: { network: 'NODE' } } };
  const id = await cri.createContainer(sandboxId, cc, sb);
  await cri.startContainer(id);
  t.is((await cri.execSync(id, ['hostname'], 10)).stdout.toString().trim(), os.hostname());
  // Not PID 1 (the sandbox's sleep is), so the default SIGTERM ends it: 143.
  await cri.stopContainer(id, 30);
  t.is((await cri.containerStatus(id)).status.exitCode, 143);
  await cri.stopPodSandbox(sandboxId);
  await cri.removePodSandbox(sandboxId);
});

test.serial('a container that exits by itself reports its exit code; missing images and unsupported calls map to errors', async (t) => {
  const { cri, ctrd } = env();
  const sb = sandbox('errors');
  const sandboxId = await cri.runPodSandbox(sb);

  const crasher = await cri.createContainer(sandboxId, container('crasher', ['sh', '-c', 'exit 3']), sb);
  await cri.startContainer(crasher);
  const exited = await waitForState(crasher, 'CONTAINER_EXITED');
  t.is(exited.exitCode, 3);
  t.is(exited.reason, 'Error');

  const missing = await t.throwsAsync(cri.createContainer(sandboxId, { ...container('ghost', ['true']), image: { image: 'svc.local/nope:1' } }, sb));
  t.true(isRuntimeError(missing, 'NotFound'), String(missing));

  const sleeper = await cri.createContainer(sandboxId, container('sleeper', ['sleep', '3600']), sb);
  await cri.startContainer(sleeper);
  const ckpt = await t.throwsAsync(cri.checkpointContainer(sleeper, path.join(ctrd.root, 'ckpt.tar'), 10));
  t.true(isRuntimeError(ckpt, 'Unimplemented'), String(ckpt));
  t.is((ckpt as RuntimeError).rpc, 'CheckpointContainer');
  const events = await t.throwsAsync(async () => {
    for await (const _ of cri.getContainerEvents()) break;
  });
  t.true(isRuntimeError(events, 'Unimplemented'), String(events));
  const notRunning = await t.throwsAsync(cri.execSync(crasher, ['true'], 5));
  t.true(notRunning instanceof RuntimeError, String(notRunning));

  // Stopping the sandbox kills what still runs; removing it removes its containers.
  await cri.stopPodSandbox(sandboxId);
  t.is((await cri.containerStatus(sleeper)).status.state, 'CONTAINER_EXITED');
  await cri.removePodSandbox(sandboxId);
  t.deepEqual(await cri.listContainers({ podSandboxId: sandboxId }), []);
});

test.serial('images: the imported image is present, absent ones are not, pulls without a registry fail', async (t) => {
  const { cri, ctrd } = env();
  const present = await cri.imageStatus({ image: ctrd.image });
  t.truthy(present.image);
  t.deepEqual(present.image?.repoTags, [ctrd.image]);
  t.regex(present.image?.id ?? '', /^sha256:[0-9a-f]{64}$/);
  t.true((present.image?.size ?? 0) > 1_000_000);
  t.true((await cri.listImages()).some((i) => i.id === present.image?.id));
  t.is((await cri.imageStatus({ image: 'svc.local/nope:1' })).image, undefined);
  const pull = await t.throwsAsync(cri.pullImage({ image: 'svc.local/nope:1' }, undefined, undefined, { timeoutMs: 20_000 }));
  t.true(pull instanceof RuntimeError, String(pull));
  t.regex(pull?.message ?? '', /svc\.local\/nope:1/);
  const fs = await cri.imageFsInfo();
  t.true(fs.imageFilesystems.some((f) => f.mountpoint.startsWith(ctrd.root)));
});

test.serial('stop leaves no containers, shims, mounts, cgroups, netns or bridge behind', async (t) => {
  const { cri, ctrd } = env();
  // Leave a running pod behind on purpose: stop() must clean it up.
  const sb = sandbox('leftover');
  const sandboxId = await cri.runPodSandbox(sb);
  const id = await cri.createContainer(sandboxId, container('sleeper', ['sleep', '3600']), sb);
  await cri.startContainer(id);
  t.true((await ctrd.leftovers()).length > 0);
  cri.close();
  await ctrd.stop();
  t.deepEqual(await ctrd.leftovers(), []);
});
