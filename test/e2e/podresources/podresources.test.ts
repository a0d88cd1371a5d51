/**
 * The pod resources API end to end: a real svc-apiserver, a real svc-node (CRI simulator) and a
 * pod resources client in a third process (test/fixtures/podresources/client.js, plain grpc-js on
 * the proto file) speaking raw gRPC to <root-dir>/pod-resources/kubelet.sock: the wire contract,
 * the pods the agent runs, NOT_FOUND, the rate limit under a flood, and that the agent keeps
 * heartbeating and answering. A device plugin announced on plugins_registry/ joins the device
 * manager and its devices show in GetAllocatableResources. (Devices held by containers are
 * covered by test/e2e/devices.)
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { repoRoot, startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { FakeRegistrationPlugin } from '../../helpers/device-doubles';
import { eventually, kubectlJson } from '../agent/agent-process';
import { runPod, startNode, type NodeUnderTest } from '../checkpoint/checkpoint-env';

const NODE = 'e2e-podres';
const PODS = ['alpha', 'beta', 'gamma'];
const clientJs = path.join(__dirname, '..', '..', 'fixtures', 'podresources', 'client.js');
const protoPath = path.join(repoRoot, 'proto', 'podresources', 'v1', 'api.proto');

interface Env {
  api: RunningApiServer;
  node: NodeUnderTest;
  dir: string;
  socket: string;
}
let env: Env | undefined;
function e(): Env {
  if (!env) throw new Error('the environment did not start (see the before hook)');
  return env;
}

/** Runs the client process; resolves its JSON answer. */
function client(...args: string[]): Promise<any> {
  return new Promise((resolve, reject) =>
    execFile(process.execPath, [clientJs, protoPath, e().socket, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`client ${args.join(' ')}: ${stderr || err.message}`));
      try {
        resolve(JSON.parse(stdout));
      } catch {
        reject(new Error(`client ${args.join(' ')} printed ${stdout}`));
      }
    }),
  );
}

/** A List that got through (the bucket may be empty right after a flood, so retry until it refills). */
function listOk(): Promise<any> {
  return eventually('a List answered OK', async () => {
    const r = await client('list');
    return r.ok ? r.response : undefined;
  }, 30_000, 200);
}

test.before(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-podres-e2e-'));
  const api = await startApiServer();
  let node: NodeUnderTest | undefined;
  try {
    node = await startNode(api, path.join(dir, 'node'), NODE);
    await node.agent.waitForLog('serving pod resources API', 30_000);
    for (const name of PODS) await runPod(api, NODE, name);
    env = { api, node, dir, socket: path.join(node.rootDir, 'pod-resources', 'kubelet.sock') };
  } catch (err) {
    await node?.agent.stop('SIGKILL');
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
});

test.after.always(async () => {
  if (!env) return;
  await env.node.agent.stop('SIGKILL');
  await env.api.stop();
  rmSync(env.dir, { recursive: true, force: true });
});

test.serial('the socket is upstream\'s path, a 0600 socket in the 0750 pod-resources directory', (t) => {
  const st = statSync(e().socket);
  t.true(st.isSocket());
  t.is(st.mode & 0o777, 0o600);
  t.is(statSync(path.dirname(e().socket)).mode & 0o777, 0o750);
});

test.serial('List from another process shows every running pod with its container, no devices, CPUs or memory', async (t) => {
  const list = await listOk();
  const mine = list.pod_resources.filter((p: any) => p.namespace === 'default').sort((a: any, b: any) => a.name.localeCompare(b.name));
  t.deepEqual(mine.map((p: any) => p.name), PODS);
  for (const p of mine) t.deepEqual(p.containers, [{ name: 'app', devices: [], cpu_ids: [], memory: [], dynamic_resources: [] }]);
});

test.serial('Get answers one pod; an unknown pod is NOT_FOUND', async (t) => {
  const got = await eventually('Get beta', async () => {
    const r = await client('get', 'default', 'beta');
    return r.ok ? r.response : undefined;
  }, 30_000, 200);
  t.is(got.pod_resources.name, 'beta');
  t.is(got.pod_resources.namespace, 'default');
  t.is(got.pod_resources.containers[0].name, 'app');
  const missing = await eventually('Get of a ghost answered (not rate limited)', async () => {
    const r = await client('get', 'default', 'ghost');
    return r.ok || r.codeName !== 'RESOURCE_EXHAUSTED' ? r : undefined;
  }, 30_000, 200);
  t.false(missing.ok);
  t.is(missing.codeName, 'NOT_FOUND');
  t.is(missing.details, 'pod ghost in namespace default not found');
});

test.serial('GetAllocatableResources answers (no device plugin yet: empty)', async (t) => {
  const r = await eventually('GetAllocatableResources', async () => {
    const a = await client('allocatable');
    return a.ok ? a.response : undefined;
  }, 30_000, 200);
  t.deepEqual(r, { devices: [], cpu_ids: [], memory: [] });
});

