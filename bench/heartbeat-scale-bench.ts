import { mkdtempSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Agent } from 'undici';
import { NODE_LEASE_NAMESPACE } from '../apiserver/api/well-known';
import { startApiServer } from '../test/helpers/apiserver-process';
import type { Cleanup } from './lib/cleanup';
import { ensureNamespace } from './lib/http-figures';
import { runClosedLoop, sleep } from './lib/load';
import { nodePidBehind, procCpuSeconds } from './lib/proc-cpu';
import { procMemMb } from './lib/proc-stats';
import { progress } from './lib/progress';
import { percentile, round } from './lib/stats';
import { adminTls, Target } from './lib/target';

/** The agent's default renew interval: leaseDuration 40 s / 4 (kubelet NodeLeaseDurationSeconds * 0.25). */
const RENEW_MS = 10_000;
const LEASE_NS = NODE_LEASE_NAMESPACE;
/** Connections in the one pool every simulated agent shares. */
const POOL = 128;

interface Lease {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; resourceVersion?: string; [k: string]: unknown };
  spec: { holderIdentity: string; leaseDurationSeconds: number; renewTime: string };
}

interface Renewal {
  /** When it was sent, performance.now() ms; a skipped renewal (the previous one still in flight at its due time) has ms NaN and ok false. */
  at: number;
  ms: number;
  ok: boolean;
}

/** Same format as the agent's microTime (RFC 3339 with microseconds). */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/**
 * One simulated agent: renews its Lease on a fixed 10 s schedule from a random phase, one PUT
 * each (the update the agent sends, carrying the resourceVersion of the Lease it last wrote).
 */
class SimAgent {
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  constructor(
    private lease: Lease,
    private readonly target: Target,
    private readonly pool: Agent,
    private readonly record: (r: Renewal) => void,
  ) {}

