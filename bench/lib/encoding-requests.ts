import { Agent, request, type Dispatcher } from 'undici';
import type { ObjectSchema } from '../../apiserver/api/schema';
import type { Encoding } from './encodings';
import { runClosedLoop, summarize, type LoadResult, type LoadRun } from './load';
import { procCpuPrecise } from './proc-cpu';
import { progress } from './progress';
import { median, percentile, round } from './stats';
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

/** Each encoding's warm-up creates run in this many slices, the encodings alternating. */
const WARMUP_SLICES = 4;

/** The request phases compared, in the order each round runs them. */
export const PHASES = ['creates', 'gets', 'first_gets'] as const;
export type Phase = (typeof PHASES)[number];

export interface EncodingFigures extends LoadResult {
  /** Server CPU (user + system, all threads, ns precision) per request: the median over parts, ms. */
  server_cpu_ms_per_request: number;
  /** The same per part, in round order (paired with the other encoding's part of the same round). */
  server_cpu_ms_per_request_parts: number[];
  /** Each part's rate, median over parts. */
  median_per_second: number;
  /** This process's CPU per request while the part ran (sending and reading; not the bodies' encoding, see client_encode_ms_per_request), ms. */
  client_cpu_ms_per_request: number;
  /**
   * Creates: this process's CPU per request body encoded, ms. The bodies of a measured part are
   * encoded before it (svc's JavaScript protobuf encoder, or JSON.stringify), so that this cost of
   * the client does not take the shared cores from the server while the part runs.
   */
  client_encode_ms_per_request?: number;
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
  firstGetsPerPart: number;
  /** Rounds; each runs every phase once per encoding, the encodings' order alternating (A B, B A, …). */
  rounds: number;
}

interface Acc {
  load: LoadRun[];
  clientCpu: number;
  encodeCpu: number;
  cpuParts: number[];
  bytes: number;
}

/** The spread of one ratio over rounds: quartiles by nearest rank, and every round's value. */
export interface RatioSpread {
  median: number;
  min: number;
  p25: number;
  p75: number;
  max: number;
  rounds: number[];
}

/**
 * Creates and gets of one small kind in several encodings against one server, rounds interleaved
 * so that other work on the shared machine skews every encoding alike: each round runs creates,
 * gets and first gets, every encoding once each, on its own keep-alive pool of TLS connections.
 * - creates: each encoding creates its own objects (names prefixed by the encoding);
 * - gets: each encoding reads back the objects it created (in protobuf, versions whose message the
 *   create's answer left in the server's cache of encoded versions);
 * - first_gets: objects a JSON client created before the rounds, each read once, by one encoding
 *   only (in protobuf, each read decodes the stored version and encodes it: the cache's misses).
 * Server CPU is read from /proc (every thread, to the nanosecond) around each part. Every answer
 * must be 201 / 200.
 */
