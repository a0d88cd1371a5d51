import { performance } from 'node:perf_hooks';
import { Etcd3 } from 'etcd3';
import { EtcdStorage } from '../../apiserver/storage/etcd';
import { runClosedLoop, summarize, type LoadResult } from './load';
import { progress } from './progress';

export interface EtcdBaseline {
  backend: 'etcd';
  endpoint: string;
  value_bytes: number;
  /** The raw etcd3 client: plain puts, `rawInFlight` at a time (no compare, no prefix logic). */
  raw_puts: LoadResult;
  /** The raw etcd3 client: gets of those keys, `rawInFlight` at a time. */
  raw_gets: LoadResult;
  /** The server's own EtcdStorage (one guarded txn per create), one writer awaiting each. */
  puts_single_writer: LoadResult;
  /** EtcdStorage creates with as many concurrent writers as API clients. */
  puts_concurrent: LoadResult;
}

export interface EtcdBaselineOptions {
  endpoint: string;
  value: Buffer;
  rawInFlight: number;
  rawPuts: number;
  rawGets: number;
  concurrency: number;
  singleWriterCount: number;
  singleWriterMaxMs: number;
  concurrentCount: number;
}

/**
 * The etcd member's own speed as the API server's ceiling, from this process: the raw etcd3
 * client, then the server's EtcdStorage. Keys go under prefixes the API server never reads.
 */
export async function measureEtcd(o: EtcdBaselineOptions): Promise<EtcdBaseline> {
  const raw = new Etcd3({ hosts: [o.endpoint] });
  let rawPuts: LoadResult;
  let rawGets: LoadResult;
  try {
    for (let i = 0; i < 200; i++) await raw.put(`/bench-raw/warm/${i}`).value(o.value);
    rawPuts = summarize([
      await runClosedLoop(o.rawInFlight, o.rawPuts, async (i) => {
        await raw.put(`/bench-raw/k/${i}`).value(o.value);
      }),
    ]);
    progress(`etcd raw: ${o.rawInFlight} in flight ${rawPuts.per_second} puts/s`);
    rawGets = summarize([
      await runClosedLoop(o.rawInFlight, o.rawGets, async (i) => {
        const v = await raw.get(`/bench-raw/k/${(i * 7919) % o.rawPuts}`).buffer();
        if (!v) throw new Error('etcd raw: a written key is missing');
      }),
    ]);
    progress(`etcd raw: ${o.rawInFlight} in flight ${rawGets.per_second} gets/s`);
  } finally {
    raw.close();
  }

  const store = await EtcdStorage.connect({ endpoints: [o.endpoint], prefix: '/bench-store' });
  try {
    const lat: number[] = [];
    const t0 = performance.now();
    for (let i = 0; i < o.singleWriterCount && performance.now() - t0 < o.singleWriterMaxMs; i++) {
      const s = performance.now();
      await store.create(`/configmaps/single/cm-${i}`, o.value);
      lat.push(performance.now() - s);
    }
    const single = summarize([{ clients: 1, count: lat.length, seconds: (performance.now() - t0) / 1000, latencies: lat }]);
    progress(`etcd store: single writer ${single.per_second} creates/s`);
    const concurrent = summarize([
      await runClosedLoop(o.concurrency, o.concurrentCount, async (i) => {
        await store.create(`/configmaps/conc/cm-${i}`, o.value);
      }),
    ]);
    progress(`etcd store: ${o.concurrency} concurrent writers ${concurrent.per_second} creates/s`);
    return { backend: 'etcd', endpoint: o.endpoint, value_bytes: o.value.length, raw_puts: rawPuts, raw_gets: rawGets, puts_single_writer: single, puts_concurrent: concurrent };
  } finally {
    await store.close();
  }
}
