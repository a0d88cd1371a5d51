import { performance } from 'node:perf_hooks';
import { percentile, round } from './stats';

/** The raw outcome of one closed-loop run. */
export interface LoadRun {
  clients: number;
  count: number;
  seconds: number;
  /** Latency of every operation, ms. */
  latencies: number[];
}

/** Load figures as printed: fixed operation count, fixed number of concurrent clients. */
export interface LoadResult {
  clients: number;
  count: number;
  seconds: number;
  per_second: number;
  p50_ms: number;
  p99_ms: number;
  /** When the figure pools several runs: each run's own rate and p99 (a big spread means a noisy run). */
  runs_per_second?: number[];
  runs_p99_ms?: number[];
}

/**
 * Runs `count` operations with `clients` concurrent closed-loop clients (each starts its next
 * operation as soon as its previous one ends). The first failure stops the run and is thrown,
 * so a figure is never computed over errors.
 */
export async function runClosedLoop(clients: number, count: number, op: (i: number) => Promise<void>): Promise<LoadRun> {
  const latencies = new Array<number>(count);
  let next = 0;
  let failed: unknown;
  const worker = async (): Promise<void> => {
    while (failed === undefined) {
      const i = next++;
      if (i >= count) return;
      const t0 = performance.now();
      try {
        await op(i);
      } catch (err) {
        failed ??= err;
        return;
      }
      latencies[i] = performance.now() - t0;
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: clients }, worker));
  const seconds = (performance.now() - t0) / 1000;
  // Rethrows what the operation threw, whatever its type.
  if (failed !== undefined) throw failed as unknown;
  return { clients, count, seconds, latencies };
}

/** One figure from one or more runs: total count over total time, percentiles over every operation. */
export function summarize(runs: readonly LoadRun[]): LoadResult {
  const count = runs.reduce((n, r) => n + r.count, 0);
  const seconds = runs.reduce((n, r) => n + r.seconds, 0);
  const all = runs.flatMap((r) => r.latencies);
  const result: LoadResult = {
    clients: runs[0]?.clients ?? 0,
    count,
    seconds: round(seconds, 3),
    per_second: round(count / seconds, 0),
    p50_ms: round(percentile(all, 0.5)),
    p99_ms: round(percentile(all, 0.99)),
  };
  if (runs.length > 1) {
    result.runs_per_second = runs.map((r) => round(r.count / r.seconds, 0));
    result.runs_p99_ms = runs.map((r) => round(percentile(r.latencies, 0.99)));
  }
  return result;
}

/** Resolves after ms milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
