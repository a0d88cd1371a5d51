import { performance } from 'node:perf_hooks';
import type { ObjectSchema } from '../../apiserver/api/schema';
import type { Encoding } from './encodings';
import { expectIn } from './encoding-requests';
import { procCpuPrecise } from './proc-cpu';
import { progress } from './progress';
import { median, round } from './stats';
import type { Target } from './target';

export interface ListEncodingFigures {
  /** Send to the last byte of the answer (the server's rendering and the transfer), median of runs, ms. */
  served_ms: number;
  /** The client reading the answer into objects (JSON.parse, or svc's protobuf decoder), median, ms. */
  client_decode_ms: number;
  /** served + decode of each run, median, ms. */
  whole_list_ms: number;
  /** Server CPU (user + system) spent while the request ran, median, ms. */
  server_cpu_ms: number;
  bytes: number;
  runs_served_ms: number[];
  /**
   * The first list in this encoding (before the measured runs; JSON's comes first): for protobuf
   * the one that encodes every item and fills the server's cache of encoded versions, which the
   * measured runs then read (EncodedCache).
   */
  first_served_ms: number;
}

/**
 * Whole lists of one collection of `pods` objects in each encoding, `runs` of each, the order
 * alternating per round (A B, B A, …) so that other work on the machine skews both alike. One
 * connection per encoding, warmed by one list first (reported apart). Every list must hold exactly
 * `pods` items.
 */
export async function measureListEncodings(
  target: Target,
  serverPid: number,
  encodings: readonly Encoding[],
  o: { collection: string; itemSchema: ObjectSchema; pods: number; runs: number },
): Promise<Record<string, ListEncodingFigures>> {
  const pools = new Map(encodings.map((e) => [e.name, target.pool(1)]));
  const samples = new Map(encodings.map((e) => [e.name, { served: [] as number[], decode: [] as number[], whole: [] as number[], cpu: [] as number[], bytes: 0 }]));
  const once = async (e: Encoding) => {
    const s0 = procCpuPrecise(serverPid);
    const t0 = performance.now();
    const bytes = await expectIn(target, e, pools.get(e.name)!, [200], 'GET', o.collection);
    const t1 = performance.now();
    const cpu = procCpuPrecise(serverPid) - s0;
    const items = e.listItems(o.itemSchema, bytes);
    const t2 = performance.now();
    if (items.length !== o.pods) throw new Error(`${e.name}: the list holds ${items.length} items, not ${o.pods}`);
    return { served: t1 - t0, decode: t2 - t1, cpu: cpu * 1000, bytes: bytes.length };
  };
  const first = new Map<string, number>();
  try {
    for (const e of encodings) first.set(e.name, (await once(e)).served);
    for (let r = 0; r < o.runs; r++) {
      for (const e of r % 2 === 0 ? encodings : [...encodings].reverse()) {
        const x = await once(e);
        const s = samples.get(e.name)!;
        s.served.push(x.served);
        s.decode.push(x.decode);
        s.whole.push(x.served + x.decode);
        s.cpu.push(x.cpu);
        s.bytes = x.bytes;
        progress(`${e.name}: list of ${o.pods}: served in ${x.served.toFixed(0)} ms (${x.bytes} bytes, server ${x.cpu.toFixed(0)} ms CPU), decoded in ${x.decode.toFixed(0)} ms`);
      }
    }
  } finally {
    await Promise.all([...pools.values()].map((p) => p.close()));
  }
  const out: Record<string, ListEncodingFigures> = {};
  for (const [name, s] of samples) {
    out[name] = {
      served_ms: round(median(s.served), 1),
      client_decode_ms: round(median(s.decode), 1),
      whole_list_ms: round(median(s.whole), 1),
      server_cpu_ms: round(median(s.cpu), 0),
      bytes: s.bytes,
      runs_served_ms: s.served.map((x) => round(x, 1)),
      first_served_ms: round(first.get(name) ?? NaN, 1),
    };
  }
  return out;
}
