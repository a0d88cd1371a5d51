/**
 * Pods end to end on real peers: the test's own containerd (Debian's 1.6 with runc and a CNI
 * bridge), a real svc-apiserver, a real svc-node pointed at that containerd, and kubectl. Pods are
 * created with kubectl and observed through the API; exec goes through the CRI client; logs come
 * from the agent's /containerLogs endpoint. The suite ends by deleting every pod and checking that
 * no container, sandbox, mount, cgroup or pod directory is left, then that containerd itself
 * leaves nothing behind.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { Agent, request } from 'undici';
import { GrpcRuntimeService } from '../../../agent/cri/grpc-client';
import { startApiServer, repoRoot, type RunningApiServer } from '../../helpers/apiserver-process';
import { startContainerd, type Containerd } from '../../helpers/containerd';
import { freePort } from '../../helpers/free-port';
import { eventually, kubectlJson, kubectlStdin, startAgent, type AgentProcess } from '../agent/agent-process';

const NODE = 'e2e-pods';
const IMAGE = 'svc.local/busybox:latest';

interface Env {
  ctrd: Containerd;
  api: RunningApiServer;
  agent: AgentProcess;
  cri: GrpcRuntimeService;
  dir: string;
  logPort: number;
  admin: Agent;
}

let env: Env | undefined;
const seenPods = new Set<string>();
const seenIds = new Set<string>();

function e(): Env {
  if (!env) throw new Error('the environment did not start (see the before hook)');
  return env;
}

type PodJson = {
  metadata: { name: string; uid: string; annotations?: Record<string, string> };
  spec: { nodeName?: string };
  status: {
    phase?: string;
    podIP?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: {
      name: string;
      ready: boolean;
      restartCount: number;
      containerID?: string;
      state: { waiting?: { reason?: string; message?: string }; running?: object; terminated?: { exitCode: number; reason?: string } };
      lastState: { terminated?: { exitCode: number; reason?: string } };
    }[];
  };
};

async function getPod(name: string): Promise<PodJson> {
  const p = await kubectlJson<PodJson>(e().api.kubeconfig, ['get', 'pod', name]);
  seenPods.add(p.metadata.uid);
  return p;
}

function ready(p: PodJson): boolean {
  return p.status.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
}

async function waitPod(name: string, what: string, pred: (p: PodJson) => boolean, boundMs = 60_000): Promise<PodJson> {
  return eventually(`${name}: ${what}`, async () => {
    const p = await getPod(name);
    return pred(p) ? p : undefined;
  }, boundMs, 300);
}

interface PodOpts {
  command?: string[];
  image?: string;
  pullPolicy?: string;
  extra?: Record<string, unknown>;
  container?: Record<string, unknown>;
  scheduled?: boolean;
}

async function createPod(name: string, o: PodOpts = {}): Promise<void> {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      // Omitted once on purpose: the scheduler binds that pod.
      ...(o.scheduled ? {} : { nodeName: NODE }),
      // busybox as PID 1 ignores SIGTERM; sharing the sandbox's PID namespace lets it stop at once.
      shareProcessNamespace: true,
      terminationGracePeriodSeconds: 2,
      containers: [{ name: 'c', image: o.image ?? IMAGE, imagePullPolicy: o.pullPolicy ?? 'IfNotPresent', command: o.command ?? ['sleep', '3600'], ...o.container }],
      ...o.extra,
    },
  };
  await kubectlStdin(e().api.kubeconfig, ['create', '-f', '-'], JSON.stringify(pod));
}

function kubectl(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('/usr/bin/kubectl', ['--kubeconfig', e().api.kubeconfig, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => (err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr || err.message}`)) : resolve(stdout)));
  });
}

function containerId(p: PodJson): string {
  const id = p.status.containerStatuses?.[0]?.containerID ?? '';
  if (!id.startsWith('containerd://')) throw new Error(`no containerd container ID in ${JSON.stringify(p.status.containerStatuses)}`);
  const bare = id.slice('containerd://'.length);
  seenIds.add(bare);
  return bare;
}

async function logs(name: string, query = ''): Promise<{ status: number; body: string }> {
  const res = await request(`https://127.0.0.1:${e().logPort}/containerLogs/default/${name}/c${query}`, { dispatcher: e().admin });
  return { status: res.statusCode, body: await res.body.text() };
}

test.before(async () => {
  const ctrd = await startContainerd();
  let api: RunningApiServer | undefined;
  try {
    api = await startApiServer();
    const dir = mkdtempSync(path.join(tmpdir(), 'svc-pods-e2e-'));
    mkdirSync(path.join(dir, 'manifests'));
    mkdirSync(path.join(dir, 'root', 'seccomp'), { recursive: true });
    copyFileSync(path.join(repoRoot, 'seccomp', 'audit.json'), path.join(dir, 'root', 'seccomp', 'audit.json'));
    const logPort = await freePort();
    const agent = startAgent({
      dir,
      nodeName: NODE,
      kubeconfig: api.kubeconfig,
      // The agent serves /containerLogs on loopback; the API server's pods/log proxy finds it by InternalIP.
      args: ['--node-ip=127.0.0.1'],
      configLines: [
        `containerRuntimeEndpoint: ${ctrd.endpoint}`,
        `podLogsDir: ${ctrd.logRoot}`,
        `staticPodPath: ${path.join(dir, 'manifests')}`,
        'fileCheckFrequency: 1s',
        'nodeStatusUpdateFrequency: 1s',
        'address: 127.0.0.1',
        `port: ${logPort}`,
      ],
    });
    const admin = new Agent({
      connect: { rejectUnauthorized: false, cert: readFileSync(path.join(api.dataDir, 'pki', 'admin.crt')), key: readFileSync(path.join(api.dataDir, 'pki', 'admin.key')) },
    });
    env = { ctrd, api, agent, cri: new GrpcRuntimeService(ctrd.endpoint, ctrd.endpoint, { timeoutMs: 30_000 }), dir, logPort, admin };
    await agent.waitForLog('node registered and heartbeating', 60_000);
    await eventually('node Ready', async () => {
      const n = await kubectlJson<{ status: { conditions: { type: string; status: string }[] } }>(api!.kubeconfig, ['get', 'node', NODE]);
      return n.status.conditions.find((c) => c.type === 'Ready')?.status === 'True' ? true : undefined;
    }, 60_000);
  } catch (err) {
    await env?.agent.stop('SIGKILL');
    await api?.stop();
    await ctrd.stop();
    throw err;
  }
});

test.after.always(async () => {
  if (!env) return;
  await env.agent.stop('SIGKILL');
  env.cri.close();
  await env.admin.close();
  await env.api.stop();
  await env.ctrd.stop();
  rmSync(env.dir, { recursive: true, force: true });
});

test.serial('a scheduled pod runs on containerd with a pod IP; env from a configmap is visible through exec; its log is served by the agent', async (t) => {
  const { api, cri, ctrd } = e();
  await kubectlStdin(api.kubeconfig, ['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { greeting: 'hello from a configmap' } }));
  await createPod('web', {
    scheduled: true,
    // stdout and stderr are separate pipes: the runtime may record two lines written in the same
    // instant in either order, so the second waits a moment.
    command: ['sh', '-c', 'echo started; sleep 0.5; echo oops >&2; exec sleep 3600'],
    container: { env: [{ name: 'GREETING', valueFrom: { configMapKeyRef: { name: 'settings', key: 'greeting' } } }], resources: { limits: { cpu: '200m', memory: '64Mi' } } },
  });
  const p = await waitPod('web', 'Running and Ready', (x) => x.status.phase === 'Running' && ready(x));
  t.is(p.spec.nodeName, NODE);
  const prefix = ctrd.podCidr.split('.').slice(0, 3).join('.') + '.';
  t.true((p.status.podIP ?? '').startsWith(prefix), `${p.status.podIP} in ${ctrd.podCidr}`);
  const id = containerId(p);
  const out = await cri.execSync(id, ['sh', '-c', 'echo "$GREETING"'], 10);
  t.is(out.stdout.toString(), 'hello from a configmap\n');
  const st = await cri.containerStatus(id);
  t.is(st.status.resources?.memoryLimitInBytes, 64 * 2 ** 20);
  const all = await eventually('both log lines', async () => {
    const l = await logs('web');
    return l.body.includes('oops') ? l : undefined;
  });
  t.is(all.status, 200);
  t.is(all.body, 'started\noops\n');
  t.is((await logs('web', '?tailLines=1')).body, 'oops\n');
  t.is((await logs('web', '?previous=true')).status, 400);
  // Through the API server's pods/log proxy, as kubectl reads it.
  t.is(await kubectl(['logs', 'web']), 'started\noops\n');
  t.is(await kubectl(['logs', 'web', '--tail=1']), 'oops\n');
});

test.serial('imagePullPolicy Never runs the imported image; an image that does not exist is ErrImagePull / ImagePullBackOff', async (t) => {
  await createPod('never', { pullPolicy: 'Never' });
  await createPod('ghost', { image: 'svc.local/does-not-exist:1' });
  await waitPod('never', 'Running', (x) => x.status.phase === 'Running' && ready(x));
  const reasons = new Set<string>();
  const ghost = await waitPod('ghost', 'ErrImagePull and ImagePullBackOff seen', (x) => {
    const r = x.status.containerStatuses?.[0]?.state.waiting?.reason;
    if (r) reasons.add(r);
    return reasons.has('ImagePullBackOff') && reasons.has('ErrImagePull');
  }, 60_000).catch(async () => getPod('ghost'));
  const w = ghost.status.containerStatuses?.[0]?.state.waiting;
  t.true(reasons.has('ImagePullBackOff') || w?.reason === 'ImagePullBackOff', JSON.stringify([...reasons]));
  t.true(['ErrImagePull', 'ImagePullBackOff'].includes(w?.reason ?? ''), JSON.stringify(w));
  t.regex(w?.message ?? '', /svc\.local\/does-not-exist:1/);
  t.is(ghost.status.phase, 'Pending');
});

test.serial('a container that exits is restarted: restartCount grows and CrashLoopBackOff appears', async (t) => {
  await createPod('crash', { command: ['sh', '-c', 'echo bye; exit 3'] });
  const p = await waitPod('crash', 'restarted twice and backing off', (x) => {
    const c = x.status.containerStatuses?.[0];
    return (c?.restartCount ?? 0) >= 2 && c?.state.waiting?.reason === 'CrashLoopBackOff';
  }, 60_000);
  const c = p.status.containerStatuses![0];
  t.is(c.lastState.terminated?.exitCode, 3);
  t.is(c.lastState.terminated?.reason, 'Error');
  t.regex(c.state.waiting?.message ?? '', /^back-off \d+s restarting failed container=c pod=crash_default\(/);
  t.is(p.status.phase, 'Running');
  const prev = await logs('crash', '?previous=true');
  t.is(prev.status, 200);
  t.is(prev.body, 'bye\n');
});

test.serial('a failing liveness probe restarts the container; a readiness probe toggles Ready without a restart', async (t) => {
  await createPod('live', {
    command: ['sh', '-c', 'touch /tmp/healthy; sleep 4; rm /tmp/healthy; exec sleep 3600'],
    container: { livenessProbe: { exec: { command: ['cat', '/tmp/healthy'] }, periodSeconds: 1, failureThreshold: 1 } },
  });
  await createPod('ready', {
    command: ['sh', '-c', 'sleep 2; touch /tmp/ready; sleep 6; rm /tmp/ready; exec sleep 3600'],
    container: { readinessProbe: { exec: { command: ['cat', '/tmp/ready'] }, periodSeconds: 1, failureThreshold: 1 } },
  });
  const seen: boolean[] = [];
  await waitPod('ready', 'Ready, then not Ready', (x) => {
    if (x.status.phase !== 'Running') return false;
    const r = ready(x);
    if (seen.at(-1) !== r) seen.push(r);
    return seen.join(',').includes('true,false');
  }, 40_000);
  t.is((await getPod('ready')).status.containerStatuses![0].restartCount, 0);
  const live = await waitPod('live', 'restarted after the liveness probe failed', (x) => (x.status.containerStatuses?.[0]?.restartCount ?? 0) >= 1, 40_000);
  t.truthy(live.status.containerStatuses![0].lastState.terminated);
  t.deepEqual(seen.slice(-2), [true, false]);
});

test.serial('seccomp: a Localhost profile from <root-dir>/seccomp works; a missing one is CreateContainerError naming the file', async (t) => {
  const { dir } = e();
  await createPod('sc-ok', { container: { securityContext: { seccompProfile: { type: 'Localhost', localhostProfile: 'audit.json' } } } });
  await createPod('sc-missing', { container: { securityContext: { seccompProfile: { type: 'Localhost', localhostProfile: 'profiles/missing.json' } } } });
  const ok = await waitPod('sc-ok', 'Running', (x) => x.status.phase === 'Running' && ready(x));
  // The runtime applied it: the container's process runs in seccomp filter mode (2).
  const st = await e().cri.containerStatus(containerId(ok), true);
  const pid = (JSON.parse(st.info['info'] ?? '{}') as { pid?: number }).pid;
  t.truthy(pid);
  t.regex(readFileSync(`/proc/${pid}/status`, 'utf8'), /^Seccomp:\s+2$/m);
  const p = await waitPod('sc-missing', 'CreateContainerError', (x) => x.status.containerStatuses?.[0]?.state.waiting?.reason === 'CreateContainerError');
  const file = path.join(dir, 'root', 'seccomp', 'profiles', 'missing.json');
  t.is(p.status.containerStatuses![0].state.waiting!.message, `cannot load seccomp profile "${file}": no such file or directory`);
  t.is(p.status.phase, 'Pending');
});

test.serial('a static pod from staticPodPath runs with a mirror pod; removing the manifest stops it and deletes the mirror', async (t) => {
  const { dir, cri } = e();
  const manifest = path.join(dir, 'manifests', 'static-web.yaml');
  writeFileSync(manifest, `apiVersion: v1\nkind: Pod\nmetadata:\n  name: static-web\nspec:\n  shareProcessNamespace: true\n  terminationGracePeriodSeconds: 2\n  containers:\n  - name: c\n    image: ${IMAGE}\n    imagePullPolicy: IfNotPresent\n    command: [sleep, '3600']\n`);
  const name = `static-web-${NODE}`;
  const p = await waitPod(name, 'the mirror pod Running', (x) => x.status.phase === 'Running' && ready(x));
  t.truthy(p.metadata.annotations?.['svc.io/config.mirror']);
  const id = containerId(p);
  t.is((await cri.containerStatus(id)).status.state, 'CONTAINER_RUNNING');
  rmSync(manifest);
  await eventually('the mirror pod gone', async () => {
    const list = await kubectlJson<{ items: PodJson[] }>(e().api.kubeconfig, ['get', 'pods']);
    return list.items.some((x) => x.metadata.name === name) ? undefined : true;
  }, 30_000);
  await eventually('its container gone', async () => ((await cri.listContainers()).some((c) => c.id === id) ? undefined : true), 30_000);
  t.false((await cri.listContainers()).some((c) => c.id === id));
});

test.serial('deleting every pod leaves no containers, sandboxes, mounts, cgroups or pod directories; containerd leaves nothing', async (t) => {
  const { cri, dir, ctrd, agent } = e();
  for (const c of await cri.listContainers({ labelSelector: { 'svc.io/managed-by': 'svc-node' } })) seenIds.add(c.id);
  const sandboxes = await cri.listPodSandbox({ labelSelector: { 'svc.io/managed-by': 'svc-node' } });
  for (const s of sandboxes) seenIds.add(s.id);
  t.true(sandboxes.length >= 5, `${sandboxes.length} sandboxes before the deletion`);
  await kubectl(['delete', 'pods', '--all', '--wait=true', '--timeout=90s']);
  const list = await kubectlJson<{ items: unknown[] }>(e().api.kubeconfig, ['get', 'pods']);
  t.deepEqual(list.items, []);
  t.deepEqual(await cri.listContainers({ labelSelector: { 'svc.io/managed-by': 'svc-node' } }), []);
  t.deepEqual(await cri.listPodSandbox({ labelSelector: { 'svc.io/managed-by': 'svc-node' } }), []);
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8');
  for (const id of seenIds) t.false(mounts.includes(id), `a mount of ${id} is left`);
  for (const uid of seenPods) {
    const cgroups = readdirSync('/sys/fs/cgroup').map((h) => path.join('/sys/fs/cgroup', h, 'svc-node', `pod${uid}`)).filter((d) => existsSync(d));
    t.deepEqual(cgroups, [], `cgroups of pod ${uid}`);
  }
  t.deepEqual(readdirSync(path.join(dir, 'root', 'pods')), []);
  // Pod log directories go with the next housekeeping round (every 10 s): containerd leaves them.
  await eventually('pod log directories removed', () => (readdirSync(ctrd.logRoot).length === 0 ? true : undefined), 30_000);
  t.deepEqual(readdirSync(ctrd.logRoot), []);
  t.is(await agent.stop('SIGTERM'), 0);
  cri.close();
  await ctrd.stop();
  t.deepEqual(await ctrd.leftovers(), []);
});
