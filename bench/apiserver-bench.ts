import { cpSync, mkdirSync, mkdtempSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServer } from '../test/helpers/apiserver-process';
import { startEtcd } from '../test/helpers/etcd-process';
import { runApiServerApplyBench } from './apiserver-apply-bench';
import { runApiServerProtobufBench } from './apiserver-protobuf-bench';
import { measureEtcd } from './lib/etcd-baseline';
import type { Cleanup } from './lib/cleanup';
import { startFloorServer } from './lib/floor-process';
import { configMap, ensureNamespace, RequestBench, type RequestFigures, type RequestPlan } from './lib/http-figures';
import { sleep, type LoadResult } from './lib/load';
import { measurePodList, type ListPlan } from './lib/pod-list';
import { filesystemOf, openFilesLimit, procMemMb, procName } from './lib/proc-stats';
import { progress } from './lib/progress';
import { ratio, round } from './lib/stats';
import { measureStore } from './lib/store-baseline';
import { stopApi } from './lib/stop-api';
import { adminTls, Target } from './lib/target';
import { measureFanout, summarizeFanout, type FanoutOptions, type FanoutResult, type FanoutSample } from './lib/watch-fanout';

/** The sizes of one run; `--quick` shrinks them to check the bench itself, not to quote. */
interface Plan {
  requests: Omit<RequestPlan, 'namespace'>;
  list: Omit<ListPlan, 'namespace'>;
  watchers: number;
  watchWrites: number;
  watchIntervalMs: number;
  idleMs: number;
  store: { singleWriterCount: number; singleWriterMaxMs: number; concurrentCount: number; getCount: number };
}

const FULL: Plan = {
  requests: { warmupCreates: 400, warmupGets: 1000, createClients: 32, creates: 4000, getClients: 64, gets: 10_000, latencyClients: 8, latencyGets: 4000 },
  list: { pods: 10_000, createClients: 64, chunkLimit: 500, runs: 3 },
  watchers: 1000,
  watchWrites: 20,
  watchIntervalMs: 250,
  idleMs: 5000,
  store: { singleWriterCount: 2000, singleWriterMaxMs: 8000, concurrentCount: 4000, getCount: 20_000 },
};

const QUICK: Plan = {
  requests: { warmupCreates: 50, warmupGets: 100, createClients: 32, creates: 300, getClients: 64, gets: 600, latencyClients: 8, latencyGets: 300 },
  list: { pods: 600, createClients: 64, chunkLimit: 500, runs: 3 },
  watchers: 50,
  watchWrites: 5,
  watchIntervalMs: 250,
  idleMs: 1000,
  store: { singleWriterCount: 100, singleWriterMaxMs: 2000, concurrentCount: 300, getCount: 2000 },
};

/** The issue's goals (issue 2, Performance). */
const GOALS = {
  creates_vs_store_puts: { target: '>= 0.4', ok: (x: number) => x >= 0.4 },
  gets_vs_floor: { target: '>= 0.5', ok: (x: number) => x >= 0.5 },
  get_p99_vs_floor: { target: '<= 2', ok: (x: number) => x <= 2 },
  watch_p99_vs_floor: { target: '<= 1.5', ok: (x: number) => x <= 1.5 },
  idle_rss_mb: { target: '<= 80', ok: (x: number) => x <= 80 },
} as const;

/** What the issue measured for the floor server on this machine, to tell a noisy run from a real change. */
const FLOOR_REFERENCE = { creates_per_second: 3500, gets_per_second: 8600, get_p99_ms: 5, watch_p99_ms: 110 };


/**
 * `npm run bench -- apiserver [--quick] [--store etcd]`: every figure of issue 2's Performance
 * section, as one JSON document. `--store etcd` (issue 7) runs the server on a real etcd member
 * (--etcd-servers) and takes the store baseline from that member instead of SQLite. `--protobuf`
 * (issue 17) runs the protobuf-against-JSON comparison instead (apiserver-protobuf-bench.ts);
 * `--apply` (issue 18) server-side apply against merge patch (apiserver-apply-bench.ts).
 */
