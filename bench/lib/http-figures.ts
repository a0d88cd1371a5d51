import type { Agent } from 'undici';
import { runClosedLoop, summarize, type LoadResult, type LoadRun } from './load';
import { progress } from './progress';
import type { Target } from './target';

export interface RequestFigures {
  /** POST of small ConfigMaps by concurrent clients. */
  creates: LoadResult;
  /** GET of those ConfigMaps by many concurrent clients (throughput). */
  gets: LoadResult;
  /** GET by a few concurrent clients (latency). */
  get_latency: LoadResult;
  /** Size of one created object as the server answered it (≈ what it stores). */
  object_bytes: number;
}

export interface RequestPlan {
  namespace: string;
  warmupCreates: number;
  warmupGets: number;
  createClients: number;
  /** Total creates, split evenly over the runs. */
  creates: number;
  getClients: number;
  gets: number;
  latencyClients: number;
  latencyGets: number;
}

/** A small (~200 bytes of JSON) ConfigMap. */
export function configMap(name: string): object {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, labels: { app: 'bench', tier: 'load' } },
    data: { 'config.yaml': 'mode: bench\nreplicas: 3\nlevel: info\n', token: 'b7f1c2d9e4a8f0b3c6d5e2a1f9c8b7d6' },
  };
}

/** Creates a namespace (or finds it already there). The floor server just stores it. */
export async function ensureNamespace(target: Target, name: string): Promise<void> {
  const agent = target.pool(1);
  try {
    await target.expect(agent, [200, 201, 409], 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  } finally {
    await agent.close();
  }
}

export type RequestPhase = 'creates' | 'gets' | 'get_latency';

/**
 * Creates/s, gets/s and get latency against one target, with the same request code for every
 * target. Each phase can run in several parts (`run(phase, part, parts)`), so that two targets'
 * parts can be interleaved; `figures()` pools the parts. Every phase of part p must run before
 * the gets of any part (gets read what the creates wrote).
 */
export class RequestBench {
  private readonly collection: string;
  private readonly runs: Record<RequestPhase, LoadRun[]> = { creates: [], gets: [], get_latency: [] };
  private readonly pools: Record<RequestPhase, Agent>;
  private objectBytes = 0;
  private created = 0;
  private closed = false;

  constructor(
    private readonly target: Target,
    private readonly plan: RequestPlan,
  ) {
    this.collection = `/api/v1/namespaces/${plan.namespace}/configmaps`;
    // One TLS connection per concurrent client, kept for the whole bench (warmed by the warm-up).
    this.pools = { creates: target.pool(plan.createClients), gets: target.pool(plan.getClients), get_latency: target.pool(plan.latencyClients) };
  }

  /** The namespace, then warm-up creates and gets on every connection pool (JIT, TLS sessions, caches). */
  async setup(): Promise<void> {
    const t = this.target;
    await ensureNamespace(t, this.plan.namespace);
    await runClosedLoop(this.plan.createClients, this.plan.warmupCreates, async (i) => {
      await t.expect(this.pools.creates, [201], 'POST', this.collection, configMap(`warm-${i}`));
    });
    const warm = (pool: Agent) => async (i: number) => {
      await t.expect(pool, [200], 'GET', `${this.collection}/warm-${i % this.plan.warmupCreates}`);
    };
    await runClosedLoop(this.plan.getClients, this.plan.warmupGets, warm(this.pools.gets));
    await runClosedLoop(this.plan.latencyClients, Math.ceil(this.plan.warmupGets / 4), warm(this.pools.get_latency));
  }

  /** Runs part `part` (0-based) of `parts` of one phase. */
  async run(phase: RequestPhase, part: number, parts: number): Promise<void> {
    const t = this.target;
    const p = this.plan;
    let r: LoadRun;
    if (phase === 'creates') {
      const n = Math.floor(p.creates / parts);
      const base = this.created;
      r = await runClosedLoop(p.createClients, n, async (i) => {
        const res = await t.expect(this.pools.creates, [201], 'POST', this.collection, configMap(`cm-${base + i}`));
        if (base + i === 0) this.objectBytes = Buffer.byteLength(res.text);
      });
      this.created += n;
    } else {
      const clients = phase === 'gets' ? p.getClients : p.latencyClients;
      const n = Math.floor((phase === 'gets' ? p.gets : p.latencyGets) / parts);
      const created = this.created;
      r = await runClosedLoop(clients, n, async (i) => {
        await t.expect(this.pools[phase], [200], 'GET', `${this.collection}/cm-${((part * n + i) * 7919) % created}`);
      });
    }
    this.runs[phase].push(r);
    const s = summarize([r]);
    progress(`${t.name}: ${phase} part ${part + 1}/${parts}: ${s.per_second}/s with ${s.clients} clients, p50 ${s.p50_ms} ms, p99 ${s.p99_ms} ms`);
  }

  /** The pooled figures of every part run so far. */
  figures(): RequestFigures {
    return {
      creates: summarize(this.runs.creates),
      gets: summarize(this.runs.gets),
      get_latency: summarize(this.runs.get_latency),
      object_bytes: this.objectBytes,
    };
  }

  /** Closes the connection pools; idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(Object.values(this.pools).map((a) => a.close()));
  }
}
