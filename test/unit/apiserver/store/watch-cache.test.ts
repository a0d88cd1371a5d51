import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError } from '../../../../apiserver/api/errors';
import { SqliteStorage } from '../../../../apiserver/storage/sqlite';
import { WatchCache, type CachedEvent } from '../../../../apiserver/store/watch-cache';

function setup(retainMs = 60_000) {
  const dir = mkdtempSync(join(tmpdir(), 'wc-'));
  const storage = SqliteStorage.open(join(dir, 'db'), { synchronous: 'NORMAL' });
  let now = 1_000_000;
  const cache = new WatchCache(storage, { retainMs, now: () => now });
  const ac = new AbortController();
  const running = cache.run(ac.signal);
  return {
    storage,
    cache,
    tick: (ms: number) => (now += ms),
    async close() {
      ac.abort();
      await running.catch(() => undefined);
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const val = (o: object) => Buffer.from(JSON.stringify({ metadata: {}, ...o }));

async function take(it: AsyncGenerator<CachedEvent>, n: number): Promise<CachedEvent[]> {
  const out: CachedEvent[] = [];
  for await (const e of it) {
    out.push(e);
    if (out.length === n) break;
  }
  return out;
}

test('fans one store watch out to watchers filtered by prefix, with types and resourceVersions', async (t) => {
  const s = setup();
  await s.cache.whenReady();
  const from = s.cache.currentRevision();
  const ac = new AbortController();
  const a = take(s.cache.watch('/core/pods/a/', from, ac.signal), 3);
  const b = take(s.cache.watch('/core/pods/b/', from, ac.signal), 1);
  const c1 = await s.storage.create('/core/pods/a/x', val({ v: 1 }));
  await s.storage.create('/core/pods/b/y', val({ v: 1 }));
  await s.storage.update('/core/pods/a/x', val({ v: 2 }), c1.modRevision);
  await s.storage.delete('/core/pods/a/x');
  const [ea, eb] = await Promise.all([a, b]);
  t.deepEqual(ea.map((e) => e.type), ['ADDED', 'MODIFIED', 'DELETED']);
  t.is(ea[0].object.metadata.resourceVersion, String(c1.modRevision));
  t.deepEqual(eb.map((e) => e.key), ['/core/pods/b/y']);
  t.truthy(ea[1].prevObject);
  ac.abort();
  await s.close();
});

test('resumes from memory, and from the store log once memory has moved on', async (t) => {
  const s = setup(1000);
  await s.cache.whenReady();
  const start = s.cache.currentRevision();
  await s.storage.create('/k/1', val({}));
  await s.storage.create('/k/2', val({}));
  await s.cache.waitForRevision(start + 2, 2000);
  s.tick(5000); // the next event trims everything older from memory
  await s.storage.create('/k/3', val({}));
  await s.cache.waitForRevision(start + 3, 2000);
  const ac = new AbortController();
  const got = await take(s.cache.watch('/k/', start, ac.signal), 3);
  t.deepEqual(got.map((e) => e.key), ['/k/1', '/k/2', '/k/3']);
  t.deepEqual(got.map((e) => e.revision), [start + 1, start + 2, start + 3]);
  ac.abort();
  await s.close();
});

test('a start older than the compacted history is 410 Gone', async (t) => {
  const s = setup(1000);
  await s.cache.whenReady();
  const start = s.cache.currentRevision();
  await s.storage.create('/k/1', val({}));
  const r2 = await s.storage.create('/k/2', val({}));
  await s.cache.waitForRevision(r2.modRevision, 2000);
  s.tick(5000);
  const r3 = await s.storage.create('/k/3', val({}));
  await s.cache.waitForRevision(r3.modRevision, 2000);
  await s.storage.compact(r2.modRevision);
  const ac = new AbortController();
  const err = await t.throwsAsync(take(s.cache.watch('/k/', start, ac.signal), 1), { instanceOf: ApiError });
  t.is(err?.code, 410);
  ac.abort();
  await s.close();
});

test('waitForRevision answers 504 "Too large resource version" for a future revision', async (t) => {
  const s = setup();
  await s.cache.whenReady();
  const err = await t.throwsAsync(s.cache.waitForRevision(s.cache.currentRevision() + 100, 50), { instanceOf: ApiError });
  t.is(err?.code, 504);
  t.regex(err.message, /Too large resource version/);
  await s.close();
});

test('several watchers of one prefix each get every event; one that stops leaves the others following', async (t) => {
  const s = setup();
  await s.cache.whenReady();
  const from = s.cache.currentRevision();
  const stopFirst = new AbortController();
  const rest = new AbortController();
  const first = s.cache.watch('/k/', from, stopFirst.signal);
  const others = [take(s.cache.watch('/k/', from, rest.signal), 3), take(s.cache.watch('/k/', from, rest.signal), 3)];
  await s.storage.create('/k/1', val({}));
  const got = await first.next();
  t.is(got.value?.key, '/k/1');
  stopFirst.abort();
  await s.storage.create('/k/2', val({}));
  await s.storage.create('/k/3', val({}));
  t.true((await first.next()).done, 'the stopped watcher ends');
  for (const events of await Promise.all(others)) t.deepEqual(events.map((e) => e.key), ['/k/1', '/k/2', '/k/3']);
  // Watchers share the cached event: one decode for all of them.
  const [a, b] = await Promise.all([take(s.cache.watch('/k/', from, rest.signal), 1), take(s.cache.watch('/k/', from, rest.signal), 1)]);
  t.is(a[0], b[0]);
  rest.abort();
  await s.close();
});

test('an undecodable value is reported and skipped, its revision still counts, and its deletion is a stub DELETED', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wc-'));
  const storage = SqliteStorage.open(join(dir, 'db'), { synchronous: 'NORMAL' });
  const corrupt: Array<[string, number]> = [];
  const cache = new WatchCache(storage, { retainMs: 60_000, now: () => 0, onCorrupt: (key, rev) => void corrupt.push([key, rev]) });
  const ac = new AbortController();
  const running = cache.run(ac.signal);
  await cache.whenReady();
  const from = cache.currentRevision();
  const events = take(cache.watch('/core/configmaps/', from, ac.signal), 2);
  const bad = await storage.create('/core/configmaps/ns/bad', Buffer.from('{nope'));
  await cache.waitForRevision(bad.modRevision, 2000);
  t.deepEqual(corrupt, [['/core/configmaps/ns/bad', bad.modRevision]]);
  const good = await storage.create('/core/configmaps/ns/good', val({ metadata: { name: 'good' } }));
  const gone = await storage.delete('/core/configmaps/ns/bad');
  const [e1, e2] = await events;
  t.deepEqual([e1.type, e1.key, e1.revision], ['ADDED', '/core/configmaps/ns/good', good.modRevision]);
  t.deepEqual([e2.type, e2.key], ['DELETED', '/core/configmaps/ns/bad']);
  t.deepEqual(e2.object.metadata, { name: 'bad', namespace: 'ns', resourceVersion: String(gone.modRevision) });
  ac.abort();
  await running.catch(() => undefined);
  await storage.close();
  rmSync(dir, { recursive: true, force: true });
});
