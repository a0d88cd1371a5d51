/**
 * Device plugins end to end with separate processes: a real svc-apiserver (its scheduler places
 * the pods), svc-node "gpu" on a CRI simulator that runs as its own process (so the agent can be
 * restarted under running containers), svc-node "plain" on the in-process simulator, and the
 * sample device plugin as its own gRPC peer advertising four example.com/foo devices on "gpu".
 * The container configs CreateContainer received are read back from the simulator over CRI
 * (verbose ContainerStatus).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { GrpcRuntimeService } from '../../../agent/cri/grpc-client';
import { CHECKPOINT_FILE, readCheckpoint } from '../../../agent/devices/checkpoint';
import type { ContainerConfig } from '../../../agent/cri/types';
import { repoRoot, startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { call } from '../../helpers/http';
import { eventually, startAgent, type AgentProcess } from '../agent/agent-process';

const RES = 'example.com/foo';
const GPU = 'e2e-dev-gpu';
const PLAIN = 'e2e-dev-plain';
const fixtures = path.join(__dirname, '..', '..', 'fixtures', 'device-plugin');

interface Proc {
  proc: ChildProcess;
  out: () => string;
  lines: () => Record<string, unknown>[];
  stop(sig?: NodeJS.Signals): Promise<void>;
}

function spawnNode(script: string, args: string[]): Proc {
  const proc = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  return {
    proc,
    out: () => out,
    lines: () =>
      out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    async stop(sig = 'SIGTERM') {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(sig);
      await exited;
    },
  };
}

interface Env {
  dir: string;
  api: RunningApiServer;
  sim: Proc;
  cri: GrpcRuntimeService;
  gpu: AgentProcess;
  plain: AgentProcess;
  plugin: Proc;
  pluginConfig: string;
}
let env: Env | undefined;
const e = (): Env => {
  if (!env) throw new Error('the environment did not start (see the before hook)');
  return env;
};

const gpuDir = (dir: string) => path.join(dir, 'gpu');
const deviceDir = (dir: string) => path.join(gpuDir(dir), 'root', 'device-plugins');

function startGpuAgent(dir: string): AgentProcess {
  return startAgent({
    dir: gpuDir(dir),
    nodeName: GPU,
    kubeconfig: e0.api!.kubeconfig,
    args: ['--node-ip=127.0.0.1'],
    configLines: [
      `containerRuntimeEndpoint: unix://${path.join(dir, 'cri.sock')}`,
      'nodeStatusUpdateFrequency: 1s',
      'enableServer: false',
      `podLogsDir: ${path.join(dir, 'logs')}`,
      'devicePluginAdmissionWait: 20s',
    ],
  });
}
const e0: { api?: RunningApiServer } = {};

function startPlugin(cfg: string): Proc {
  return spawnNode(path.join(fixtures, 'sample-plugin.js'), ['--config', cfg]);
}

async function nodeResources(name: string): Promise<{ capacity: Record<string, string>; allocatable: Record<string, string> }> {
  const r = await call(e().api.admin, 'GET', `${e().api.url}/api/v1/nodes/${name}`);
  if (r.status !== 200) throw new Error(`node ${name}: ${r.status} ${r.text}`);
  return r.body.status;
}

type PodJson = { metadata: { uid: string }; spec: { nodeName?: string }; status: { phase?: string; reason?: string; message?: string; conditions?: { type: string; status: string; reason?: string; message?: string }[]; containerStatuses?: { containerID?: string; state: { running?: object } }[] } };

async function getPod(name: string): Promise<PodJson> {
  const r = await call(e().api.admin, 'GET', `${e().api.url}/api/v1/namespaces/default/pods/${name}`);
  if (r.status !== 200) throw new Error(`pod ${name}: ${r.status} ${r.text}`);
  return r.body as PodJson;
}

async function createPod(name: string, count: number, nodeName?: string): Promise<void> {
  const r = await call(e().api.admin, 'POST', `${e().api.url}/api/v1/namespaces/default/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      ...(nodeName ? { nodeName } : {}),
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'app', image: 'svc.local/busybox:latest', command: ['sleep', '3600'], resources: { requests: { [RES]: String(count) }, limits: { [RES]: String(count) } } }],
    },
  });
  if (r.status !== 201) throw new Error(`pod ${name}: ${r.status} ${r.text}`);
}

async function deletePod(name: string): Promise<void> {
  await call(e().api.admin, 'DELETE', `${e().api.url}/api/v1/namespaces/default/pods/${name}`);
  await eventually(`pod ${name} gone`, async () => {
    const r = await call(e().api.admin, 'GET', `${e().api.url}/api/v1/namespaces/default/pods/${name}`);
    return r.status === 404 ? true : undefined;
  }, 60_000);
}

const running = (p: PodJson) => p.status.phase === 'Running' && !!p.status.containerStatuses?.[0]?.state.running;

async function waitRunning(name: string): Promise<PodJson> {
  return eventually(`pod ${name} running`, async () => {
    const p = await getPod(name);
    return running(p) ? p : undefined;
  }, 90_000, 300);
}

/** The ContainerConfig the simulator got for the pod's container "app". */
async function appConfig(podUid: string): Promise<{ id: string; config: ContainerConfig }> {
  const list = await e().cri.listContainers({ labelSelector: { 'io.kubernetes.pod.uid': podUid, 'io.kubernetes.container.name': 'app' } });
  const live = list.filter((c) => c.state === 'CONTAINER_RUNNING');
  if (live.length !== 1) throw new Error(`pod ${podUid}: ${live.length} running app containers`);
  const st = await e().cri.containerStatus(live[0].id, true);
  return { id: live[0].id, config: (JSON.parse(st.info['info']) as { config: ContainerConfig }).config };
}

