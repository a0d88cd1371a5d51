import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { runClosedLoop, summarize, type LoadResult, type LoadRun } from './load';
import { procCpuSeconds } from './proc-cpu';
import { progress } from './progress';
import { round } from './stats';

/**
 * One way of sending the same request: which server (origin and pid), which TLS client identity
 * and which headers. The authn and authz benches compare several of these on one request path, so
 * the only difference between their figures is what the mode makes the server do.
 */
export interface Mode {
  name: string;
  origin: string;
  /** The server process answering, for its CPU time. */
  serverPid: number;
  tls: { ca: string; cert?: string; key?: string; servername: string };
  headers: Record<string, string>;
}

export interface ModePlan {
  /** Request path, e.g. /api/v1/namespaces/default. */
  path: string;
  clients: number;
  warmup: number;
  /** Requests per part. */
  perPart: number;
  /** Parts per mode; the order alternates forwards and backwards (A B C C B A ...). */
  parts: number;
}

export interface ModeFigures extends LoadResult {
  /** Server CPU (user + system) per request over this mode's parts, ms. */
  server_cpu_ms_per_request: number;
  /** The same for each part on its own, in run order (for paired comparisons; see pairedMedianRatio). */
  server_cpu_ms_per_request_parts: number[];
  /** This (client) process's CPU per request over this mode's parts, ms. */
  client_cpu_ms_per_request: number;
  /** Server and client CPU as a share of one core while this mode ran: near 100 means that side was saturated. */
  server_cpu_percent_of_core: number;
  client_cpu_percent_of_core: number;
}

/**
 * Runs closed-loop GETs of one path for each mode, parts interleaved A-B-C-C-B-A so that other work
 * on the shared machine skews every mode alike. Each mode keeps its own pool of `clients`
 * keep-alive TLS connections for the whole run (handshakes happen in the warm-up, not per request).
 * Every answer must be 200, or the run fails.
 */
export async function compareModes(modes: readonly Mode[], plan: ModePlan): Promise<Record<string, ModeFigures>> {
  const pools = new Map<string, Agent>();
  for (const m of modes) {
    pools.set(
      m.name,
      new Agent({ connections: plan.clients, pipelining: 1, keepAliveTimeout: 120_000, connect: { ca: m.tls.ca, cert: m.tls.cert, key: m.tls.key, servername: m.tls.servername } }),
    );
  }
  const runs = new Map<string, { load: LoadRun[]; serverCpu: number; clientCpu: number; cpuParts: number[] }>(modes.map((m) => [m.name, { load: [], serverCpu: 0, clientCpu: 0, cpuParts: [] }]));
  const once = (m: Mode) => async () => {
    const res = await request(m.origin + plan.path, { dispatcher: pools.get(m.name)!, headers: { accept: 'application/json', ...m.headers } });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`${m.name}: GET ${plan.path} answered ${res.statusCode}: ${text.slice(0, 300)}`);
  };
  try {
    for (const m of modes) await runClosedLoop(plan.clients, plan.warmup, once(m));
    for (let part = 0; part < plan.parts; part++) {
      const order = part % 2 === 0 ? modes : [...modes].reverse();
      for (const m of order) {
        const s0 = procCpuSeconds(m.serverPid);
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        const r = await runClosedLoop(plan.clients, plan.perPart, once(m));
        const wall = (performance.now() - t0) / 1000;
        const c = process.cpuUsage(c0);
        const acc = runs.get(m.name)!;
        acc.load.push(r);
        const partCpu = procCpuSeconds(m.serverPid) - s0;
        acc.serverCpu += partCpu;
        acc.cpuParts.push(round((partCpu * 1000) / r.count, 4));
        acc.clientCpu += (c.user + c.system) / 1e6;
        const s = summarize([r]);
        progress(`${m.name}: part ${part + 1}/${plan.parts}: ${s.per_second}/s, p50 ${s.p50_ms} ms, p99 ${s.p99_ms} ms (${wall.toFixed(1)} s)`);
      }
    }
  } finally {
    await Promise.all([...pools.values()].map((p) => p.close()));
  }
  const out: Record<string, ModeFigures> = {};
  for (const m of modes) {
    const acc = runs.get(m.name)!;
    const load = summarize(acc.load);
    out[m.name] = {
      ...load,
      server_cpu_ms_per_request: round((acc.serverCpu * 1000) / load.count, 4),
      server_cpu_ms_per_request_parts: acc.cpuParts,
      client_cpu_ms_per_request: round((acc.clientCpu * 1000) / load.count, 4),
      server_cpu_percent_of_core: round((acc.serverCpu / load.seconds) * 100, 1),
      client_cpu_percent_of_core: round((acc.clientCpu / load.seconds) * 100, 1),
    };
  }
  return out;
}

/**
 * The median over parts of a mode's server CPU per request divided by the baseline's in the same
 * part. Parts of all modes run close together (A B C C B A ...), so each ratio compares two
 * stretches seconds apart; the median then ignores the odd part another tenant's burst of work
 * inflated, which moves the pooled ratio (server_cpu_ms_per_request) by several per cent on this
 * shared machine. Null when a part has no CPU figure.
 */
export function pairedMedianRatio(mode: ModeFigures, baseline: ModeFigures): number | null {
  const ratios = mode.server_cpu_ms_per_request_parts.map((c, i) => c / (baseline.server_cpu_ms_per_request_parts[i] ?? 0));
  if (ratios.length === 0 || ratios.some((r) => !Number.isFinite(r))) return null;
  ratios.sort((a, b) => a - b);
  const mid = ratios.length >> 1;
  return round(ratios.length % 2 ? ratios[mid] : (ratios[mid - 1] + ratios[mid]) / 2, 3);
}
