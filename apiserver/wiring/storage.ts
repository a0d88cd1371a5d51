import { statfs } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { ApiServerFlags } from '../config/flags';
import type { ApiMetrics } from '../metrics/registry';
import { FlagError } from '../config/flags';
import { canonicalGroup, isEnabled, unknownKeys, type RuntimeConfig } from '../config/runtime-config';
import { makeBuiltinTypes, ResourceRegistry } from '../registry/builtin';
import type { HealthCheck } from '../server/health';
import type { EtcdStorage as EtcdStorageType } from '../storage/etcd';
import { MAX_BODY_BYTES } from '../server/decode';
import { InstrumentedStorage } from '../storage/instrumented';
import { SqliteStorage } from '../storage/sqlite';
import type { Storage } from '../storage/storage';
import { StoreWriteHealth, WriteTrackingStorage } from '../storage/write-health';
import { WatchCache } from '../store/watch-cache';
import { ListSnapshots } from '../store/list-snapshots';
import { gateOn } from '../config/feature-gates';

/** Section 8: watch history and continue tokens, 5 minutes. */
export const HISTORY_MS = 5 * 60_000;

/** A store whose writes failed is ready again only with room for the largest request body and its log overhead. */
export const STORE_WRITE_MIN_FREE_BYTES = MAX_BODY_BYTES + (1 << 20);
/** While the store's writes fail, /readyz probes it at most this often. */
export const STORE_WRITE_PROBE_INTERVAL_MS = 1000;

/** The storage phase's result: the backend (timed), the resource types, and the watch cache over the backend. */
export interface StorageLayer {
  storage: Storage;
  registry: ResourceRegistry;
  cache: WatchCache;
  /** Whether the store accepts writes (the readyz check store-write). */
  writeHealth: StoreWriteHealth;
  /** With ListFromCacheSnapshot: what lists read instead of the storage (exact older revisions from memory). */
  lists?: ListSnapshots;
}

/** Opens the store backend the flags select and builds the registry and the watch cache over it (nothing runs yet). */
export async function openStorage(flags: ApiServerFlags, metrics: ApiMetrics, log: Logger): Promise<StorageLayer> {
  // --etcd-servers selects the clustered store; otherwise the embedded SQLite one under --data-dir.
  const backend: Storage =
    flags.etcdServers.length > 0
      ? // Loaded only when used: the etcd client and gRPC cost ~10 MB of memory that SQLite users never need.
        // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose (see above): the etcd client stays out of memory unless --etcd-servers is set
        await (require('../storage/etcd') as { EtcdStorage: typeof EtcdStorageType }).EtcdStorage.connect({
          endpoints: flags.etcdServers,
          caFile: flags.etcdCaFile,
          certFile: flags.etcdCertFile,
          keyFile: flags.etcdKeyFile,
          prefix: flags.etcdPrefix,
          onForeignEndpoint: (endpoint, clusterId, expected) =>
            log.error({ endpoint, clusterId, expected }, 'etcd endpoint belongs to another cluster than the other --etcd-servers; it is not used'),
        })
      : SqliteStorage.open(join(flags.dataDir, 'store', 'state.db'));
  const sqlite = backend instanceof SqliteStorage;
  const writeHealth = new StoreWriteHealth({
    now: Date.now,
    ...(sqlite ? { probe: backend, freeBytes: () => freeBytes(join(flags.dataDir, 'store')) } : {}),
    minFreeBytes: STORE_WRITE_MIN_FREE_BYTES,
    probeIntervalMs: STORE_WRITE_PROBE_INTERVAL_MS,
    onChange: (failure) => {
      if (failure) log.error({ reason: failure }, 'store writes fail: /readyz fails its store-write check until the store writes again');
      else log.info('store writes work again: /readyz store-write ok');
    },
  });
  // Every store call is timed into etcd_request_duration_seconds (whichever backend, as /metrics documents).
  const storage: Storage = new InstrumentedStorage(new WriteTrackingStorage(backend, writeHealth), metrics, () => performance.now());
  const registry = new ResourceRegistry();
  for (const t of makeBuiltinTypes(Date.now)) registry.register(t);
  // ListFromCacheSnapshot (alpha, off as upstream 1.33): nothing is built, and nothing held, unless it is on.
  const lists = gateOn(flags.featureGates, 'ListFromCacheSnapshot') ? new ListSnapshots(storage, { now: Date.now, onServed: (p) => metrics.cacheListServed(p) }) : undefined;
  const cache = new WatchCache(storage, {
    follower: lists,
    retainMs: HISTORY_MS,
    maxBytes: flags.watchCacheMaxBytes,
    now: Date.now,
    onWatcherTerminated: (r) => metrics.watcherTerminated(r.group, r.resource),
    onCorrupt: (key, revision, err) => log.error({ key, revision, err: err.message }, 'stored object cannot be decoded; watchers do not get this write'),
  });
  metrics.watchCache(() => cache.stats());
  return { storage, registry, cache, writeHealth, lists };
}

/** Bytes this process may still write in dir's file system (root may use the reserved blocks); undefined when it cannot be read. */
async function freeBytes(dir: string): Promise<number | undefined> {
  try {
    const st = await statfs(dir);
    return (process.getuid?.() === 0 ? st.bfree : st.bavail) * st.bsize;
  } catch {
    return undefined;
  }
}

/** The readiness check of store writes (readyz only: a full disk is no reason to restart the server). */
export function storeWriteCheck(health: StoreWriteHealth): HealthCheck {
  return { name: 'store-write', check: () => health.check() };
}

/** The readiness and liveness check of the store backend. */
export function storageCheck(storage: Storage): HealthCheck {
  return {
    name: 'etcd', // upstream's check name, kept for tooling; it checks whichever store is in use
    check: async () => {
      // Bounded like upstream's --etcd-healthcheck-timeout (2 s): without quorum etcd holds a
      // linearizable read until its own 7 s timeout, and a probe must not wait that long.
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('store did not answer within 2s'), 2000)));
      try {
        return await Promise.race([storage.currentRevision().then(() => undefined), timeout]);
      } catch {
        return 'store unreachable';
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/**
 * Once every type is registered (authentication registers its review types later): turns off serving of the versions --runtime-config (or the defaults: alpha versions off, recent
 * betas off) leaves off; a key naming a group version this server does not have stops the start
 * (FlagError, exit 2), as upstream.
 */
export function applyRuntimeConfig(registry: ResourceRegistry, cfg: RuntimeConfig): void {
  const known = new Set(registry.all().map((t) => `${canonicalGroup(t.group)}/${t.version}`));
  const unknown = unknownKeys(cfg, known);
  if (unknown.length) throw new FlagError(`invalid argument for --runtime-config: unknown api groups or versions: ${unknown.join(', ')}`);
  for (const t of registry.all()) if (!isEnabled(cfg, t.group, t.version, t.resource)) registry.stopServing(t);
}
