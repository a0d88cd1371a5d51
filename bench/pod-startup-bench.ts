/**
 * `npm run bench -- pod-startup [--pods N] [--sim-pods M] [--only containerd|sim]`: how long a pod
 * takes from API create to Running on svc-node, against what the runtime alone needs.
 *
 * A. Real containerd (started here as test/helpers/containerd.ts does; needs root). Baseline (a):
 *    RunPodSandbox + CreateContainer + StartContainer straight through our gRPC client. Measured
 *    (b): POST a pod bound to the node → phase Running seen on a watch, through real
 *    svc-apiserver and svc-node processes on the same containerd. N pods each, one at a time,
 *    alternating a and b. Goals: b/a (p50) <= 1.3 and b p99 < 1 s. One unmeasured warm-up pod each.
 * B. The CRI simulator (sim://): M pods created 20 at a time and watched to Running; pods/s,
 *    latency under that load, and the agent's CPU per pod against the raw simulator sequence
 *    run in this process (the agent's simulator is in-process too).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { request, type Dispatcher } from 'undici';
import { GrpcRuntimeService } from '../agent/cri/grpc-client';
import type { RuntimeService } from '../agent/cri/runtime-service';
import { Simulator } from '../agent/cri/simulator';
import type { ContainerConfig, PodSandboxConfig } from '../agent/cri/types';
import { startAgent, type AgentProcess } from '../test/e2e/agent/agent-process';
import { startApiServer, type RunningApiServer } from '../test/helpers/apiserver-process';
import { startContainerd, type Containerd } from '../test/helpers/containerd';
import type { Cleanup } from './lib/cleanup';
import { sleep } from './lib/load';
import { waitNodeReady } from './lib/node-ready';
import { nodePidBehind, procCpuSeconds } from './lib/proc-cpu';
import { progress } from './lib/progress';
import { percentile, ratio, round } from './lib/stats';

const IMAGE = 'svc.local/busybox:latest';
const GOALS = {
  ratio_p50: { target: '<= 1.3', ok: (x: number) => x <= 1.3 },
  p99_ms: { target: '< 1000', ok: (x: number) => x < 1000 },
} as const;

export async function runPodStartupBench(args: readonly string[], cleanup: Cleanup): Promise<object> {
  const n = numberArg(args, '--pods', 30);
  const m = numberArg(args, '--sim-pods', 1000);
  const simQps = numberArg(args, '--sim-kube-api-qps', SIM_KUBE_API_QPS);
  const only = stringArg(args, '--only');
  // Profiling aids: the agents' JSON logs (with --log-level) go to <--agent-log>.<ctrd|sim>.
  const agentLog = stringArg(args, '--agent-log');
  const agentArgs = stringArg(args, '--log-level') ? [`--log-level=${stringArg(args, '--log-level')}`] : [];
  // --cpu-prof DIR: the sim agent writes a V8 CPU profile there when it exits.
  const cpuProf = stringArg(args, '--cpu-prof');
  const loadBefore = loadavg()[0];
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-pod-startup-'));
  cleanup.dir(dir);
  progress('starting svc-apiserver');
  const api = await startApiServer({ dataDir: join(dir, 'apiserver') });
  cleanup.child(api.proc);
  cleanup.add('stop svc-apiserver', async () => void (await api.stop('SIGKILL')));

  const result: Record<string, unknown> = {
    benchmark: 'pod-startup',
    machine: { cpus: cpus().length, cpu_model: cpus()[0]?.model ?? 'unknown', node: process.version, load_average_1m_before: round(loadBefore) },
  };
  const notes: string[] = [];
  if (only !== 'sim') result['containerd'] = await containerdPart(api, dir, n, cleanup, notes, agentArgs, agentLog);
  if (only !== 'containerd') result['simulator'] = await simPart(api, dir, m, simQps, cleanup, notes, agentArgs, agentLog, cpuProf);
  result['load_average_1m_after'] = round(loadavg()[0]);
  if (loadBefore > 1.5) notes.push(`the machine was busy (1-minute load ${loadBefore.toFixed(2)} on ${cpus().length} cores before the run)`);
  result['notes'] = notes;
  return result;
}

// ---------------------------------------------------------------------------------------- A

async function containerdPart(api: RunningApiServer, dir: string, n: number, cleanup: Cleanup, notes: string[], agentArgs: string[], agentLog?: string): Promise<object> {
  progress('starting containerd');
  const ctrd = await startContainerd();
  cleanup.add('stop containerd', () => ctrd.stop());
  const cri = new GrpcRuntimeService(ctrd.endpoint, ctrd.endpoint, { timeoutMs: 60_000 });
  cleanup.add('close CRI client', () => cri.close());
  await cri.connect();

  const node = 'bench-ctrd';
  progress('starting svc-node on containerd');
  const agent = startAgent({
    dir: join(dir, 'agent-ctrd'),
    nodeName: node,
    kubeconfig: api.kubeconfig,
    args: ['--node-ip=127.0.0.1', ...agentArgs],
    configLines: [`containerRuntimeEndpoint: ${ctrd.endpoint}`, `podLogsDir: ${ctrd.logRoot}`, 'enableServer: false'],
  });
  cleanup.child(agent.proc);
  cleanup.add('delete the containerd pods, stop svc-node', () => drainAndStop(api, agent, 'bench-a'));
  if (agentLog) cleanup.add('write the agent log', () => writeFileSync(`${agentLog}.ctrd`, agent.output()));
  await waitNodeReady(api, node, 90_000);
  const watch = await PodWatch.open(api, 'default');
  cleanup.add('close watch', () => watch.close());

  // (a) and (b) alternate pod by pod, so a change of load on this shared machine hits both alike.
  progress(`${n} pods each way, alternating: (a) raw CRI RunPodSandbox + CreateContainer + StartContainer, (b) API create → Running via svc-node`);
  const agentPid = nodePidBehind(agent.proc.pid!);
  let agentCpu = 0;
  const raw: number[] = [];
  const viaApi: number[] = [];
  for (let i = 0; i <= n; i++) {
    const r = await rawSequence(cri, 1, () => rawConfigs(ctrd, i), true);
    const name = `bench-a-${i}`;
    const cpu0 = procCpuSeconds(agentPid);
    const t0 = performance.now();
    await createPod(api, name, node);
    await watch.running(name, 120_000);
    const ms = performance.now() - t0;
    agentCpu += procCpuSeconds(agentPid) - cpu0;
    // Pod 0 of each warms up (first sandbox, first image status); it is not counted.
    if (i > 0) {
      raw.push(r[0]);
      viaApi.push(ms);
    }
  }
  const agentCpuMsPerPod = (agentCpu * 1000) / (n + 1);
    const a50 = percentile(raw, 0.5);
  const b50 = percentile(viaApi, 0.5);
  const b99 = percentile(viaApi, 0.99);
  progress(`(b) p50 ${round(b50)} ms, p99 ${round(b99)} ms; ratio ${ratio(b50, a50)}`);
  const warnings = agent.logs.filter((l) => Number(l['level'] ?? 0) >= 40).length;
  if (warnings > 0) notes.push(`the containerd agent logged ${warnings} warning/error lines`);
  const r50 = ratio(b50, a50) ?? Infinity;
  return {
    pods: n,
    baseline_raw_cri: summary(raw),
    api_create_to_running: summary(viaApi),
    agent_cpu_ms_per_pod: round(agentCpuMsPerPod),
    ratio_p50: ratio(b50, a50),
    ratio_p99: ratio(b99, percentile(raw, 0.99)),
    goals: {
      ratio_p50: { target: GOALS.ratio_p50.target, value: ratio(b50, a50), met: GOALS.ratio_p50.ok(r50) },
      p99_ms: { target: GOALS.p99_ms.target, value: round(b99), met: GOALS.p99_ms.ok(b99) },
    },
  };
}

let seq = 0;
function rawConfigs(ctrd: Containerd, i: number): { sandbox: PodSandboxConfig; container: ContainerConfig } {
  const uid = `bench-raw-${process.pid}-${i}-${++seq}`;
  const name = `raw-${i}`;
  return {
    sandbox: {
      metadata: { name, namespace: 'bench', uid, attempt: 0 },
      hostname: name,
      logDirectory: join(ctrd.logRoot, `bench_${name}_${uid}`),
      labels: { 'io.kubernetes.pod.name': name, 'io.kubernetes.pod.namespace': 'bench', 'io.kubernetes.pod.uid': uid },
      linux: { cgroupParent: `${ctrd.cgroupParent}/pod${uid}`, securityContext: { namespaceOptions: { pid: 'POD' } } },
    },
    container: {
      metadata: { name: 'c', attempt: 0 },
      image: { image: IMAGE },
      command: ['sleep', '3600'],
      logPath: 'c/0.log',
      labels: { 'io.kubernetes.container.name': 'c' },
      linux: { securityContext: { namespaceOptions: { pid: 'POD' } } },
    },
  };
}

/** The runtime's own cost: the three calls one pod needs, pods one after another (the first one warms up and is dropped unless keepFirst). */
async function rawSequence(rt: RuntimeService, n: number, configs: (i: number) => { sandbox: PodSandboxConfig; container: ContainerConfig }, keepFirst = false): Promise<number[]> {
  const out: number[] = [];
  for (let i = keepFirst ? 1 : 0; i <= n; i++) {
    const { sandbox, container } = configs(i);
    const t0 = performance.now();
    const sid = await rt.runPodSandbox(sandbox);
    const cid = await rt.createContainer(sid, container, sandbox);
    await rt.startContainer(cid);
    if (i > 0) out.push(performance.now() - t0);
  }
  return out;
}

