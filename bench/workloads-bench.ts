/**
 * `npm run bench -- workloads [--replicas N] [--nodes M] [--in-flight K]` (issue 19): a Deployment
 * scaled from 0 to N replicas (1,000) across M simulated nodes (20 svc-node agents on sim://,
 * kubeAPIQPS raised as the pod-startup bench does), then a rolling update of those pods (default
 * strategy: 25% surge, 25% unavailable), against a baseline measured first in the same run: N
 * bare pods created through the API (K in flight, 20) and scheduled by the same scheduler. Each
 * phase is timed from its first request to all pods Ready/Available (seen on a watch), with the
 * CPU of svc-apiserver (where the controllers and the scheduler run, with the API requests they
 * and the agents make) and of the agents, per pod. Goals: the scale-up within 1.5 times the
 * baseline's time, the rolling update within 3 times.
 */
import { mkdtempSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { request, type Dispatcher } from 'undici';
import { startAgent, type AgentProcess } from '../test/e2e/agent/agent-process';
import { startApiServer, type RunningApiServer } from '../test/helpers/apiserver-process';
import type { Cleanup } from './lib/cleanup';
import { runClosedLoop } from './lib/load';
import { waitNodeReady } from './lib/node-ready';
import { nodePidBehind, procCpuSeconds } from './lib/proc-cpu';
import { progress } from './lib/progress';
import { ratio, round } from './lib/stats';

const IMAGE = 'svc.local/busybox:latest';
const KUBE_API_QPS = 1000;
const GOALS = { scale_up_ratio: 1.5, rolling_update_ratio: 3 } as const;

export async function runWorkloadsBench(args: readonly string[], cleanup: Cleanup): Promise<object> {
  const replicas = numberArg(args, '--replicas', 1000);
  const nodes = numberArg(args, '--nodes', 20);
  const inFlight = numberArg(args, '--in-flight', 20);
  const loadBefore = loadavg()[0];
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-workloads-'));
  cleanup.dir(dir);
  progress('starting svc-apiserver');
  const api = await startApiServer({ dataDir: join(dir, 'apiserver') });
  cleanup.child(api.proc);
  cleanup.add('stop svc-apiserver', async () => void (await api.stop('SIGKILL')));
  const agents = await startNodes(api, dir, nodes, Math.ceil((replicas * 1.25) / nodes) + 20, cleanup);
  const pids = { api: nodePidBehind(api.proc.pid!), agents: agents.map((a) => nodePidBehind(a.proc.pid!)) };
  const cpu = () => ({ api: procCpuSeconds(pids.api), agents: pids.agents.reduce((n, p) => n + procCpuSeconds(p), 0) });
  for (const ns of ['bare', 'deploy']) await call(api, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });

  progress(`baseline: ${replicas} bare pods created through the API, ${inFlight} in flight, until all are Ready`);
  const baseline = await measure(cpu, replicas, async () => {
    const watch = await ReadyPods.open(api, 'bare');
    await runClosedLoop(inFlight, replicas, (i) => createPod(api, `bare-${i}`));
    await watch.until(replicas);
    watch.close();
  });
  progress(`baseline: ${baseline.seconds} s`);
  await call(api, 'DELETE', '/api/v1/namespaces/bare/pods?gracePeriodSeconds=0');

  progress(`deployment: created at 0 replicas, scaled to ${replicas} through deployments/scale, until all are Available`);
  await call(api, 'POST', '/apis/apps/v1/namespaces/deploy/deployments', deployment(0));
  const scaleUp = await measure(cpu, replicas, async () => {
    const watch = await DeploymentWatch.open(api, 'deploy', 'web');
    await call(api, 'PATCH', '/apis/apps/v1/namespaces/deploy/deployments/web/scale', { spec: { replicas } }, 'application/merge-patch+json');
    await watch.until((d) => complete(d, replicas, 2));
    watch.close();
  });
  progress(`scale-up: ${scaleUp.seconds} s`);

  progress(`rolling update of ${replicas} pods (maxSurge 25%, maxUnavailable 25%)`);
  const rolling = await measure(cpu, replicas, async () => {
    const watch = await DeploymentWatch.open(api, 'deploy', 'web');
    await call(api, 'PATCH', '/apis/apps/v1/namespaces/deploy/deployments/web', { spec: { template: { metadata: { annotations: { 'bench/rollout': '2' } } } } }, 'application/strategic-merge-patch+json');
    await watch.until((d) => complete(d, replicas, 3));
    watch.close();
  });
  progress(`rolling update: ${rolling.seconds} s`);

  const up = ratio(scaleUp.seconds, baseline.seconds);
  const roll = ratio(rolling.seconds, baseline.seconds);
  const notes: string[] = [];
  if (loadBefore > 1.5) notes.push(`the machine was busy (1-minute load ${loadBefore.toFixed(2)} on ${cpus().length} cores before the run)`);
  return {
    benchmark: 'workloads',
    machine: { cpus: cpus().length, cpu_model: cpus()[0]?.model ?? 'unknown', node: process.version, load_average_1m_before: round(loadBefore), load_average_1m_after: round(loadavg()[0]) },
    replicas,
    simulated_nodes: nodes,
    agent_kube_api_qps: { qps: KUBE_API_QPS, burst: KUBE_API_QPS * 2 },
    baseline_bare_pods: { in_flight: inFlight, ...baseline },
    deployment_scale_up: scaleUp,
    deployment_rolling_update: { strategy: 'RollingUpdate 25% surge / 25% unavailable', ...rolling },
    goals: {
      scale_up_ratio: { target: `<= ${GOALS.scale_up_ratio}`, value: up, met: up !== null && up <= GOALS.scale_up_ratio },
      rolling_update_ratio: { target: `<= ${GOALS.rolling_update_ratio}`, value: roll, met: roll !== null && roll <= GOALS.rolling_update_ratio },
    },
    notes: [
      'apiserver_cpu_ms_per_pod is svc-apiserver as a whole: the controllers and the scheduler run in it, besides the API requests of the agents and of this client',
      ...notes,
    ],
  };
}

