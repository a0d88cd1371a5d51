import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { SqliteStorage } from '../../apiserver/storage/sqlite';
import { runClosedLoop, summarize, type LoadResult } from './load';
import { progress } from './progress';

export interface StoreBaseline {
  synchronous: 'FULL';
  value_bytes: number;
  /** One writer awaiting each create: one transaction and one fsync per put. */
  puts_single_writer: LoadResult;
  /** As many concurrent writers as API clients: group commit shares each fsync among a turn's writes. */
  puts_concurrent: LoadResult;
  gets: LoadResult;
}

export interface StoreBaselineOptions {
  /** The stored value (the size of what the API server stores for one ConfigMap). */
  value: Buffer;
  concurrency: number;
  singleWriterCount: number;
  /** Stops the single-writer run early after this long (fsync speed varies wildly between disks). */
  singleWriterMaxMs: number;
  concurrentCount: number;
  getCount: number;
}

/**
 * The raw store's own speed with the server's durability setting (synchronous FULL), in this
 * process, with no HTTP: the ceiling for API writes. Uses a fresh temp database, removed after.
 */
export async function measureStore(o: StoreBaselineOptions): Promise<StoreBaseline> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-store-'));
  const store = SqliteStorage.open(join(dir, 'state.db'), { synchronous: 'FULL' });
  try {
    for (let i = 0; i < 200; i++) await store.create(`/configmaps/warm/cm-${i}`, o.value);

    const single = await singleWriter(store, o);
    progress(`store: single writer ${single.per_second} puts/s`);
    const concurrent = summarize([
      await runClosedLoop(o.concurrency, o.concurrentCount, async (i) => {
        await store.create(`/configmaps/conc/cm-${i}`, o.value);
      }),
    ]);
    progress(`store: ${o.concurrency} concurrent writers ${concurrent.per_second} puts/s`);
    const keys = o.concurrentCount;
    const gets = summarize([
      await runClosedLoop(1, o.getCount, async (i) => {
        const kv = await store.get(`/configmaps/conc/cm-${(i * 7919) % keys}`);
        if (!kv) throw new Error('store: a written key is missing');
      }),
    ]);
    progress(`store: ${gets.per_second} gets/s`);
    return { synchronous: 'FULL', value_bytes: o.value.length, puts_single_writer: single, puts_concurrent: concurrent, gets };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Sequential puts, a fixed count unless the time cap is reached first (then the count done). */
async function singleWriter(store: SqliteStorage, o: StoreBaselineOptions): Promise<LoadResult> {
  const lat: number[] = [];
  const t0 = performance.now();
  for (let i = 0; i < o.singleWriterCount && performance.now() - t0 < o.singleWriterMaxMs; i++) {
    const s = performance.now();
    await store.create(`/configmaps/single/cm-${i}`, o.value);
    lat.push(performance.now() - s);
  }
  return summarize([{ clients: 1, count: lat.length, seconds: (performance.now() - t0) / 1000, latencies: lat }]);
}