export async function runApiServerBench(args: readonly string[], cleanup: Cleanup): Promise<object> {
  if (args.includes('--protobuf')) return runApiServerProtobufBench(args, cleanup);
  if (args.includes('--apply')) return runApiServerApplyBench(args, cleanup);
  const plan = args.includes('--quick') ? QUICK : FULL;
  const storeIdx = args.indexOf('--store');
  const backend = storeIdx >= 0 ? args[storeIdx + 1] : 'sqlite';
  if (backend !== 'sqlite' && backend !== 'etcd') throw new Error('--store wants sqlite or etcd');
  const notes: string[] = [];
  const loadBefore = loadavg()[0];
  if (plan === QUICK) notes.push('--quick: reduced counts, figures are not comparable with a full run');
  const fdLimit = openFilesLimit();
  let watchers = plan.watchers;
  if (fdLimit !== null && fdLimit < 4096) {
    const msg = `open-files limit (ulimit -n) is ${fdLimit}, below 4096: 1000 watchers need about 1000 descriptors in this process and as many in the server`;
    progress(`WARNING: ${msg}`);
    notes.push(msg);
    watchers = Math.min(watchers, Math.max(10, fdLimit - 300));
    if (watchers < plan.watchers) notes.push(`watchers reduced to ${watchers} to fit the limit; raise it with ulimit -n 8192`);
  }

  // Both servers run side by side, but only one is under load at any time. Every figure is taken
  // in A-B-B-A order (API, floor, floor, API) and pooled, so that other work on the shared machine
  // skews both alike rather than one of them.
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-apiserver-'));
  cleanup.dir(dataDir);
  let etcdEndpoint: string | undefined;
  if (backend === 'etcd') {
    progress('starting etcd');
    const etcd = await startEtcd();
    cleanup.add('stop etcd', () => etcd.stop());
    etcdEndpoint = etcd.endpoint;
    notes.push(`--store etcd: one etcd member (/usr/bin/etcd) with its data dir on ${etcd.dataDir.startsWith('/dev/shm') ? '/dev/shm (tmpfs: its fsyncs cost nothing)' : etcd.dataDir}; the store baseline is that member`);
  }
  progress(`starting svc-apiserver (${backend})`);
  const api = await startApiServer({ dataDir, args: etcdEndpoint ? [`--etcd-servers=${etcdEndpoint}`] : [] });
  cleanup.child(api.proc);
  cleanup.add('stop svc-apiserver', () => stopApi(api));
  const pid = api.proc.pid!;
  if (procName(pid) !== 'node') notes.push(`pid ${pid} is ${procName(pid)}, not node: RSS figures may be the launcher's`);
  await sleep(plan.idleMs);
  const idleRss = procMemMb(pid, 'VmRSS');
  progress(`svc-apiserver idle RSS ${idleRss.toFixed(1)} MB`);

  // The floor server uses the API server's own serving certificate and client CA.
  const pki = join(dataDir, 'pki');
  progress('starting the floor server');
  const floor = await startFloorServer({ certFile: join(pki, 'apiserver.crt'), keyFile: join(pki, 'apiserver.key'), clientCaFile: join(pki, 'ca.crt') }, cleanup);
  cleanup.add('stop floor server', () => floor.stop());

  const apiTarget = new Target('api', '127.0.0.1', api.port, adminTls(dataDir));
  // Issue 7: on etcd the watchers are spread over two replicas of one cluster (writes go through
  // the first), so the second replica's watch cache is fed by etcd's watch, not by its own writes.
  const watchTargets = [apiTarget];
  if (etcdEndpoint) {
    const dataDirB = mkdtempSync(join(tmpdir(), 'svc-bench-apiserver-b-'));
    cleanup.dir(dataDirB);
    // Replicas share the cluster CA and admin credentials, as kubeadm copies the PKI to each control-plane node.
    mkdirSync(join(dataDirB, 'pki'), { mode: 0o700 });
    for (const f of ['ca.crt', 'ca.key', 'admin.crt', 'admin.key']) cpSync(join(dataDir, 'pki', f), join(dataDirB, 'pki', f));
    progress('starting a second svc-apiserver replica on the same etcd');
    const apiB = await startApiServer({ dataDir: dataDirB, args: [`--etcd-servers=${etcdEndpoint}`] });
    cleanup.child(apiB.proc);
    cleanup.add('stop svc-apiserver replica b', () => stopApi(apiB));
    watchTargets.push(new Target('api-b', '127.0.0.1', apiB.port, adminTls(dataDir)));
    notes.push('--store etcd: watchers spread evenly over 2 svc-apiserver replicas on the one etcd member; writes go through the first');
  }
  const floorTarget = new Target('floor', '127.0.0.1', floor.port, adminTls(dataDir));
  const apiBench = new RequestBench(apiTarget, { ...plan.requests, namespace: 'bench-cm' });
  const floorBench = new RequestBench(floorTarget, { ...plan.requests, namespace: 'bench-cm' });
  cleanup.add('close request pools', () => Promise.all([apiBench.close(), floorBench.close()]).then(() => undefined));
  await apiBench.setup();
  await floorBench.setup();
  for (const phase of ['creates', 'gets', 'get_latency'] as const) {
    // A-B-B-A: each server's figure pools an early and a late part.
    await apiBench.run(phase, 0, 2);
    await floorBench.run(phase, 0, 2);
    await floorBench.run(phase, 1, 2);
    await apiBench.run(phase, 1, 2);
  }
  const apiRequests = apiBench.figures();
  const floorRequests = floorBench.figures();
  await apiBench.close();
  await floorBench.close();

  const apiRounds: FanoutSample[] = [];
  const floorRounds: FanoutSample[] = [];
  apiRounds.push(await fanout(apiTarget, watchers, plan, 1, watchTargets));
  floorRounds.push(await fanout(floorTarget, watchers, plan, 1));
  floorRounds.push(await fanout(floorTarget, watchers, plan, 2));
  apiRounds.push(await fanout(apiTarget, watchers, plan, 2, watchTargets));
  const apiWatch = summarizeFanout(apiRounds, plan.watchIntervalMs);
  const floorWatch = summarizeFanout(floorRounds, plan.watchIntervalMs);
  await floor.stop();

  const apiList = await measurePodList(apiTarget, { ...plan.list, namespace: 'bench-pods' });
  const rssAfter = procMemMb(pid, 'VmRSS');
  const peakRss = procMemMb(pid, 'VmHWM');
  progress(`svc-apiserver RSS after the list ${rssAfter.toFixed(1)} MB (peak ${peakRss.toFixed(1)} MB)`);
  await stopApi(api);

  // The raw store last, once no server is running, with values the size the API server stores.
  const value = Buffer.alloc(apiRequests.object_bytes || 600, 'x');
  let store: { puts_single_writer: LoadResult; puts_concurrent: LoadResult };
  if (etcdEndpoint) {
    progress('measuring the etcd member');
    store = await measureEtcd({
      endpoint: etcdEndpoint,
      value,
      rawInFlight: 64,
      rawPuts: plan.store.concurrentCount,
      rawGets: plan.store.getCount,
      concurrency: plan.requests.createClients,
      singleWriterCount: plan.store.singleWriterCount,
      singleWriterMaxMs: plan.store.singleWriterMaxMs,
      concurrentCount: plan.store.concurrentCount,
    });
  } else {
    progress('measuring the raw SQLite store');
    store = await measureStore({ value, concurrency: plan.requests.createClients, ...plan.store });
  }

  const ratios = {
    creates_vs_store_puts: ratio(apiRequests.creates.per_second, store.puts_concurrent.per_second),
    creates_vs_store_puts_single_writer: ratio(apiRequests.creates.per_second, store.puts_single_writer.per_second),
    gets_vs_floor: ratio(apiRequests.gets.per_second, floorRequests.gets.per_second),
    // Tail ratios compare each server's least disturbed part: other tenants only ever add latency,
    // and one burst in one part would otherwise decide the p99 (both servers get the same rule).
    get_p99_vs_floor: ratio(bestP99(apiRequests.get_latency), bestP99(floorRequests.get_latency)),
    watch_p99_vs_floor: ratio(bestRoundP99(apiWatch), bestRoundP99(floorWatch)),
    get_p99_vs_floor_pooled: ratio(apiRequests.get_latency.p99_ms, floorRequests.get_latency.p99_ms),
    watch_p99_vs_floor_pooled: ratio(apiWatch.p99_ms, floorWatch.p99_ms),
    creates_vs_floor: ratio(apiRequests.creates.per_second, floorRequests.creates.per_second),
  };
  if (loadBefore > 1.5) notes.push(`the machine was busy (1-minute load ${loadBefore.toFixed(2)} on ${cpus().length} cores before the run): figures are noisier than usual`);
  const floorVsStore = ratio(floorRequests.creates.per_second, store.puts_concurrent.per_second);
  if (floorVsStore !== null && floorVsStore < 0.4) {
    notes.push(
      `even the floor server creates only ${floorVsStore} of the store's ${plan.requests.createClients}-writer puts/s here (${backend === 'etcd' ? 'the etcd member is on tmpfs' : 'fsync is cheap on this disk and group commit shares it'}), ` +
        'so creates_vs_store_puts measures HTTPS+JSON cost more than the API server; creates_vs_store_puts_single_writer is the other reading',
    );
  }
  if (apiWatch.missing > 0 || floorWatch.missing > 0) notes.push('some watch events were never delivered: see api.watch.missing and baseline.floor.watch.missing');
  const goal = (name: keyof typeof GOALS, value: number | null) => ({
    target: GOALS[name].target,
    value,
    met: value !== null && GOALS[name].ok(value),
  });
  return {
    benchmark: 'apiserver',
    store_backend: backend,
    machine: {
      cpus: cpus().length,
      cpu_model: cpus()[0]?.model ?? 'unknown',
      node: process.version,
      open_files_limit: fdLimit,
      // Other work on the machine skews every figure; a 1-minute load well above 1 before the run means a noisy run.
      load_average_1m: { before: round(loadBefore), after: round(loadavg()[0]) },
      data_dir_filesystem: filesystemOf(tmpdir()),
    },
    api: {
      ...requestsJson(apiRequests),
      list: { ...apiList, rss_after_mb: round(rssAfter, 1), peak_rss_mb: round(peakRss, 1) },
      watch: { ...apiWatch, replicas: watchTargets.length },
    },
    baseline: {
      store,
      floor: { ...requestsJson(floorRequests), watch: floorWatch, reference_from_issue: FLOOR_REFERENCE },
    },
    ratios,
    goals: {
      creates_vs_store_puts: goal('creates_vs_store_puts', ratios.creates_vs_store_puts),
      gets_vs_floor: goal('gets_vs_floor', ratios.gets_vs_floor),
      get_p99_vs_floor: goal('get_p99_vs_floor', ratios.get_p99_vs_floor),
      watch_p99_vs_floor: goal('watch_p99_vs_floor', apiWatch.missing > 0 ? null : ratios.watch_p99_vs_floor),
      idle_rss_mb: goal('idle_rss_mb', round(idleRss, 1)),
    },
    idle_rss_mb: round(idleRss, 1),
    notes,
  };
}