function deviceEnv(c: ContainerConfig): string[] {
  const v = c.envs?.find((x) => x.key === 'SAMPLE_DEVICES')?.value;
  return v ? v.split(',').sort() : [];
}

test.before(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-devices-e2e-'));
  mkdirSync(path.join(dir, 'logs'));
  const api = await startApiServer();
  e0.api = api;
  const procs: { stop(sig?: NodeJS.Signals): Promise<unknown> }[] = [];
  try {
    const sim = spawnNode(path.join(fixtures, 'sim-runtime.js'), ['--socket', path.join(dir, 'cri.sock'), '--name', 'devices']);
    procs.push(sim);
    await eventually('simulated runtime serving', () => (sim.out().includes('"serving"') ? true : undefined), 30_000, 100);
    const cri = new GrpcRuntimeService(`unix://${path.join(dir, 'cri.sock')}`, '', { timeoutMs: 30_000 });
    await cri.connect();
    const gpu = startGpuAgent(dir);
    procs.push(gpu);
    const plain = startAgent({ dir: path.join(dir, 'plain'), nodeName: PLAIN, kubeconfig: api.kubeconfig, args: ['--node-ip=127.0.0.1'], configLines: ['nodeStatusUpdateFrequency: 1s', 'enableServer: false', `podLogsDir: ${path.join(dir, 'logs')}`] });
    procs.push(plain);
    await gpu.waitForLog('serving device plugin registration', 60_000);
    const pluginConfig = path.join(dir, 'plugin.json');
    writeFileSync(pluginConfig, JSON.stringify({ resourceName: RES, devices: 4, pluginDir: deviceDir(dir), preStartRequired: true }));
    const plugin = startPlugin(pluginConfig);
    procs.push(plugin);
    await gpu.waitForLog('node registered and heartbeating', 60_000);
    await plain.waitForLog('node registered and heartbeating', 60_000);
    env = { dir, api, sim, cri, gpu, plain, plugin, pluginConfig };
  } catch (err) {
    for (const p of procs) await p.stop('SIGKILL');
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
});

test.after.always(async () => {
  if (!env) return;
  await env.gpu.stop('SIGKILL');
  await env.plain.stop('SIGKILL');
  await env.plugin.stop('SIGKILL');
  env.cri.close();
  await env.sim.stop('SIGKILL');
  await env.api.stop();
  rmSync(env.dir, { recursive: true, force: true });
});

test.serial('the plugin registers; the node advertises 4 example.com/foo, the other node none', async (t) => {
  const r = await eventually('gpu node advertises the devices', async () => {
    const s = await nodeResources(GPU);
    return s.allocatable[RES] === '4' ? s : undefined;
  }, 60_000);
  t.is(r.capacity[RES], '4');
  t.false(RES in (await nodeResources(PLAIN)).allocatable);
  t.true(e().plugin.lines().some((l) => l['event'] === 'registered'));
});

let firstIds: string[] = [];
let firstContainer = '';