interface Phase {
  seconds: number;
  apiserver_cpu_ms_per_pod: number;
  agents_cpu_ms_per_pod: number;
}

async function measure(cpu: () => { api: number; agents: number }, pods: number, run: () => Promise<void>): Promise<Phase> {
  const c0 = cpu();
  const t0 = performance.now();
  await run();
  const seconds = (performance.now() - t0) / 1000;
  const c1 = cpu();
  return { seconds: round(seconds, 2), apiserver_cpu_ms_per_pod: round(((c1.api - c0.api) * 1000) / pods), agents_cpu_ms_per_pod: round(((c1.agents - c0.agents) * 1000) / pods) };
}

async function startNodes(api: RunningApiServer, dir: string, n: number, maxPods: number, cleanup: Cleanup): Promise<AgentProcess[]> {
  progress(`starting ${n} svc-node agents on sim://`);
  const agents: AgentProcess[] = [];
  for (let i = 0; i < n; i++) {
    const a = startAgent({
      dir: join(dir, `node-${i}`),
      nodeName: `sim-${i}`,
      kubeconfig: api.kubeconfig,
      configLines: [`maxPods: ${maxPods}`, 'enableServer: false', `kubeAPIQPS: ${KUBE_API_QPS}`, `kubeAPIBurst: ${KUBE_API_QPS * 2}`],
    });
    cleanup.child(a.proc);
    agents.push(a);
  }
  cleanup.add('stop the agents', async () => void (await Promise.all(agents.map((a) => a.stop('SIGKILL')))));
  for (let i = 0; i < n; i++) await waitNodeReady(api, `sim-${i}`, 120_000);
  return agents;
}

const template = () => ({
  metadata: { labels: { app: 'web' } },
  spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }] },
});

function deployment(replicas: number): object {
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas, selector: { matchLabels: { app: 'web' } }, template: template() } };
}

