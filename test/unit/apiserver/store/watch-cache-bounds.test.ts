/**
 * The watch cache's history is bounded by bytes, count and age (the last also without writes),
 * and a watcher that falls behind what the history holds is ended and holds nothing (issue 16,
 * defects 2 and 6).
 */
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError } from '../../../../apiserver/api/errors';
import { SqliteStorage } from '../../../../apiserver/storage/sqlite';
import { WatchCache, type CachedEvent, type WatchCacheOptions, type WatchedResource } from '../../../../apiserver/store/watch-cache';
import { FakeClock, flush } from '../../../helpers/fake-clock';

function setup(o: Partial<WatchCacheOptions> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'wcb-'));
  const storage = SqliteStorage.open(join(dir, 'db'), { synchronous: 'NORMAL' });
  const clock = new FakeClock(1_000_000);
  const terminated: WatchedResource[] = [];
  const cache = new WatchCache(storage, {
    retainMs: 60_000,
    now: () => clock.now(),
    after: (ms, fn) => clock.after(ms, fn),
    onWatcherTerminated: (r) => terminated.push(r),
    ...o,
  });
  const ac = new AbortController();
  const running = cache.run(ac.signal);
  return {
    storage,
    cache,
    clock,
    terminated,
    async close() {
      ac.abort();
      await running.catch(() => undefined);
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A stored ConfigMap-like value of about `size` bytes. */
const val = (size: number, tag = '') => Buffer.from(JSON.stringify({ metadata: {}, data: { k: 'x'.repeat(Math.max(0, size - 40)) + tag } }));

async function take(it: AsyncGenerator<CachedEvent>, n: number): Promise<CachedEvent[]> {
  const out: CachedEvent[] = [];
  if (n === 0) return out;
  for await (const e of it) {
    out.push(e);
    if (out.length === n) break;
  }
  return out;
}

test('history is bounded in bytes: the oldest events go, a resume from before them replays from the store', async (t) => {
  const s = setup({ maxBytes: 10_000 });
  t.teardown(() => s.close());
  await s.cache.whenReady();
  const start = s.cache.currentRevision();
  for (let i = 0; i < 10; i++) await s.storage.create(`/core/configmaps/default/c${i}`, val(3000, String(i)));
  await s.cache.waitForRevision(start + 10, 2000);
  const st = s.cache.stats();
  t.true(st.historyBytes <= 10_000, `history holds ${st.historyBytes} bytes`);
  t.true(st.historyEvents >= 3 && st.historyEvents < 10, `history holds ${st.historyEvents} events`);
  // A resume from the start still gets every event, in order: the trimmed ones from the store.
  const ac = new AbortController();
  const got = await take(s.cache.watch('/core/configmaps/', start, ac.signal), 10);
  ac.abort();
  t.deepEqual(got.map((e) => e.revision), Array.from({ length: 10 }, (_, i) => start + 1 + i));
});

test('history is bounded in events; the newest always stays even when it alone is over the byte bound', async (t) => {
  const s = setup({ maxEvents: 3, maxBytes: 100 });
  t.teardown(() => s.close());
  await s.cache.whenReady();
  const start = s.cache.currentRevision();
  for (let i = 0; i < 5; i++) await s.storage.create(`/k/${i}`, val(200));
  await s.cache.waitForRevision(start + 5, 2000);
  t.is(s.cache.stats().historyEvents, 1);
  const big = setup({ maxEvents: 3 });
  t.teardown(() => big.close());
  await big.cache.whenReady();
  const b0 = big.cache.currentRevision();
  for (let i = 0; i < 5; i++) await big.storage.create(`/k/${i}`, val(50));
  await big.cache.waitForRevision(b0 + 5, 2000);
  t.is(big.cache.stats().historyEvents, 3);
});

test('history ages out on its timer without further writes, and its bytes with it', async (t) => {
  const s = setup({ retainMs: 60_000 });
  t.teardown(() => s.close());
  await s.cache.whenReady();
  const start = s.cache.currentRevision();
  for (let i = 0; i < 4; i++) await s.storage.create(`/k/${i}`, val(1000));
  await s.cache.waitForRevision(start + 4, 2000);
  t.is(s.cache.stats().historyEvents, 4);
  t.true(s.cache.stats().historyBytes > 3900);
  await s.clock.advance(59_000);
  t.is(s.cache.stats().historyEvents, 4, 'still within the window');
  await s.clock.advance(12_000); // past the window and past the next trim tick
  t.is(s.cache.stats().historyEvents, 0);
  t.is(s.cache.stats().historyBytes, 0);
});

test('a watcher that stops consuming is ended once history it had not been given is trimmed, and is forgotten at once', async (t) => {
  const s = setup({ maxBytes: 5000 });
  t.teardown(() => s.close());
  await s.cache.whenReady();
  const start = s.cache.currentRevision();
  const ac = new AbortController();
  const stalled = s.cache.watch('/core/configmaps/default/', start, ac.signal);
  const first = stalled.next(); // takes one event, then is not asked again for a while
  const other = s.cache.watch('/core/pods/', start, ac.signal);
  const otherNext = other.next(); // a watcher of another prefix, idle
  await s.storage.create('/core/configmaps/default/a', val(2000, 'a'));
  t.is((await first).value?.key, '/core/configmaps/default/a');
  t.deepEqual([...s.cache.stats().watchers], [['/configmaps', 1], ['/pods', 1]]);
  for (let i = 0; i < 6; i++) await s.storage.create(`/core/configmaps/default/b${i}`, val(2000));
  await s.cache.waitForRevision(start + 7, 2000);
  t.deepEqual(s.terminated, [{ group: '', resource: 'configmaps' }], 'the stalled watcher is ended once, the idle one of pods is not');
  // When its consumer comes back, the stream ends normally: the client resumes from its last revision.
  const after = await stalled.next();
  t.true(after.done);
  t.deepEqual([...s.cache.stats().watchers], [['/pods', 1]]);
  // The watcher of pods still follows.
  await s.storage.create('/core/pods/default/p', val(100));
  t.is((await otherNext).value?.key, '/core/pods/default/p');
  ac.abort();
  await other.return(undefined);
  t.is(s.cache.stats().watchers.size, 0);
});

test('a busy watcher of another prefix is not ended when only other prefixes\' events are trimmed', async (t) => {
  const s = setup({ maxBytes: 3000 });
  t.teardown(() => s.close());
  await s.cache.whenReady();
  const start = s.cache.currentRevision();
  const ac = new AbortController();
  const pods = s.cache.watch('/core/pods/', start, ac.signal);
  const first = pods.next();
  await s.storage.create('/core/pods/default/p1', val(100));
  t.is((await first).value?.key, '/core/pods/default/p1');
  // Not asked for its next event (busy) while large ConfigMaps push p1 out of history.
  for (let i = 0; i < 5; i++) await s.storage.create(`/core/configmaps/default/c${i}`, val(2000));
  await s.cache.waitForRevision(start + 6, 2000);
  t.deepEqual(s.terminated, []);
  const next = pods.next();
  await s.storage.create('/core/pods/default/p2', val(100));
  t.is((await next).value?.key, '/core/pods/default/p2');
  ac.abort();
  await pods.return(undefined);
});

test('a resume from history trimmed by bytes whose store history is compacted too is 410 Gone', async (t) => {
  const s = setup({ maxBytes: 3000 });
  t.teardown(() => s.close());
  await s.cache.whenReady();
  const start = s.cache.currentRevision();
  for (let i = 0; i < 5; i++) await s.storage.create(`/k/${i}`, val(2000));
  await s.cache.waitForRevision(start + 5, 2000);
  await s.storage.compact(start + 3);
  const ac = new AbortController();
  const err = await t.throwsAsync(take(s.cache.watch('/k/', start + 1, ac.signal), 1), { instanceOf: ApiError });
  t.is(err?.toStatus().code, 410);
  t.regex(err?.message ?? '', /too old resource version/);
  ac.abort();
});

test('a rendering counts against the bound while the history holds the event', async (t) => {
  const s = setup();
  t.teardown(() => s.close());
  await s.cache.whenReady();
  const start = s.cache.currentRevision();
  const ac = new AbortController();
  const it = s.cache.watch('/k/', start, ac.signal);
  const next = it.next();
  await s.storage.create('/k/a', val(1000));
  const ev = (await next).value as CachedEvent;
  const before = s.cache.stats().historyBytes;
  const json = s.cache.render(ev);
  t.is(s.cache.render(ev), json, 'rendered once');
  t.is(s.cache.stats().historyBytes, before + json.length);
  ac.abort();
  await it.return(undefined);
  await flush();
});