  /** Starts renewing, the first after phaseMs; stop() ends it. */
  start(phaseMs: number): void {
    const first = performance.now() + phaseMs;
    let k = 0;
    const tick = () => {
      k++;
      this.timer = setTimeout(tick, first + k * RENEW_MS - performance.now());
      // A renewal still in flight after 10 s is already a miss; the agent would not overlap them either.
      if (!this.busy) void this.renew();
      else this.record({ at: performance.now(), ms: NaN, ok: false });
    };
    this.timer = setTimeout(tick, phaseMs);
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  private async renew(): Promise<void> {
    this.busy = true;
    const next: Lease = { ...this.lease, spec: { ...this.lease.spec, renewTime: microTime(Date.now()) } };
    const at = performance.now();
    let ok = false;
    try {
      const r = await this.target.send(this.pool, 'PUT', `/apis/coordination.svc.io/v1/namespaces/${LEASE_NS}/leases/${this.lease.metadata.name}`, next);
      if (r.status === 200) {
        this.lease = JSON.parse(r.text) as Lease;
        ok = true;
      }
    } catch {
      ok = false;
    }
    this.record({ at, ms: performance.now() - at, ok });
    this.busy = false;
  }
}

interface StepResult {
  nodes: number;
  seconds: number;
  renewals: number;
  renewals_per_second: number;
  expected_per_second: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  failed: number;
  over_10s: number;
  missed: number;
  server_cpu_percent_of_core: number;
  server_rss_mb: number;
  bench_cpu_percent_of_core: number;
}

/**
 * `npm run bench -- heartbeat-scale [--steps 250,500,1000,2000] [--step-seconds 40]`: how many
 * nodes' Lease heartbeats one svc-apiserver sustains (issue 3).
 */
export async function runHeartbeatScaleBench(args: readonly string[], cleanup: Cleanup): Promise<object> {
  const steps = (argValue(args, '--steps') ?? '250,500,1000,2000').split(',').map(Number);
  const stepS = Number(argValue(args, '--step-seconds') ?? 40);
  if (steps.some((n) => !Number.isInteger(n) || n <= 0) || !(stepS > 0)) throw new Error('--steps wants counts like 250,500 and --step-seconds a number');
  const notes: string[] = [];
  const loadBefore = loadavg()[0];

  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-heartbeat-'));
  cleanup.dir(dir);
  progress('starting svc-apiserver (default --node-monitor-grace-period)');
  const api = await startApiServer({ dataDir: dir });
  cleanup.child(api.proc);
  cleanup.add('stop svc-apiserver', async () => {
    if (api.proc.exitCode !== null) return;
    const t = setTimeout(() => api.proc.kill('SIGKILL'), 10_000);
    await api.stop('SIGTERM').finally(() => clearTimeout(t));
  });
  const serverPid = nodePidBehind(api.proc.pid!);
  const target = new Target('api', '127.0.0.1', api.port, adminTls(dir));
  await ensureNamespace(target, LEASE_NS);
  const pool = target.pool(POOL);
  const setupPool = target.pool(32);
  cleanup.add('close pools', () => Promise.all([pool.close(), setupPool.close()]).then(() => undefined));

  const agents: SimAgent[] = [];
  cleanup.add('stop simulated agents', () => agents.forEach((a) => a.stop()));
  let log: Renewal[] = [];
  const record = (r: Renewal) => log.push(r);
  const results: StepResult[] = [];

  for (const n of steps) {
    const add = n - agents.length;
    if (add > 0) {
      progress(`creating ${add} Nodes (Ready) and their Leases`);
      const base = agents.length;
      const created: Lease[] = new Array<Lease>(add);
      const t0 = performance.now();
      await runClosedLoop(32, add, async (i) => {
        created[i] = await createNodeAndLease(target, setupPool, `bench-node-${base + i}`);
      });
      progress(`created ${add} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      // Spread the new agents' first renewals over one interval, as agents started at random times would be.
      for (const l of created) {
        const a = new SimAgent(l, target, pool, record);
        a.start(Math.random() * RENEW_MS);
        agents.push(a);
      }
    }
    log = [];
    const cpu0 = procCpuSeconds(serverPid);
    const bench0 = process.cpuUsage();
    const t0 = performance.now();
    progress(`step ${n} nodes: measuring ${stepS} s`);
    await sleep(stepS * 1000);
    const seconds = (performance.now() - t0) / 1000;
    const cpu = procCpuSeconds(serverPid) - cpu0;
    const bu = process.cpuUsage(bench0);
    // Renewals sent in the window; wait for the last ones to answer (a miss needs at most 10 s more).
    const windowEnd = t0 + seconds * 1000;
    await sleep(Math.min(RENEW_MS, 2000));
    const inWindow = log.filter((r) => r.at >= t0 && r.at < windowEnd);
    const lat = inWindow.map((r) => r.ms).filter((x) => !Number.isNaN(x));
    const failed = inWindow.filter((r) => !r.ok).length;
    const over = inWindow.filter((r) => r.ok && r.ms > RENEW_MS).length;
    const step: StepResult = {
      nodes: n,
      seconds: round(seconds, 1),
      renewals: lat.length,
      renewals_per_second: round(lat.length / seconds, 1),
      expected_per_second: round(n / (RENEW_MS / 1000), 1),
      p50_ms: round(percentile(lat, 0.5)),
      p99_ms: round(percentile(lat, 0.99)),
      max_ms: round(Math.max(...lat)),
      failed,
      over_10s: over,
      missed: failed + over,
      server_cpu_percent_of_core: round((cpu / seconds) * 100, 1),
      server_rss_mb: round(procMemMb(serverPid, 'VmRSS'), 1),
      bench_cpu_percent_of_core: round(((bu.user + bu.system) / 1e6 / seconds) * 100, 1),
    };
    progress(`step ${n}: ${step.renewals_per_second}/s p50 ${step.p50_ms} ms p99 ${step.p99_ms} ms missed ${step.missed} server CPU ${step.server_cpu_percent_of_core}%`);
    results.push(step);
  }
  agents.forEach((a) => a.stop());
  await sleep(500);

  const nodeCount = await countNodesReady(target, setupPool);
  const sustained = results.filter((r) => r.missed === 0).reduce((m, r) => Math.max(m, r.nodes), 0);
  const firstMiss = results.find((r) => r.missed > 0)?.nodes ?? null;
  const at1000 = results.find((r) => r.nodes === 1000);
  if (loadBefore > 1.5) notes.push(`the machine was busy (1-minute load ${loadBefore.toFixed(2)} on ${cpus().length} cores before the run)`);
  notes.push('the load generator is this process on the same machine: bench_cpu_percent_of_core is what it took from the shared cores');
  return {
    benchmark: 'heartbeat-scale',
    machine: { cpus: cpus().length, cpu_model: cpus()[0]?.model ?? 'unknown', node: process.version, load_average_1m: { before: round(loadBefore), after: round(loadavg()[0]) } },
    renew_interval_seconds: RENEW_MS / 1000,
    pool_connections: POOL,
    step_seconds: stepS,
    steps: results,
    sustained_nodes_without_miss: sustained,
    first_step_with_miss: firstMiss,
    nodes_ready_at_end: nodeCount,
    goals: {
      nodes_1000_cpu_under_one_core: { target: '< 100 (% of a core at 1,000 nodes)', value: at1000?.server_cpu_percent_of_core ?? null, met: at1000 !== undefined && at1000.server_cpu_percent_of_core < 100 },
      nodes_1000_no_missed_renewals: { target: '0 missed at 1,000 nodes', value: at1000?.missed ?? null, met: at1000 !== undefined && at1000.missed === 0 },
    },
    notes,
  };
}

/** Creates the Node, marks it Ready through /status (as a registered agent would have), and creates its Lease owned by the Node. */
async function createNodeAndLease(target: Target, pool: Agent, name: string): Promise<Lease> {
  const r = await target.expect(pool, [201], 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'svc.io/hostname': name } } });
  const node = JSON.parse(r.text) as { metadata: { uid: string }; status?: object };
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const cond = (type: string, status: string, reason: string) => ({ type, status, reason, message: reason, lastHeartbeatTime: now, lastTransitionTime: now });
  await target.expect(pool, [200], 'PUT', `/api/v1/nodes/${name}/status`, {
    ...node,
    status: {
      conditions: [cond('MemoryPressure', 'False', 'AgentHasSufficientMemory'), cond('DiskPressure', 'False', 'AgentHasNoDiskPressure'), cond('PIDPressure', 'False', 'AgentHasSufficientPID'), cond('Ready', 'True', 'AgentReady')],
      capacity: { cpu: '2', memory: '4Gi', pods: '110' },
      allocatable: { cpu: '2', memory: '4Gi', pods: '110' },
    },
  });
  const lr = await target.expect(pool, [201], 'POST', `/apis/coordination.svc.io/v1/namespaces/${LEASE_NS}/leases`, {
    apiVersion: 'coordination.svc.io/v1',
    kind: 'Lease',
    metadata: { name, namespace: LEASE_NS, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name, uid: node.metadata.uid }] },
    spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: microTime(Date.now()) },
  });
  return JSON.parse(lr.text) as Lease;
}

/** How many bench nodes the server still reports Ready (the node lifecycle controller's view after the run). */
async function countNodesReady(target: Target, pool: Agent): Promise<{ total: number; ready: number }> {
  const r = await target.expect(pool, [200], 'GET', '/api/v1/nodes');
  const list = JSON.parse(r.text) as { items: { status?: { conditions?: { type: string; status: string }[] } }[] };
  return { total: list.items.length, ready: list.items.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length };
}

function argValue(args: readonly string[], flag: string): string | undefined {
  const i = args.indexOf(flag);
  return i < 0 ? undefined : args[i + 1];
}