async function createPod(api: RunningApiServer, name: string): Promise<void> {
  await call(api, 'POST', '/api/v1/namespaces/bare/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: 'bare' } }, spec: template().spec });
}

interface Obj {
  metadata?: { name?: string; generation?: number; deletionTimestamp?: string };
  status?: { observedGeneration?: number; replicas?: number; updatedReplicas?: number; availableReplicas?: number; conditions?: Array<{ type: string; status: string }> };
}

/** A rollout is done: generation observed, every replica updated and available, and no old ones left. */
function complete(d: Obj, replicas: number, generation: number): boolean {
  const s = d.status ?? {};
  return (d.metadata?.generation ?? 0) >= generation && s.observedGeneration === d.metadata?.generation && s.replicas === replicas && s.updatedReplicas === replicas && s.availableReplicas === replicas;
}

async function call(api: RunningApiServer, method: Dispatcher.HttpMethod, path: string, body?: unknown, contentType = 'application/json'): Promise<void> {
  const res = await request(api.url + path, {
    method,
    dispatcher: api.admin,
    headers: { accept: 'application/json', ...(body === undefined ? {} : { 'content-type': contentType }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 300)}`);
}

/** A watch stream of JSON events, handed to onEvent one at a time. */
async function watchStream(api: RunningApiServer, path: string, signal: AbortSignal, onEvent: (type: string, o: Obj) => void): Promise<void> {
  const res = await request(`${api.url}${path}${path.includes('?') ? '&' : '?'}watch=true`, { dispatcher: api.admin, signal });
  if (res.statusCode !== 200) throw new Error(`watch ${path}: ${res.statusCode} ${await res.body.text()}`);
  void (async () => {
    let partial = '';
    try {
      for await (const chunk of res.body) {
        partial += (chunk as Buffer).toString('utf8');
        let nl: number;
        while ((nl = partial.indexOf('\n')) >= 0) {
          const line = partial.slice(0, nl);
          partial = partial.slice(nl + 1);
          if (line.trim()) {
            const ev = JSON.parse(line) as { type: string; object: Obj };
            onEvent(ev.type, ev.object);
          }
        }
      }
    } catch {
      // aborted
    }
  })();
}

/** Counts a namespace's Ready pods (not being deleted) from one watch. */
class ReadyPods {
  private readonly ready = new Set<string>();
  private waiter?: { n: number; resolve: () => void };
  private constructor(private readonly ac: AbortController) {}

  static async open(api: RunningApiServer, ns: string): Promise<ReadyPods> {
    const w = new ReadyPods(new AbortController());
    await watchStream(api, `/api/v1/namespaces/${ns}/pods`, w.ac.signal, (type, p) => {
      const name = p.metadata?.name ?? '';
      const isReady = type !== 'DELETED' && !p.metadata?.deletionTimestamp && (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
      if (isReady) w.ready.add(name);
      else w.ready.delete(name);
      if (w.waiter && w.ready.size >= w.waiter.n) w.waiter.resolve();
    });
    return w;
  }

  until(n: number): Promise<void> {
    if (this.ready.size >= n) return Promise.resolve();
    return new Promise((resolve) => (this.waiter = { n, resolve }));
  }

  close(): void {
    this.ac.abort();
  }
}

/** Follows one Deployment until a predicate holds. */
class DeploymentWatch {
  private last?: Obj;
  private waiter?: { pred: (d: Obj) => boolean; resolve: () => void };
  private constructor(private readonly ac: AbortController) {}

  static async open(api: RunningApiServer, ns: string, name: string): Promise<DeploymentWatch> {
    const w = new DeploymentWatch(new AbortController());
    await watchStream(api, `/apis/apps/v1/namespaces/${ns}/deployments?fieldSelector=metadata.name%3D${name}`, w.ac.signal, (_type, d) => {
      w.last = d;
      if (w.waiter?.pred(d)) w.waiter.resolve();
    });
    return w;
  }

  until(pred: (d: Obj) => boolean): Promise<void> {
    if (this.last && pred(this.last)) return Promise.resolve();
    return new Promise((resolve) => (this.waiter = { pred, resolve }));
  }

  close(): void {
    this.ac.abort();
  }
}

function numberArg(args: readonly string[], name: string, dflt: number): number {
  const i = args.indexOf(name);
  if (i < 0) return dflt;
  const n = Number(args[i + 1]);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} takes a positive integer`);
  return n;
}