// ---------------------------------------------------------------------------------------- B

/**
 * kubeAPIQPS of the simulator part's agent (burst twice that): high enough that the figure
 * measures svc-node's pod pipeline. At the default 50 (burst 100) the agent's few API calls per
 * pod (status patches, with a GET each as upstream's status manager) cap a 1,000-pod burst at
 * about 12 pods/s, as the same defaults cap the kubelet; `--sim-kube-api-qps 50` shows that.
 */
const SIM_KUBE_API_QPS = 1000;

async function simPart(api: RunningApiServer, dir: string, m: number, kubeApiQps: number, cleanup: Cleanup, notes: string[], agentArgs: string[], agentLog?: string, cpuProf?: string): Promise<object> {
  progress(`baseline: the simulator's own sequence for ${m} pods, in this process`);
  const sim = new Simulator({ name: 'bench-raw', writeLogs: false });
  await sim.connect();
  const cpuRaw0 = process.cpuUsage();
  const rawT0 = performance.now();
  const raw = await rawSequence(sim, m, (i) => {
    const uid = `sim-raw-${i}`;
    return {
      sandbox: { metadata: { name: `raw-${i}`, namespace: 'bench', uid, attempt: 0 }, labels: {}, logDirectory: join(dir, 'simlogs', uid) },
      container: { metadata: { name: 'c', attempt: 0 }, image: { image: IMAGE }, command: ['sleep', '3600'], logPath: 'c/0.log' },
    };
  });
  const rawSeconds = (performance.now() - rawT0) / 1000;
  const c = process.cpuUsage(cpuRaw0);
  const rawCpuMsPerPod = (c.user + c.system) / 1000 / (m + 1);
  sim.close();

  const node = 'bench-sim';
  progress('starting svc-node on sim://');
  const agent = startAgent({
    dir: join(dir, 'agent-sim'),
    nodeName: node,
    kubeconfig: api.kubeconfig,
    configLines: [`maxPods: ${m + 10}`, 'enableServer: false', `kubeAPIQPS: ${kubeApiQps}`, `kubeAPIBurst: ${kubeApiQps * 2}`],
    args: agentArgs,
    ...(cpuProf ? { env: { ...process.env, NODE_OPTIONS: `--require ${join(__dirname, 'lib', 'cpu-profile-preload.js')}`, SVC_CPU_PROFILE_DIR: cpuProf } } : {}),
  });
  cleanup.child(agent.proc);
  cleanup.add('delete the sim pods, stop svc-node', () => drainAndStop(api, agent, 'bench-s'));
  if (agentLog) cleanup.add('write the agent log', () => writeFileSync(`${agentLog}.sim`, agent.output()));
  await waitNodeReady(api, node, 90_000);
  const watch = await PodWatch.open(api, 'sim');
  cleanup.add('close sim watch', () => watch.close());
  await ensureNamespace(api, 'sim');

  progress(`creating ${m} pods on ${node}, 20 in flight, until all are Running`);
  const agentPid = nodePidBehind(agent.proc.pid!);
  const apiPid = nodePidBehind(api.proc.pid!);
  const cpu0 = procCpuSeconds(agentPid);
  const apiCpu0 = procCpuSeconds(apiPid);
  const benchCpu0 = process.cpuUsage();
  const t0 = performance.now();
  const lat: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < m) {
      const i = next++;
      const name = `bench-s-${i}`;
      const s = performance.now();
      await createPod(api, name, node, 'sim');
      await watch.running(name, 240_000);
      lat.push(performance.now() - s);
    }
  };
  await Promise.all(Array.from({ length: 20 }, worker));
  const seconds = (performance.now() - t0) / 1000;
  const agentCpu = procCpuSeconds(agentPid) - cpu0;
  const apiCpu = procCpuSeconds(apiPid) - apiCpu0;
  const benchCpuUs = process.cpuUsage(benchCpu0);
  progress(`${m} pods Running in ${seconds.toFixed(1)} s (${(m / seconds).toFixed(1)} pods/s); agent CPU ${agentCpu.toFixed(1)} s`);
  const warnings = agent.logs.filter((l) => Number(l['level'] ?? 0) >= 40).length;
  if (warnings > 0) notes.push(`the sim agent logged ${warnings} warning/error lines`);
  return {
    pods: m,
    in_flight: 20,
    agent_kube_api_qps: { qps: kubeApiQps, burst: kubeApiQps * 2 },
    seconds: round(seconds, 1),
    pods_per_second: round(m / seconds, 1),
    api_create_to_running: summary(lat),
    agent_cpu_ms_per_pod: round((agentCpu * 1000) / m),
    baseline_raw_simulator: { pods_per_second: round(m / rawSeconds, 1), ...summary(raw), cpu_ms_per_pod: round(rawCpuMsPerPod, 3) },
    agent_overhead_cpu_ms_per_pod: round((agentCpu * 1000) / m - rawCpuMsPerPod),
    // Who else used the two cores meanwhile: the API server (creates, status patches, watches) and this client.
    apiserver_cpu_ms_per_pod: round((apiCpu * 1000) / m),
    bench_client_cpu_ms_per_pod: round((benchCpuUs.user + benchCpuUs.system) / 1000 / m),
  };
}

