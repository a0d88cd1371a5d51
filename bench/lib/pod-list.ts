import { performance } from 'node:perf_hooks';
import { runClosedLoop, summarize, type LoadResult } from './load';
import { progress } from './progress';
import { median, round } from './stats';
import { ensureNamespace } from './http-figures';
import type { Target } from './target';

export interface ListFigures {
  pods: number;
  /** Filling the namespace through the API (not a goal, but it shows sustained create speed). */
  create: LoadResult;
  /** One GET of the whole collection, body received and parsed; median of `runs`. */
  whole_list_ms: number;
  whole_list_bytes: number;
  /** limit=<chunk> then continue until done, every chunk received and parsed; median of `runs`. */
  chunked_walk_ms: number;
  chunk_limit: number;
  chunks: number;
  runs: number;
}

export interface ListPlan {
  namespace: string;
  pods: number;
  createClients: number;
  chunkLimit: number;
  runs: number;
}

/**
 * A small pod: one container, the fields a real client would send. It names a scheduler that does
 * not exist, so the built-in scheduler leaves it alone: otherwise it writes a PodScheduled=False
 * status to each of the 10,000 pods (there are no nodes) while they are being created and listed,
 * and the figures would be the scheduler's as much as the list path's.
 */
export function pod(name: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'bench' } },
    spec: { schedulerName: 'bench-unscheduled', containers: [{ name: 'app', image: 'registry.example/bench/app:1.0' }] },
  };
}

interface PodListBody {
  items?: unknown[];
  metadata?: { continue?: string };
}

/** Creates plan.pods pods (JSON) in plan.namespace with plan.createClients clients: how long it took. */
export async function fillPods(target: Target, plan: Pick<ListPlan, 'namespace' | 'pods' | 'createClients'>): Promise<LoadResult> {
  const collection = `/api/v1/namespaces/${plan.namespace}/pods`;
  await ensureNamespace(target, plan.namespace);
  const writers = target.pool(plan.createClients);
  let create: LoadResult;
  try {
    create = summarize([
      await runClosedLoop(plan.createClients, plan.pods, async (i) => {
        await target.expect(writers, [201], 'POST', collection, pod(`pod-${i}`));
      }),
    ]);
  } finally {
    await writers.close();
  }
  progress(`${target.name}: ${plan.pods} pods created in ${create.seconds}s (${create.per_second}/s)`);
  return create;
}

/** Fills a namespace with pods, then times whole lists and chunked walks of it. */
export async function measurePodList(target: Target, plan: ListPlan): Promise<ListFigures> {
  const collection = `/api/v1/namespaces/${plan.namespace}/pods`;
  const create = await fillPods(target, plan);

  const agent = target.pool(1);
  try {
    const whole: number[] = [];
    let bytes = 0;
    for (let r = 0; r < plan.runs; r++) {
      const t0 = performance.now();
      const res = await target.expect(agent, [200], 'GET', collection);
      const body = JSON.parse(res.text) as PodListBody;
      whole.push(performance.now() - t0);
      bytes = Buffer.byteLength(res.text);
      if (body.items?.length !== plan.pods) throw new Error(`${target.name}: list returned ${body.items?.length} pods, not ${plan.pods}`);
    }
    progress(`${target.name}: whole list of ${plan.pods} pods ${whole.map((x) => x.toFixed(0)).join('/')} ms`);

    const walks: number[] = [];
    let chunks = 0;
    for (let r = 0; r < plan.runs; r++) {
      const t0 = performance.now();
      let seen = 0;
      let token = '';
      chunks = 0;
      do {
        const q = `limit=${plan.chunkLimit}${token ? `&continue=${encodeURIComponent(token)}` : ''}`;
        const body = JSON.parse((await target.expect(agent, [200], 'GET', `${collection}?${q}`)).text) as PodListBody;
        seen += body.items?.length ?? 0;
        token = body.metadata?.continue ?? '';
        chunks++;
      } while (token !== '');
      walks.push(performance.now() - t0);
      if (seen !== plan.pods) throw new Error(`${target.name}: chunked walk returned ${seen} pods, not ${plan.pods}`);
    }
    progress(`${target.name}: chunked walk (limit ${plan.chunkLimit}) ${walks.map((x) => x.toFixed(0)).join('/')} ms`);
    return {
      pods: plan.pods,
      create,
      whole_list_ms: round(median(whole), 1),
      whole_list_bytes: bytes,
      chunked_walk_ms: round(median(walks), 1),
      chunk_limit: plan.chunkLimit,
      chunks,
      runs: plan.runs,
    };
  } finally {
    await agent.close();
  }
}
