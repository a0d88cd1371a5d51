import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError } from '../../../../apiserver/api/errors';
import { SqliteStorage } from '../../../../apiserver/storage/sqlite';
import { StorageError, type Storage, type StorageEvent } from '../../../../apiserver/storage/storage';
import { WatchCache, type CachedEvent } from '../../../../apiserver/store/watch-cache';

/** SQLite storage whose watches the test can break, as an etcd member restart (or a compaction meanwhile) breaks them. */
function breakable(inner: SqliteStorage): Storage & { breakWatches(err: StorageError): void } {
  const breakers = new Set<(err: StorageError) => void>();
  async function* watch(prefix: string, from: number, signal: AbortSignal): AsyncGenerator<StorageEvent> {
    const ac = new AbortController();
    const stop = () => ac.abort();
    signal.addEventListener('abort', stop, { once: true });
    let broken: StorageError | undefined;
    const breaker = (err: StorageError) => {
      broken = err;
      ac.abort();
    };
    breakers.add(breaker);
    try {
      for await (const ev of inner.watch(prefix, from, ac.signal)) yield ev;
      if (broken) throw broken;
    } finally {
      breakers.delete(breaker);
      signal.removeEventListener('abort', stop);
    }
  }
  return {
    get: (k, o) => inner.get(k, o),
    list: (p, o) => inner.list(p, o),
    create: (k, v) => inner.create(k, v),
    update: (k, v, r) => inner.update(k, v, r),
    delete: (k, r) => inner.delete(k, r),
    currentRevision: () => inner.currentRevision(),
    compactedRevision: () => inner.compactedRevision(),
    compact: (r) => inner.compact(r),
    close: () => inner.close(),
    watch: (prefix, from, signal) => watch(prefix, from, signal),
    breakWatches: (err) => {
      for (const b of [...breakers]) b(err);
    },
  };
}

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'wcr-'));
  const sqlite = SqliteStorage.open(join(dir, 'db'), { synchronous: 'NORMAL' });
  const storage = breakable(sqlite);
  const cache = new WatchCache(storage, { retainMs: 60_000, now: Date.now });
  const ac = new AbortController();
  const running = cache.run(ac.signal);
  return {
    storage,
    cache,
    async close() {
      ac.abort();
      await running.catch(() => undefined);
      await sqlite.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const val = (o: object) => Buffer.from(JSON.stringify({ metadata: {}, ...o }));

/** Collects a watch's events until it ends; resolves with them and how it ended. */
async function drain(it: AsyncGenerator<CachedEvent>): Promise<{ events: CachedEvent[]; err?: unknown }> {
  const events: CachedEvent[] = [];
  try {
    for await (const e of it) events.push(e);
    return { events };
  } catch (err) {
    return { events, err };
  }
}

test('when the store watch breaks because its history was compacted, watchers following from memory end with 410 instead of missing events', async (t) => {
  const s = setup();
  t.teardown(() => s.close());
  await s.cache.whenReady();
  const from = s.cache.currentRevision();
  const ac = new AbortController();
  t.teardown(() => ac.abort());
  const w = drain(s.cache.watch('/k/', from, ac.signal));
  const r1 = await s.storage.create('/k/1', val({}));
  await s.cache.waitForRevision(r1.modRevision, 2000);
  s.storage.breakWatches(new StorageError('Compacted', 'required revision has been compacted'));
  // Written while the cache is not following: the cache will never see this event.
  await s.storage.create('/k/2', val({}));
  const { events, err } = await w;
  t.deepEqual(events.map((e) => e.key), ['/k/1']);
  t.true(err instanceof ApiError);
  t.is((err as ApiError).code, 410);
  // The cache follows again from the new position.
  const after = s.cache.currentRevision();
  const next = s.cache.watch('/k/', after, ac.signal)[Symbol.asyncIterator]();
  await s.storage.create('/k/3', val({}));
  t.is((await next.next()).value?.key, '/k/3');
});

test('when the store watch breaks for another reason, watchers end normally and a resume replays the gap from the store', async (t) => {
  const s = setup();
  t.teardown(() => s.close());
  await s.cache.whenReady();
  const from = s.cache.currentRevision();
  const ac = new AbortController();
  t.teardown(() => ac.abort());
  const w = drain(s.cache.watch('/k/', from, ac.signal));
  const r1 = await s.storage.create('/k/1', val({}));
  await s.cache.waitForRevision(r1.modRevision, 2000);
  s.storage.breakWatches(new StorageError('Unavailable', 'member restarted'));
  await s.storage.create('/k/2', val({}));
  const { events, err } = await w;
  t.is(err, undefined);
  t.deepEqual(events.map((e) => e.key), ['/k/1']);
  const resumed = s.cache.watch('/k/', r1.modRevision, ac.signal)[Symbol.asyncIterator]();
  t.is((await resumed.next()).value?.key, '/k/2', 'the missed event comes from the store log');
});