test.serial('a pod asking for 2 devices is scheduled on the node with them and its container config carries the plugin answer', async (t) => {
  await createPod('gpu-1', 2);
  const p = await waitRunning('gpu-1');
  t.is(p.spec.nodeName, GPU);
  const { id, config } = await appConfig(p.metadata.uid);
  firstIds = deviceEnv(config);
  firstContainer = id;
  t.is(firstIds.length, 2);
  t.deepEqual(config.devices?.map((d) => d.containerPath).sort(), firstIds.map((x) => `/dev/sample-${x}`));
  t.deepEqual([...(config.cdiDevices ?? [])].sort(), firstIds.map((x) => `example.com/sample=${x}`));
  t.deepEqual(config.annotations?.['example.com/sample-devices']?.split(',').sort(), firstIds);
  t.deepEqual(config.mounts?.filter((m) => m.containerPath.startsWith('/run/sample/')).map((m) => m.containerPath).sort(), firstIds.map((x) => `/run/sample/${x}`));
  // The plugin asked for PreStartContainer: it saw the same devices.
  t.true(e().plugin.lines().some((l) => l['event'] === 'pre-start' && JSON.stringify([...(l['devices'] as string[])].sort()) === JSON.stringify(firstIds)));
  const ckpt = await readCheckpoint(deviceDir(e().dir));
  t.deepEqual(ckpt?.PodDeviceEntries.filter((x) => x.PodUID === p.metadata.uid).flatMap((x) => Object.values(x.DeviceIDs).flat()).sort(), firstIds);
});

let secondIds: string[] = [];

test.serial('a second pod gets the two other devices; a third finds no node', async (t) => {
  await createPod('gpu-2', 2);
  const p = await waitRunning('gpu-2');
  secondIds = deviceEnv((await appConfig(p.metadata.uid)).config);
  t.is(secondIds.length, 2);
  t.deepEqual(secondIds.filter((x) => firstIds.includes(x)), []);
  await createPod('gpu-3', 1);
  const pending = await eventually('gpu-3 unschedulable', async () => {
    const q = await getPod('gpu-3');
    return q.status.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'False') ? q : undefined;
  }, 60_000);
  t.is(pending.spec.nodeName, undefined);
  await deletePod('gpu-3');
});

test.serial('the pod resources API (queried from another process) shows which container holds which device', async (t) => {
  const socket = path.join(gpuDir(e().dir), 'root', 'pod-resources', 'kubelet.sock');
  const clientJs = path.join(__dirname, '..', '..', 'fixtures', 'podresources', 'client.js');
  const protoPath = path.join(repoRoot, 'proto', 'podresources', 'v1', 'api.proto');
  const out = await new Promise<any>((resolve, reject) =>
    execFile(process.execPath, [clientJs, protoPath, socket, 'list'], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => (err ? reject(new Error(stderr || err.message)) : resolve(JSON.parse(stdout)))),
  );
  t.true(out.ok, JSON.stringify(out));
  const held = (name: string) =>
    out.response.pod_resources
      .filter((p: any) => p.name === name)
      .flatMap((p: any) => p.containers.flatMap((c: any) => c.devices.filter((d: any) => d.resource_name === RES).flatMap((d: any) => d.device_ids)))
      .sort();
  t.deepEqual(held('gpu-1'), [...firstIds].sort());
  t.deepEqual(held('gpu-2'), [...secondIds].sort());
});

test.serial('killing the plugin makes allocatable drop (capacity stays for the grace period)', async (t) => {
  await e().plugin.stop('SIGKILL');
  const s = await eventually('allocatable 0', async () => {
    const r = await nodeResources(GPU);
    return r.allocatable[RES] === '0' ? r : undefined;
  }, 60_000);
  t.is(s.capacity[RES], '4');
  await e().gpu.waitForLog('device plugin disconnected', 10_000);
  // A new plugin process brings the devices back.
  e().plugin = startPlugin(e().pluginConfig);
  const back = await eventually('allocatable back', async () => {
    const r = await nodeResources(GPU);
    return r.allocatable[RES] === '4' ? r : undefined;
  }, 60_000);
  t.deepEqual([back.capacity[RES], back.allocatable[RES]], ['4', '4']);
});

