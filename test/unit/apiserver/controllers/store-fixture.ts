/**
 * Test fixture for the h6 controller and authenticator tests: a real ObjectStore over a real
 * SqliteStorage in a temp dir with a running WatchCache, the built-in types, a fake clock and a
 * log that keeps its lines.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';
import { AdmissionChain } from '../../../../apiserver/admission/admission';
import type { KObject } from '../../../../apiserver/api/types';
import { makeBuiltinTypes, ResourceRegistry } from '../../../../apiserver/registry/builtin';
import type { ResourceType } from '../../../../apiserver/registry/resource-type';
import { SqliteStorage } from '../../../../apiserver/storage/sqlite';
import { ObjectStore, type WriteContext } from '../../../../apiserver/store/object-store';
import { WatchCache } from '../../../../apiserver/store/watch-cache';

export class FakeClock {
  constructor(public ms = Date.parse('2025-03-01T12:00:00Z')) {}
  readonly now = (): Date => new Date(this.ms);
  advance(ms: number): void {
    this.ms += ms;
  }
}

export interface Fixture {
  store: ObjectStore;
  cache: WatchCache;
  registry: ResourceRegistry;
  clock: FakeClock;
  log: Logger;
  /** Every log line written so far, raw JSON text. */
  lines: string[];
  /** Aborted by close(). */
  signal: AbortSignal;
  type(group: string, version: string, resource: string): ResourceType;
  close(): Promise<void>;
}

export const adminCtx: WriteContext = {
  user: { username: 'svc-admin', groups: ['system:masters', 'system:authenticated'] },
  dryRun: false,
  subresource: '',
};

export async function openFixture(): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-h6-'));
  const clock = new FakeClock();
  const storage = SqliteStorage.open(join(dir, 'state.db'), { synchronous: 'NORMAL' });
  const cache = new WatchCache(storage, { retainMs: 300_000, now: Date.now });
  const store = new ObjectStore(storage, cache, new AdmissionChain([]), { now: clock.now, rvWaitMs: 3000 });
  const registry = new ResourceRegistry();
  // The types' own clocks (CSR condition stamps, table ages) follow the fake clock too.
  for (const t of makeBuiltinTypes(() => clock.ms)) registry.register(t);
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(...chunk.toString('utf8').split('\n').filter((l) => l !== ''));
      cb();
    },
  });
  const log = pino({ level: 'debug' }, sink);
  const ac = new AbortController();
  const cacheRun = cache.run(ac.signal);
  await cache.whenReady();
  return {
    store,
    cache,
    registry,
    clock,
    log,
    lines,
    signal: ac.signal,
    type(group, version, resource) {
      const t = registry.lookup(group, version, resource);
      if (!t) throw new Error(`no type ${group}/${version}/${resource}`);
      return t;
    },
    async close() {
      ac.abort();
      await cacheRun.catch(() => undefined);
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Resolves with the first object under the type for which pred holds (checking the stored one first, then watch events). */
export async function waitFor(f: Fixture, t: ResourceType, namespace: string, name: string, pred: (o: KObject | null) => boolean): Promise<KObject | null> {
  const ac = new AbortController();
  const stop = () => ac.abort();
  f.signal.addEventListener('abort', stop, { once: true });
  try {
    const from = f.cache.currentRevision();
    const current = await f.store.get(t, namespace, name).catch(() => null);
    if (pred(current)) return current;
    const prefix = `/${t.group || 'core'}/${t.resource}/${t.namespaced ? namespace + '/' : ''}${name}`;
    for await (const ev of f.cache.watch(prefix, from, ac.signal)) {
      if (ev.key !== prefix) continue;
      const o = ev.type === 'DELETED' ? null : ev.object;
      if (pred(o)) return o;
    }
    throw new Error('fixture closed while waiting');
  } finally {
    f.signal.removeEventListener('abort', stop);
    ac.abort();
  }
}