test.serial('a flood of 200 calls is rate limited (RESOURCE_EXHAUSTED) and the agent keeps heartbeating and answering', async (t) => {
  const kc = e().api.kubeconfig;
  const flood = await client('flood', '200');
  t.is((flood.counts.OK ?? 0) + (flood.counts.RESOURCE_EXHAUSTED ?? 0), 200, JSON.stringify(flood));
  t.true(flood.counts.RESOURCE_EXHAUSTED > 0, JSON.stringify(flood));
  t.true(flood.counts.OK >= 1, JSON.stringify(flood));
  t.deepEqual(flood.details, ['rejected by rate limit']);
  const after = (await kubectlJson(kc, ['get', 'lease', '-n', 'svc-node-lease', NODE]))['spec'].renewTime as string;
  await eventually('the Lease renewTime to advance after the flood', async () => {
    const l = await kubectlJson(kc, ['get', 'lease', '-n', 'svc-node-lease', NODE]);
    return l['spec'].renewTime !== after ? true : undefined;
  }, 60_000, 1000);
  const list = await listOk();
  t.is(list.pod_resources.filter((p: any) => PODS.includes(p.name)).length, PODS.length);
  t.is(e().node.agent.proc.exitCode, null);
});

test.serial('a deleted pod leaves List', async (t) => {
  await new Promise<void>((resolve, reject) =>
    execFile('/usr/bin/kubectl', ['--kubeconfig', e().api.kubeconfig, 'delete', 'pod', 'gamma', '--wait=true'], { timeout: 60_000 }, (err, _o, stderr) => (err ? reject(new Error(stderr || err.message)) : resolve())),
  );
  const names: string[] = await eventually('gamma gone from List', async () => {
    const list = await listOk();
    const now = list.pod_resources.map((p: any) => p.name);
    return !now.includes('gamma') && now.includes('alpha') ? now : undefined;
  }, 60_000, 500);
  t.deepEqual(names.filter((n) => PODS.includes(n)).sort(), ['alpha', 'beta']);
});

test.serial('a device plugin on plugins_registry/ is registered with the device manager; its devices become allocatable', async (t) => {
  const sock = path.join(e().node.rootDir, 'plugins_registry', 'example-foo.sock');
  const plugin = await FakeRegistrationPlugin.start(sock, { name: 'example.com/foo' }, ['dev-a', 'dev-b']);
  try {
    const [s] = await plugin.statusCount(1, 30_000);
    t.true(s.plugin_registered, s.error);
    const r = await eventually('the devices in GetAllocatableResources', async () => {
      const a = await client('allocatable');
      return a.ok && a.response.devices.length === 2 ? a.response : undefined;
    }, 30_000, 200);
    t.deepEqual(r.devices.map((d: any) => [d.resource_name, d.device_ids]).sort(), [['example.com/foo', ['dev-a']], ['example.com/foo', ['dev-b']]]);
  } finally {
    await plugin.stop();
  }
  const bad = await FakeRegistrationPlugin.start(path.join(e().node.rootDir, 'plugins_registry', 'bad.sock'), { name: 'example.com/bar' });
  try {
    // Only the registration service, no device plugin API behind it: refused with the reason.
    const [s] = await bad.statusCount(1, 30_000);
    t.false(s.plugin_registered);
    t.regex(s.error, /^RegisterPlugin error -- plugin registration failed with err: .*(UNIMPLEMENTED|Unimplemented|GetDevicePluginOptions)/);
  } finally {
    await bad.stop();
  }
});

test.serial('after the agent is killed (socket left behind) a restarted agent replaces the stale socket and answers', async (t) => {
  const before = statSync(e().socket);
  await e().node.agent.stop('SIGKILL');
  t.true(statSync(e().socket).isSocket(), 'a killed agent leaves its socket');
  const stale = await client('list');
  t.false(stale.ok);
  t.is(stale.codeName, 'UNAVAILABLE');
  e().node = await startNode(e().api, path.dirname(e().node.rootDir), NODE);
  await e().node.agent.waitForLog('serving pod resources API', 30_000);
  const after = statSync(e().socket);
  // Inode numbers are recycled once a file is deleted, so a new socket may get the old number:
  // a new one shows in its change time (made and renamed into place seconds later).
  t.true(after.ino !== before.ino || after.ctimeMs > before.ctimeMs, 'a new socket');
  t.is(after.mode & 0o777, 0o600);
  const list = await eventually('the restarted agent lists the surviving pods', async () => {
    const r = await listOk();
    const names = r.pod_resources.map((p: any) => p.name).sort();
    return names.includes('alpha') && names.includes('beta') ? names : undefined;
  }, 60_000, 500);
  t.false(list.includes('gamma'));
});
