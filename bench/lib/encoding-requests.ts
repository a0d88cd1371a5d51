import { Agent, request, type Dispatcher } from 'undici';
import type { ObjectSchema } from '../../apiserver/api/schema';
import type { Encoding } from './encodings';
import { runClosedLoop, summarize, type LoadResult, type LoadRun } from './load';
import { procCpuSeconds } from './proc-cpu';
import { progress } from './progress';
import { round } from './stats';
import type { Target } from './target';

/** One request in one encoding: the answer's status and raw bytes (never decoded here). */
export async function sendIn(
  target: Target,
  enc: Encoding,
  dispatcher: Dispatcher,
  method: Dispatcher.HttpMethod,
  path: string,
  body?: string | Buffer,
): Promise<{ status: number; bytes: Buffer }> {
  const headers: Record<string, string> = { accept: enc.mediaType };
  if (body !== undefined) headers['content-type'] = enc.mediaType;
  const res = await request(target.origin + path, { method, dispatcher, headers, body });
  return { status: res.statusCode, bytes: Buffer.from(await res.body.arrayBuffer()) };
}

/** Like sendIn, but throws unless the status is one of ok. */
export async function expectIn(
  target: Target,
  enc: Encoding,
  dispatcher: Dispatcher,
  ok: readonly number[],
  method: Dispatcher.HttpMethod,
  path: string,
  body?: string | Buffer,
): Promise<Buffer> {
  const r = await sendIn(target, enc, dispatcher, method, path, body);
  if (!ok.includes(r.status)) throw new Error(`${enc.name}: ${method} ${path} answered ${r.status}: ${r.bytes.toString('utf8', 0, 300)}`);
  return r.bytes;
}

export interface EncodingFigures extends LoadResult {
  /** Server CPU (user + system) per request over this encoding's parts, ms. */
  server_cpu_ms_per_request: number;
  /** The same per part, in run order (paired with the other encoding's part of the same round). */
  server_cpu_ms_per_request_parts: number[];
  /** This process's CPU per request (the client's encoding and reading included), ms. */
  client_cpu_ms_per_request: number;
  /** Size of one answer, bytes. */
  answer_bytes: number;
}

export interface EncodingPlan {
  namespace: string;
  schema: ObjectSchema;
  /** The object of the i-th create (a fresh name per call). */
  object(name: string): Record<string, unknown>;
  warmupCreates: number;
  warmupGets: number;
  createClients: number;
  getClients: number;
  /** Requests per part, per encoding. */
  createsPerPart: number;
  getsPerPart: number;
  /** Parts per encoding; each round runs every encoding once, the order alternating (A B B A …). */
  parts: number;
}

interface Acc {
  load: LoadRun[];
  serverCpu: number;
  clientCpu: number;
  cpuParts: number[];
  bytes: number;
}

/**
 * Creates and then gets of one small kind in several encodings against one server, each encoding
 * on its own keep-alive pool of TLS connections, parts interleaved A-B-B-A so that other work on
 * the shared machine skews every encoding alike. Each encoding creates its own objects (names
 * prefixed by the encoding) and gets them back. Every answer must be 201 / 200.
 */
