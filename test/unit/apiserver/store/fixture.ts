/**
 * Test fixture for the store and handler tests: a real ObjectStore over a real SqliteStorage in a
 * temp dir with a running WatchCache, the built-in types, a fake clock for the store (timestamps)
 * and one for the cache (its in-memory window), and an admitter that records what it is shown and
 * can be told to reject or mutate.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError } from '../../../../apiserver/api/errors';
import type { KObject } from '../../../../apiserver/api/types';
import { makeBuiltinTypes, ResourceRegistry } from '../../../../apiserver/registry/builtin';
import type { ResourceType } from '../../../../apiserver/registry/resource-type';
import { SqliteStorage } from '../../../../apiserver/storage/sqlite';
import { ObjectStore, type WriteContext } from '../../../../apiserver/store/object-store';
import { WatchCache } from '../../../../apiserver/store/watch-cache';
import type { WriteAdmission, AdmissionAttributes } from '../../../../apiserver/store/write-admission';
import { FakeClock } from '../../../helpers/fake-clock';

/** What the recording admitter saw of one write, copied when it saw it. */
export interface Admitted {
  operation: AdmissionAttributes['operation'];
  resource: string;
  namespace: string;
  name: string;
  subresource: string;
  dryRun: boolean;
  username: string;
  object?: KObject;
  oldObject?: KObject;
}

export interface StoreFixture {
  storage: SqliteStorage;
  cache: WatchCache;
  store: ObjectStore;
  registry: ResourceRegistry;
  /** The store's clock (creationTimestamp, deletionTimestamp, managedFields times). */
  clock: FakeClock;
  /** Moves the watch cache's clock, which decides what stays in its in-memory window. */
  tickCache(ms: number): void;
  admitted: Admitted[];
  /** When set, admission runs it first: it may change attrs.object or throw to reject. */
  admit?: (attrs: AdmissionAttributes) => void;
  type(resource: string, group?: string, version?: string): ResourceType;
  close(): Promise<void>;
}

export const admin: WriteContext = {
  user: { username: 'svc-admin', groups: ['system:masters', 'system:authenticated'] },
  dryRun: false,
  subresource: '',
};

export function ctx(over: Partial<WriteContext> = {}): WriteContext {
  return { ...admin, ...over };
}

export async function openStore(opts: { retainMs?: number; rvWaitMs?: number } = {}): Promise<StoreFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-store-'));
  const storage = SqliteStorage.open(join(dir, 'state.db'), { synchronous: 'NORMAL' });
  let cacheNow = 1_000_000;
  const cache = new WatchCache(storage, { retainMs: opts.retainMs ?? 60_000, now: () => cacheNow });
  const clock = new FakeClock(Date.parse('2025-03-01T12:00:00Z'));
  const registry = new ResourceRegistry();
  for (const t of makeBuiltinTypes(() => clock.now())) registry.register(t);
  const admitted: Admitted[] = [];
  const f = { admitted } as StoreFixture;
  const admitter: WriteAdmission = {
    admit(a) {
      // A throw in the executor (f.admit rejecting the write) rejects the promise with it, as from a real admitter.
      return new Promise<void>((resolve) => {
        f.admit?.(a);
        admitted.push({
          operation: a.operation,
          resource: a.type.resource,
          namespace: a.namespace,
          name: a.name,
          subresource: a.subresource,
          dryRun: a.dryRun,
          username: a.user.username,
          object: a.object && structuredClone(a.object),
          oldObject: a.oldObject && structuredClone(a.oldObject),
        });
        resolve();
      });
    },
  };
  const store = new ObjectStore(storage, cache, admitter, { now: () => new Date(clock.now()), rvWaitMs: opts.rvWaitMs ?? 2000 });
  const ac = new AbortController();
  const running = cache.run(ac.signal);
  await cache.whenReady();
  return Object.assign(f, {
    storage,
    cache,
    store,
    registry,
    clock,
    tickCache: (ms: number) => void (cacheNow += ms),
    type(resource: string, group = '', version = 'v1') {
      const t = registry.lookup(group, version, resource);
      if (!t) throw new Error(`no type ${group}/${version}/${resource}`);
      return t;
    },
    async close() {
      ac.abort();
      await running.catch(() => undefined);
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  });
}

/** A configmap with the given name and data. */
export function configMap(name: string, extra: Partial<KObject> & { labels?: Record<string, string>; finalizers?: string[] } = {}): KObject {
  const { labels, finalizers, ...rest } = extra;
  const metadata: KObject['metadata'] = { name };
  if (labels) metadata.labels = labels;
  if (finalizers) metadata.finalizers = finalizers;
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata, data: { k: 'v' }, ...rest };
}

/** A pod with one container, bound to nodeName when given. */
export function pod(name: string, spec: Record<string, unknown> = {}): KObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { containers: [{ name: 'app', image: 'registry.example/app:1' }], ...spec },
  };
}

/** Runs fn and answers the ApiError it rejects with (fails the test through the caller's assertion if it resolves). */
export async function apiError(fn: () => Promise<unknown>): Promise<ApiError> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError, but the call succeeded');
}

/** Runs body over a fresh store (openStore's options) and closes it afterwards, whatever body does. */
export async function withStore(body: (f: StoreFixture) => Promise<void>, opts?: Parameters<typeof openStore>[0]): Promise<void> {
  const f = await openStore(opts);
  try {
    await body(f);
  } finally {
    await f.close();
  }
}