// ---------------------------------------------------------------------------------------- helpers

function summary(sample: number[]): object {
  return { count: sample.length, p50_ms: round(percentile(sample, 0.5)), p99_ms: round(percentile(sample, 0.99)), max_ms: round(Math.max(...sample)) };
}

async function call(api: RunningApiServer, method: Dispatcher.HttpMethod, path: string, body?: unknown): Promise<{ status: number; text: string }> {
  const res = await request(api.url + path, {
    method,
    dispatcher: api.admin,
    headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.statusCode, text: await res.body.text() };
}

async function ensureNamespace(api: RunningApiServer, ns: string): Promise<void> {
  const r = await call(api, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  if (r.status !== 201 && r.status !== 409) throw new Error(`create namespace ${ns}: ${r.status} ${r.text.slice(0, 200)}`);
}

async function createPod(api: RunningApiServer, name: string, node: string, ns = 'default'): Promise<void> {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      nodeName: node,
      shareProcessNamespace: true,
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'c', image: IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }],
    },
  };
  const r = await call(api, 'POST', `/api/v1/namespaces/${ns}/pods`, pod);
  if (r.status !== 201) throw new Error(`create pod ${name}: ${r.status} ${r.text.slice(0, 300)}`);
}

/** One watch on a namespace's pods; resolves waiters when a named pod reports phase Running. */
class PodWatch {
  private readonly runningSeen = new Set<string>();
  private readonly waiters = new Map<string, () => void>();
  private failure: Error | undefined;