export async function compareEncodings(
  target: Target,
  serverPid: number,
  encodings: readonly Encoding[],
  plan: EncodingPlan,
): Promise<{ creates: Record<string, EncodingFigures>; gets: Record<string, EncodingFigures> }> {
  const collection = `/api/v1/namespaces/${plan.namespace}/configmaps`;
  const pools = new Map<string, { creates: Agent; gets: Agent }>(encodings.map((e) => [e.name, { creates: target.pool(plan.createClients), gets: target.pool(plan.getClients) }]));
  const created = new Map<string, number>(encodings.map((e) => [e.name, 0]));
  const create = (e: Encoding, acc?: Acc) => async (i: number) => {
    const n = created.get(e.name)! + i;
    const bytes = await expectIn(target, e, pools.get(e.name)!.creates, [201], 'POST', collection, e.body(plan.schema, plan.object(`${e.name}-${n}`)));
    if (acc) acc.bytes = bytes.length;
  };
  const get = (e: Encoding, part: number, acc?: Acc) => async (i: number) => {
    const name = `${e.name}-${((part * plan.getsPerPart + i) * 7919) % created.get(e.name)!}`;
    const bytes = await expectIn(target, e, pools.get(e.name)!.gets, [200], 'GET', `${collection}/${name}`);
    if (acc) acc.bytes = bytes.length;
  };
  const fresh = (): Map<string, Acc> => new Map(encodings.map((e) => [e.name, { load: [], serverCpu: 0, clientCpu: 0, cpuParts: [], bytes: 0 }]));
  const accs = { creates: fresh(), gets: fresh() };
  try {
    // Warm-up: JIT of both codecs, TLS sessions of every pool, the objects the warm-up gets read.
    for (const e of encodings) {
      await runClosedLoop(plan.createClients, plan.warmupCreates, create(e));
      created.set(e.name, plan.warmupCreates);
      await runClosedLoop(plan.getClients, plan.warmupGets, get(e, 0));
    }
    for (const phase of ['creates', 'gets'] as const) {
      for (let part = 0; part < plan.parts; part++) {
        const order = part % 2 === 0 ? encodings : [...encodings].reverse();
        for (const e of order) {
          const acc = accs[phase].get(e.name)!;
          const count = phase === 'creates' ? plan.createsPerPart : plan.getsPerPart;
          const s0 = procCpuSeconds(serverPid);
          const c0 = process.cpuUsage();
          const r = await runClosedLoop(phase === 'creates' ? plan.createClients : plan.getClients, count, phase === 'creates' ? create(e, acc) : get(e, part, acc));
          const c = process.cpuUsage(c0);
          const cpu = procCpuSeconds(serverPid) - s0;
          if (phase === 'creates') created.set(e.name, created.get(e.name)! + count);
          acc.load.push(r);
          acc.serverCpu += cpu;
          acc.cpuParts.push(round((cpu * 1000) / count, 4));
          acc.clientCpu += (c.user + c.system) / 1e6;
          const s = summarize([r]);
          progress(`${e.name}: ${phase} part ${part + 1}/${plan.parts}: ${s.per_second}/s, p50 ${s.p50_ms} ms, p99 ${s.p99_ms} ms, server ${round((cpu * 1000) / count, 3)} ms CPU/request`);
        }
      }
    }
  } finally {
    await Promise.all([...pools.values()].flatMap((p) => [p.creates.close(), p.gets.close()]));
  }
  const figures = (m: Map<string, Acc>): Record<string, EncodingFigures> => {
    const out: Record<string, EncodingFigures> = {};
    for (const [name, acc] of m) {
      const load = summarize(acc.load);
      out[name] = {
        ...load,
        server_cpu_ms_per_request: round((acc.serverCpu * 1000) / load.count, 4),
        server_cpu_ms_per_request_parts: acc.cpuParts,
        client_cpu_ms_per_request: round((acc.clientCpu * 1000) / load.count, 4),
        answer_bytes: acc.bytes,
      };
    }
    return out;
  };
  return { creates: figures(accs.creates), gets: figures(accs.gets) };
}

/**
 * The median over parts of one encoding's server CPU per request divided by the baseline's in the
 * same round (the two ran seconds apart): robust to the odd part another tenant's burst inflated.
 */
export function pairedCpuRatio(x: EncodingFigures, baseline: EncodingFigures): number | null {
  const ratios = x.server_cpu_ms_per_request_parts.map((c, i) => c / (baseline.server_cpu_ms_per_request_parts[i] ?? 0));
  if (ratios.length === 0 || ratios.some((r) => !Number.isFinite(r))) return null;
  ratios.sort((a, b) => a - b);
  const mid = ratios.length >> 1;
  return round(ratios.length % 2 ? ratios[mid] : (ratios[mid - 1] + ratios[mid]) / 2, 3);
}
