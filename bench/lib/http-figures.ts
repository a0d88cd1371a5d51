import { runClosedLoop, type LoadResult } from './load';
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

/** Creates/s, gets/s and get latency against one target, after a warm-up, with the same request code for every target. */
export async function measureRequests(target: Target, plan: RequestPlan): Promise<RequestFigures> {
  const ns = plan.namespace;
  const collection = `/api/v1/namespaces/${ns}/configmaps`;
  await ensureNamespace(target, ns);

  const writers = target.pool(plan.createClients);
  let objectBytes = 0;
  let creates: LoadResult;
  try {
    await runClosedLoop(plan.createClients, plan.warmupCreates, async (i) => {
      await target.expect(writers, [201], 'POST', collection, configMap(`warm-${i}`));
    });
    creates = await runClosedLoop(plan.createClients, plan.creates, async (i) => {
      const r = await target.expect(writers, [201], 'POST', collection, configMap(`cm-${i}`));
      if (i === 0) objectBytes = Buffer.byteLength(r.text);
    });
  } finally {
    await writers.close();
  }
  progress(`${target.name}: ${creates.per_second} creates/s with ${creates.clients} clients`);

  const getOne = (dispatcher: ReturnType<Target['pool']>) => async (i: number) => {
    await target.expect(dispatcher, [200], 'GET', `${collection}/cm-${(i * 7919) % plan.creates}`);
  };
  const readers = target.pool(plan.getClients);
  let gets: LoadResult;
  try {
    await runClosedLoop(plan.getClients, plan.warmupGets, getOne(readers));
    gets = await runClosedLoop(plan.getClients, plan.gets, getOne(readers));
  } finally {
    await readers.close();
  }
  progress(`${target.name}: ${gets.per_second} gets/s with ${gets.clients} clients`);

  const few = target.pool(plan.latencyClients);
  let latency: LoadResult;
  try {
    await runClosedLoop(plan.latencyClients, plan.warmupGets, getOne(few));
    latency = await runClosedLoop(plan.latencyClients, plan.latencyGets, getOne(few));
  } finally {
    await few.close();
  }
  progress(`${target.name}: get p50 ${latency.p50_ms} ms, p99 ${latency.p99_ms} ms with ${latency.clients} clients`);
  return { creates, gets, get_latency: latency, object_bytes: objectBytes };
}