  private constructor(private readonly ac: AbortController) {}

  static async open(api: RunningApiServer, ns: string): Promise<PodWatch> {
    const ac = new AbortController();
    const w = new PodWatch(ac);
    const res = await request(`${api.url}/api/v1/namespaces/${ns}/pods?watch=true&allowWatchBookmarks=false`, { dispatcher: api.admin, signal: ac.signal });
    if (res.statusCode !== 200) throw new Error(`watch pods: ${res.statusCode} ${await res.body.text()}`);
    void w.consume(res.body);
    return w;
  }

  private async consume(body: AsyncIterable<Buffer>): Promise<void> {
    let partial = '';
    try {
      for await (const chunk of body) {
        partial += chunk.toString('utf8');
        let nl: number;
        while ((nl = partial.indexOf('\n')) >= 0) {
          const line = partial.slice(0, nl);
          partial = partial.slice(nl + 1);
          if (!line.trim()) continue;
          const ev = JSON.parse(line) as { type: string; object: { metadata?: { name?: string }; status?: { phase?: string } } };
          const name = ev.object.metadata?.name ?? '';
          if (ev.type !== 'DELETED' && ev.object.status?.phase === 'Running' && !this.runningSeen.has(name)) {
            this.runningSeen.add(name);
            this.waiters.get(name)?.();
          }
        }
      }
      if (!this.ac.signal.aborted) this.failure = new Error('the pod watch ended');
    } catch (e) {
      if (!this.ac.signal.aborted) this.failure = e as Error;
    }
  }