export async function compareEncodings(
  target: Target,
  serverPid: number,
  encodings: readonly Encoding[],
  plan: EncodingPlan,
): Promise<Record<Phase, Record<string, EncodingFigures>>> {
  const collection = `/api/v1/namespaces/${plan.namespace}/configmaps`;
  const pools = new Map<string, { creates: Agent; gets: Agent }>(encodings.map((e) => [e.name, { creates: target.pool(plan.createClients), gets: target.pool(plan.getClients) }]));
  const created = new Map<string, number>(encodings.map((e) => [e.name, 0]));
  const seeds = plan.rounds * plan.firstGetsPerPart * encodings.length;
  let seedsRead = 0;
  const seedWriter = encodings.find((e) => e.name === 'json') ?? encodings[0];
  const ops = (e: Encoding, phase: Phase | 'seed', part: number, acc?: Acc, bodies?: ReadonlyArray<string | Buffer>) => {
    const pool = pools.get(e.name)!;
    const note = (bytes: Buffer) => {
      if (acc) acc.bytes = bytes.length;
    };
    if (phase === 'creates' || phase === 'seed') {
      const prefix = phase === 'seed' ? 'seed' : e.name;
      const from = phase === 'seed' ? 0 : created.get(e.name)!;
      return async (i: number) => note(await expectIn(target, e, pool.creates, [201], 'POST', collection, bodies?.[i] ?? e.body(plan.schema, plan.object(`${prefix}-${from + i}`))));
    }
    if (phase === 'gets') {
      const n = created.get(e.name)!;
      return async (i: number) => note(await expectIn(target, e, pool.gets, [200], 'GET', `${collection}/${e.name}-${((part * plan.getsPerPart + i) * 7919) % n}`));
    }
    const from = seedsRead;
    seedsRead += plan.firstGetsPerPart;
    return async (i: number) => note(await expectIn(target, e, pool.gets, [200], 'GET', `${collection}/seed-${from + i}`));
  };
  const fresh = (): Map<string, Acc> => new Map(encodings.map((e) => [e.name, { load: [], clientCpu: 0, encodeCpu: 0, cpuParts: [], bytes: 0 }]));
  const accs = { creates: fresh(), gets: fresh(), first_gets: fresh() };
  const counts = { creates: plan.createsPerPart, gets: plan.getsPerPart, first_gets: plan.firstGetsPerPart };
  try {
    // The objects of the first gets, written by a JSON client; then the warm-up: TLS sessions of
    // every pool, the objects the warm-up gets read, and V8's optimized code of both encodings'
    // paths. The seeds are JSON creates, so they warm JSON's path (and the shared one) with
    // thousands of requests: with a warm-up of 400 creates each, V8 (--trace-opt) first
    // optimized the protobuf decoder, encoder and cache functions during the first measured
    // rounds, whose protobuf creates then cost 10-67% more server CPU than JSON's. Each encoding's
    // warm-up creates run in WARMUP_SLICES alternating slices, so both end equally warm.
    progress(`writing ${seeds} objects for the first gets`);
    await runClosedLoop(plan.createClients, seeds, ops(seedWriter, 'seed', 0));
    // Gets are in every slice too: a protobuf get answers stand-ins of cached versions, objects of
    // another shape than a create's answer, and the first ones deoptimized the code a create's
    // answer had been optimized to (encoded-cache.ts writeVersion), which V8 optimized again only
    // two rounds later when all gets came after all creates.
    const slice = Math.ceil(plan.warmupCreates / WARMUP_SLICES);
    const getSlice = Math.ceil(plan.warmupGets / WARMUP_SLICES);
    for (let s = 0; s < WARMUP_SLICES; s++) {
      for (const e of encodings) {
        await runClosedLoop(plan.createClients, slice, ops(e, 'creates', 0));
        created.set(e.name, created.get(e.name)! + slice);
        await runClosedLoop(plan.getClients, getSlice, ops(e, 'gets', 0));
      }
    }
    for (let round = 0; round < plan.rounds; round++) {
      const order = round % 2 === 0 ? encodings : [...encodings].reverse();
      for (const phase of PHASES) {
        for (const e of order) {
          const acc = accs[phase].get(e.name)!;
          const count = counts[phase];
          const op = ops(e, phase, round, acc, phase === 'creates' ? encodeBodies(e, plan, created.get(e.name)!, count, acc) : undefined);
          const s0 = procCpuPrecise(serverPid);
          const c0 = process.cpuUsage();
          const r = await runClosedLoop(phase === 'creates' ? plan.createClients : plan.getClients, count, op);
          const c = process.cpuUsage(c0);
          const cpu = procCpuPrecise(serverPid) - s0;
          if (phase === 'creates') created.set(e.name, created.get(e.name)! + count);
          acc.load.push(r);
          acc.cpuParts.push(round4((cpu * 1000) / count));
          acc.clientCpu += (c.user + c.system) / 1e6;
          const s = summarize([r]);
          progress(`round ${round + 1}/${plan.rounds} ${e.name} ${phase}: ${s.per_second}/s, p50 ${s.p50_ms} ms, p99 ${s.p99_ms} ms, server ${round4((cpu * 1000) / count)} ms CPU/request`);
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
        median_per_second: round(median(acc.load.map((r) => r.count / r.seconds)), 0),
        server_cpu_ms_per_request: round4(median(acc.cpuParts)),
        server_cpu_ms_per_request_parts: acc.cpuParts,
        client_cpu_ms_per_request: round4((acc.clientCpu * 1000) / load.count),
        ...(acc.encodeCpu > 0 ? { client_encode_ms_per_request: round4((acc.encodeCpu * 1000) / load.count) } : {}),
        answer_bytes: acc.bytes,
      };
    }
    return out;
  };
  return { creates: figures(accs.creates), gets: figures(accs.gets), first_gets: figures(accs.first_gets) };
}

/** The bodies of count creates in encoding e from name number `from` on, encoded now; their CPU goes to acc. */
function encodeBodies(e: Encoding, plan: EncodingPlan, from: number, count: number, acc: Acc): Array<string | Buffer> {
  const c0 = process.cpuUsage();
  const bodies = Array.from({ length: count }, (_, i) => e.body(plan.schema, plan.object(`${e.name}-${from + i}`)));
  const c = process.cpuUsage(c0);
  acc.encodeCpu += (c.user + c.system) / 1e6;
  return bodies;
}

function round4(x: number): number {
  return round(x, 4);
}

/** The spread of per-round ratios x[i] / baseline[i] (the two ran seconds apart in the same round); null when a ratio cannot be formed. */
export function pairedSpread(x: readonly number[], baseline: readonly number[]): RatioSpread | null {
  const ratios = x.map((v, i) => v / (baseline[i] ?? 0));
  if (ratios.length === 0 || ratios.some((r) => !Number.isFinite(r))) return null;
  const r3 = (v: number) => round(v, 3);
  return {
    median: r3(middle(ratios)),
    min: r3(Math.min(...ratios)),
    p25: r3(percentile(ratios, 0.25)),
    p75: r3(percentile(ratios, 0.75)),
    max: r3(Math.max(...ratios)),
    rounds: ratios.map(r3),
  };
}

/** The median, averaging the two middle values of an even count. */
function middle(sample: readonly number[]): number {
  const s = [...sample].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Per-round ratios of throughput (parts' rates) and of server CPU per request, x against baseline. */
export function pairedRatios(x: EncodingFigures, baseline: EncodingFigures): { per_second: RatioSpread | null; server_cpu: RatioSpread | null } {
  return {
    per_second: pairedSpread(x.runs_per_second ?? [x.per_second], baseline.runs_per_second ?? [baseline.per_second]),
    server_cpu: pairedSpread(x.server_cpu_ms_per_request_parts, baseline.server_cpu_ms_per_request_parts),
  };
}