/** The lowest p99 among the parts of a pooled figure (the pooled p99 when it has one part). */
function bestP99(r: LoadResult): number {
  return r.runs_p99_ms ? Math.min(...r.runs_p99_ms) : r.p99_ms;
}

/** The lowest p99 among the watch rounds. */
function bestRoundP99(r: FanoutResult): number {
  return r.rounds.length > 0 ? Math.min(...r.rounds.map((x) => x.p99_ms)) : r.p99_ms;
}

function requestsJson(f: RequestFigures): object {
  return { creates: f.creates, gets: f.gets, get_latency: f.get_latency, object_bytes: f.object_bytes };
}

/**
 * One round of watch fan-out against one target: watchers on a namespace of its own (so a round's
 * watchers see no objects from an earlier round), writes are ConfigMap creates there.
 */
async function fanout(target: Target, watchers: number, plan: Plan, roundNo: number, watchTargets: readonly Target[] = [target]): Promise<FanoutSample> {
  const ns = `bench-watch-${roundNo}`;
  await ensureNamespace(target, ns);
  const writer = target.pool(1);
  try {
    const o: FanoutOptions = {
      watchPath: `/api/v1/namespaces/${ns}/configmaps?watch=1&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan`,
      watchers,
      openConcurrency: 50,
      writes: plan.watchWrites,
      intervalMs: plan.watchIntervalMs,
      objectName: (k) => `fan-${k}`,
      write: async (k) => {
        await target.expect(writer, [201], 'POST', `/api/v1/namespaces/${ns}/configmaps`, configMap(`fan-${k}`));
      },
      drainMs: 15_000,
    };
    progress(`${target.name}: watch round ${roundNo}: opening ${watchers} watchers`);
    const s = await measureFanout(watchTargets, o);
    const r = summarizeFanout([s], plan.watchIntervalMs);
    progress(`${target.name}: watch round ${roundNo}: delivery p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms, ${r.missing} missing`);
    return s;
  } finally {
    await writer.close();
  }
}