  running(name: string, boundMs: number): Promise<void> {
    if (this.runningSeen.has(name)) return Promise.resolve();
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(name);
        reject(this.failure ?? new Error(`pod ${name} not Running within ${boundMs / 1000} s`));
      }, boundMs);
      this.waiters.set(name, () => {
        clearTimeout(timer);
        this.waiters.delete(name);
        resolve();
      });
    });
  }

  close(): void {
    this.ac.abort();
  }
}

/** Deletes the bench's pods so the agent removes their containers, waits (bounded) until they are gone, stops the agent. */
async function drainAndStop(api: RunningApiServer, agent: AgentProcess, prefix: string): Promise<void> {
  if (agent.proc.exitCode === null && agent.proc.signalCode === null) {
    for (const ns of ['default', 'sim']) await call(api, 'DELETE', `/api/v1/namespaces/${ns}/pods`).catch(() => undefined);
    const end = Date.now() + 60_000;
    for (;;) {
      const left = await Promise.all(['default', 'sim'].map((ns) => call(api, 'GET', `/api/v1/namespaces/${ns}/pods`).catch(() => ({ status: 0, text: '' }))));
      const count = left.reduce((k, r) => k + (r.status === 200 ? (JSON.parse(r.text) as { items: { metadata: { name: string } }[] }).items.filter((p) => p.metadata.name.startsWith(prefix)).length : 0), 0);
      if (count === 0 || Date.now() > end) break;
      await sleep(500);
    }
  }
  const timer = setTimeout(() => agent.proc.kill('SIGKILL'), 10_000);
  await agent.stop('SIGTERM');
  clearTimeout(timer);
}

function numberArg(args: readonly string[], flag: string, dflt: number): number {
  const i = args.indexOf(flag);
  if (i < 0) return dflt;
  const v = Number(args[i + 1]);
  if (!Number.isInteger(v) || v < 1) throw new Error(`${flag} wants a positive integer`);
  return v;
}

function stringArg(args: readonly string[], flag: string): string | undefined {
  const i = args.indexOf(flag);
  return i < 0 ? undefined : args[i + 1];
}