test.serial('restarting the agent keeps running containers and their devices (checkpoint); the plugin registers again by itself', async (t) => {
  const env = e();
  const registrations = () => env.plugin.lines().filter((l) => l['event'] === 'registered').length;
  const before = registrations();
  t.true(existsSync(path.join(deviceDir(env.dir), CHECKPOINT_FILE)));
  await env.gpu.stop('SIGTERM');
  env.gpu = startGpuAgent(env.dir);
  await env.gpu.waitForLog('restored device allocations from the checkpoint', 60_000);
  await env.gpu.waitForLog('node registered and heartbeating', 60_000);
  await eventually('plugin registered again', () => (registrations() > before ? true : undefined), 60_000);
  await eventually('allocatable back after restart', async () => ((await nodeResources(GPU)).allocatable[RES] === '4' ? true : undefined), 60_000);
  // The same container still runs with the same devices.
  const p1 = await waitRunning('gpu-1');
  const now = await appConfig(p1.metadata.uid);
  t.is(now.id, firstContainer);
  t.deepEqual(deviceEnv(now.config), firstIds);
  // A pod bound to the node directly (bypassing the scheduler) cannot get devices the restored
  // pods hold: the agent fails it with a clear reason.
  await createPod('greedy', 1, GPU);
  const failed = await eventually('greedy failed', async () => {
    const q = await getPod('greedy');
    return q.status.phase === 'Failed' ? q : undefined;
  }, 60_000);
  t.is(failed.status.reason, 'UnexpectedAdmissionError');
  t.is(failed.status.message, `Allocate failed due to requested number of devices unavailable for ${RES}. Requested: 1, Available: 0, which is unexpected`);
  await deletePod('greedy');
});

test.serial('a truncated checkpoint: the agent starts anyway, logs it and rebuilds the allocations from the runtime', async (t) => {
  const env = e();
  await env.gpu.stop('SIGTERM');
  const file = path.join(deviceDir(env.dir), CHECKPOINT_FILE);
  const text = readFileSync(file, 'utf8');
  writeFileSync(file, text.slice(0, Math.floor(text.length / 2)));
  env.gpu = startGpuAgent(env.dir);
  await env.gpu.waitForLog('device checkpoint is corrupt', 60_000);
  const rebuilt = await env.gpu.waitForLog('rebuilt device allocations from the container runtime', 60_000);
  t.is(rebuilt['allocations'], 2);
  await env.gpu.waitForLog('node registered and heartbeating', 60_000);
  await eventually('plugin registered again', async () => ((await nodeResources(GPU)).allocatable[RES] === '4' ? true : undefined), 60_000);
  const uids = [(await getPod('gpu-1')).metadata.uid, (await getPod('gpu-2')).metadata.uid].sort();
  // The rebuilt checkpoint is written right after the log line; on a busy machine give it time.
  const ckpt = await eventually('the rebuilt checkpoint on disk', async () => {
    const c = await readCheckpoint(deviceDir(env.dir));
    return c && c.PodDeviceEntries.length > 0 ? c : undefined;
  }, 30_000);
  t.deepEqual([...new Set(ckpt.PodDeviceEntries.map((x) => x.PodUID))].sort(), uids);
  // The running pods never lost their devices meanwhile (they would be re-allocated, maybe others).
  t.false(env.gpu.logs.some((l) => String(l['msg']).startsWith('released the devices')), env.gpu.output());
  t.deepEqual(ckpt.PodDeviceEntries.flatMap((x) => Object.values(x.DeviceIDs).flat()).sort(), [...firstIds, ...secondIds].sort());
  await createPod('greedy-2', 1, GPU);
  const failed = await eventually('greedy-2 failed', async () => {
    const q = await getPod('greedy-2');
    return q.status.phase === 'Failed' ? q : undefined;
  }, 60_000);
  t.is(failed.status.reason, 'UnexpectedAdmissionError');
  await deletePod('greedy-2');
});

test.serial('devices are freed when a pod ends: a new pod gets the deleted pod devices, never the running one', async (t) => {
  await deletePod('gpu-2');
  await createPod('gpu-4', 2);
  const p = await waitRunning('gpu-4');
  const ids = deviceEnv((await appConfig(p.metadata.uid)).config);
  t.deepEqual(ids, secondIds);
  t.deepEqual(ids.filter((x) => firstIds.includes(x)), []);
  const ckpt = JSON.parse(readFileSync(path.join(deviceDir(e().dir), CHECKPOINT_FILE), 'utf8')) as { Data: { PodDeviceEntries: { PodUID: string }[] } };
  t.is(new Set(ckpt.Data.PodDeviceEntries.map((x) => x.PodUID)).size, 2);
});
