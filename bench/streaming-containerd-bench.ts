import { readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { GrpcRuntimeService } from '../agent/cri/grpc-client';
import type { Containerd } from '../test/helpers/containerd';
import { startContainerdNode } from '../test/helpers/containerd-node';
import { runPod } from '../test/e2e/checkpoint/checkpoint-env';
import type { Cleanup } from './lib/cleanup';
import { nodePidBehind, procWithChildrenCpuSeconds } from './lib/proc-cpu';
import { progress } from './lib/progress';
import { percentile, round } from './lib/stats';
import { EXEC_BLOCK, execOnce, GOAL_EXEC_RATIO, numberArg, perOp, withCpu, type Cpu, type Pids, type Tls } from './streaming-bench';

const NODE = 'bench-stream-ctrd';
const POD = 'shell';
/** containerd 1.6's stream server speaks WebSocket up to v4 (no v5): both paths use v4. */
const PROTOCOL = 'v4.channel.k8s.io';

/**
 * This containerd and its shims (found by the socket they serve): their CPU, with that of the runc
 * processes the shims ran and waited for, is the runtime's share of an exec (context for the 2
 * cores the through path's three Node processes share with it).
 */
function runtimePids(ctrd: Containerd): number[] {
  const shims = readdirSync('/proc').filter((d) => {
    if (!/^\d+$/.test(d)) return false;
    try {
      return readFileSync(`/proc/${d}/comm`, 'utf8').startsWith('containerd-shim') && readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(ctrd.socket);
    } catch {
      return false; // exited meanwhile
    }
  });
  return [ctrd.pid, ...shims.map(Number)];
}

/**
 * `npm run bench -- streaming-containerd [--iterations N]`: issue 21's exec goal with its literal
 * baseline on a real runtime: `exec -- true` round trips through svc-apiserver and svc-node to
 * containerd over WebSocket v4 (forwarded by the agent to containerd's stream server as it came)
 * and v5 (kubectl 1.30+'s, which the agent translates to SPDY), against the runtime's own stream
 * URL called directly (a CRI Exec on containerd's socket for the single-use URL, then the same v4
 * exec to it, plain HTTP as containerd serves it), in blocks of 10 per path. All include runc's exec; the
 * simulator's figure (`streaming`) is the stricter one, its baseline being the agent's own /exec.
 * Needs root and containerd (Debian's), as the containerd e2e tests.
 */
export async function runStreamingContainerdBench(args: readonly string[], cleanup: Cleanup): Promise<object> {
  // 100 a path (40 before session 12): runc's exec makes single execs vary by tens of percent.
  const iterations = numberArg(args, '--iterations', 100);
  progress('starting containerd, svc-apiserver and svc-node');
  const node = await startContainerdNode({ nodeName: NODE, args: ['--node-ip=127.0.0.1'], configLines: ['address: 127.0.0.1'] });
  cleanup.add('stop containerd, svc-apiserver and svc-node', () => node.stop());
  await runPod(node.api, NODE, POD, node.ctrd.image);
  const cri = new GrpcRuntimeService(node.ctrd.endpoint, node.ctrd.endpoint, { timeoutMs: 30_000 });
  cleanup.add('close the CRI client', () => Promise.resolve(cri.close()));
  const [container] = await cri.listContainers({ labelSelector: { 'io.kubernetes.pod.name': POD, 'io.kubernetes.container.name': 'app' } });
  if (!container) throw new Error(`no container of pod ${POD} on containerd`);
  const pki = join(node.api.dataDir, 'pki');
  const admin: Tls = { ca: node.api.caPem, cert: readFileSync(join(pki, 'admin.crt')), key: readFileSync(join(pki, 'admin.key')) };
  const viaApi = `wss://127.0.0.1:${node.api.port}/api/v1/namespaces/default/pods/${POD}/exec?command=true`;
  const direct = async (): Promise<number> => {
    const started = performance.now();
    const url = await cri.exec({ containerId: container.id, cmd: ['true'], stdin: false, stdout: true, stderr: true, tty: false });
    await execOnce(url.replace(/^http/, 'ws'), admin, PROTOCOL);
    return performance.now() - started;
  };
  const pids: Pids = { bench_client: process.pid, apiserver: nodePidBehind(node.api.proc.pid!), agent: nodePidBehind(node.agent.proc.pid!) };
  progress(`exec round trips: ${iterations} each, in blocks of ${EXEC_BLOCK}`);
  // v4: what containerd serves itself, forwarded by the agent as it came; v5: kubectl 1.30+'s,
  // which the agent translates to SPDY for containerd 1.6.
  const paths = {
    through_v4: () => execOnce(viaApi, admin, PROTOCOL),
    through_v5: () => execOnce(viaApi, admin, 'v5.channel.k8s.io'),
    direct: direct,
  };
  type Path = keyof typeof paths;
  const names = Object.keys(paths) as Path[];
  for (let i = 0; i < 3; i++) for (const p of names) await paths[p]();
  const times: Record<Path, number[]> = { through_v4: [], through_v5: [], direct: [] };
  const cpu: Record<Path, Cpu> = { through_v4: {}, through_v5: {}, direct: {} };
  const runtime = runtimePids(node.ctrd);
  const runtimeCpu = () => runtime.reduce((sum, pid) => sum + procWithChildrenCpuSeconds(pid), 0);
  const runtimeSpent: Record<Path, number> = { through_v4: 0, through_v5: 0, direct: 0 };
  // Blocks of EXEC_BLOCK per path, the order reversed every round (A-B-C-C-B-A).
  for (let done = 0, r = 0; done < iterations; r++) {
    const n = Math.min(EXEC_BLOCK, iterations - done);
    for (const p of r % 2 === 0 ? names : [...names].reverse()) {
      for (let i = 0; i < n; i++) {
        const before = runtimeCpu();
        times[p].push(await withCpu(pids, cpu[p], paths[p]));
        runtimeSpent[p] += runtimeCpu() - before;
      }
    }
    done += n;
  }
  // Stopped gently first (its pods stay), so a profiler preloaded into it can write its profile.
  await node.agent.stop('SIGTERM');
  const med = (xs: number[]) => percentile(xs, 0.5);
  const figures = (p: Path) => ({ p50_ms: round(med(times[p])), p99_ms: round(percentile(times[p], 0.99)), n: times[p].length, cpu_ms_per_exec: perOp(cpu[p], times[p].length, 1000), containerd_and_runc_cpu_ms_per_exec: round((runtimeSpent[p] * 1000) / times[p].length) });
  const v4 = med(times.through_v4) / med(times.direct);
  const v5 = med(times.through_v5) / med(times.direct);
  return {
    machine: { cpus: cpus().length, loadavg: loadavg().map((l) => round(l)) },
    exec_round_trip: {
      through_apiserver_and_agent_v4: figures('through_v4'),
      through_apiserver_and_agent_v5_translated: figures('through_v5'),
      baseline_runtime_stream_url_v4: figures('direct'),
      ratio_p50_v4: round(v4),
      ratio_p50_v5: round(v5),
      goal_ratio_at_most: GOAL_EXEC_RATIO,
      goal_met_v4: v4 <= GOAL_EXEC_RATIO,
      goal_met_v5: v5 <= GOAL_EXEC_RATIO,
    },
  };
}
