import test from 'ava';
import { handleWatch, INITIAL_EVENTS_END, MAX_WATCH_TIMEOUT_S, SVC_INITIAL_EVENTS_END, watchTimeoutSeconds } from '../../../../apiserver/handlers/watch';
import { WRITE_DEADLINE_MS } from '../../../../common/stream-writer';
import { FakeClock, flush } from '../../../helpers/fake-clock';
import { admin, configMap, type StoreFixture, withStore } from '../store/fixture';
import { call, FakeResponse, start } from './fake-http';

const CMS = '/api/v1/namespaces/default/configmaps';

const cms = (f: StoreFixture) => f.type('configmaps');
const summary = (lines: Array<{ type: string; object: { metadata: { name?: string } } }>) => lines.map((l) => [l.type, l.object.metadata.name]);

test('without a resourceVersion: ADDED for what exists, then every change; the stream ends with the server', (t) =>
  withStore(async (f) => {
    await f.store.create(cms(f), 'default', configMap('old'), admin);
    const ac = new AbortController();
    const w = start(f, handleWatch, 'GET', `${CMS}?watch=1`, { signal: ac.signal });
    await w.res.waitForLines(1);
    t.is(w.res.statusCode, 200);
    t.is(w.res.headers['content-type'], 'application/json');
    await f.store.create(cms(f), 'default', configMap('new'), admin);
    await f.store.update(cms(f), 'default', 'new', (c) => ({ ...c!, data: { k: 'w' } }), admin);
    await f.store.delete(cms(f), 'default', 'old', {}, admin);
    await w.res.waitForLines(4);
    const lines = w.res.lines();
    t.deepEqual(summary(lines), [
      ['ADDED', 'old'],
      ['ADDED', 'new'],
      ['MODIFIED', 'new'],
      ['DELETED', 'old'],
    ]);
    t.deepEqual(lines[2].object.data, { k: 'w' });
    t.is(lines[3].object.metadata.resourceVersion, String(await f.storage.currentRevision()));
    ac.abort();
    await w.done;
    t.true(w.res.writableEnded);
  }));

test('from a resourceVersion: only what changed after it', (t) =>
  withStore(async (f) => {
    const a = await f.store.create(cms(f), 'default', configMap('a'), admin);
    await f.store.create(cms(f), 'default', configMap('b'), admin);
    const ac = new AbortController();
    const w = start(f, handleWatch, 'GET', `${CMS}?watch=1&resourceVersion=${a.metadata.resourceVersion}`, { signal: ac.signal });
    await w.res.waitForLines(1);
    t.deepEqual(summary(w.res.lines()), [['ADDED', 'b']]);
    ac.abort();
    await w.done;
  }));

test('with a selector, an object that stops matching is DELETED and one that starts matching ADDED', (t) =>
  withStore(async (f) => {
    await f.store.create(cms(f), 'default', configMap('a', { labels: { app: 'web' } }), admin);
    await f.store.create(cms(f), 'default', configMap('b', { labels: { app: 'db' } }), admin);
    const ac = new AbortController();
    const w = start(f, handleWatch, 'GET', `${CMS}?watch=1&labelSelector=app%3Dweb`, { signal: ac.signal });
    await w.res.waitForLines(1);
    const relabel = (name: string, app: string) => f.store.update(cms(f), 'default', name, (c) => ({ ...c!, metadata: { ...c!.metadata, labels: { app } } }), admin);
    await relabel('a', 'db');
    await relabel('b', 'web');
    await f.store.update(cms(f), 'default', 'b', (c) => ({ ...c!, data: { k: 'again' } }), admin);
    await w.res.waitForLines(4);
    t.deepEqual(summary(w.res.lines()), [
      ['ADDED', 'a'],
      ['DELETED', 'a'],
      ['ADDED', 'b'],
      ['MODIFIED', 'b'],
    ]);
    ac.abort();
    await w.done;
  }));

test('a resume from history that is gone is a 410 ERROR event in the stream', (t) =>
  withStore(
    async (f) => {
      const from = Number((await f.store.create(cms(f), 'default', configMap('first'), admin)).metadata.resourceVersion);
      await f.store.create(cms(f), 'default', configMap('a'), admin);
      const b = await f.store.create(cms(f), 'default', configMap('b'), admin);
      await f.cache.waitForRevision(Number(b.metadata.resourceVersion), 2000);
      f.tickCache(5000); // the next event trims first, a and b from the cache's memory
      const c = await f.store.create(cms(f), 'default', configMap('c'), admin);
      await f.cache.waitForRevision(Number(c.metadata.resourceVersion), 2000);
      await f.storage.compact(Number(b.metadata.resourceVersion));
      // A stream that ended on its own: the handler's promise settles without the server stopping.
      const res = await call(f, handleWatch, 'GET', `${CMS}?watch=1&resourceVersion=${from}`);
      t.is(res.statusCode, 200);
      const [ev] = res.lines();
      t.is(ev.type, 'ERROR');
      t.like(ev.object, { kind: 'Status', status: 'Failure', reason: 'Expired', code: 410, message: `too old resource version: ${from}` });
    },
    { retainMs: 1000 },
  ));

test('a streaming list: the initial objects, then a BOOKMARK marking their end', (t) =>
  withStore(async (f) => {
    await f.store.create(cms(f), 'default', configMap('a'), admin);
    const rv = await f.storage.currentRevision();
    const ac = new AbortController();
    const w = start(f, handleWatch, 'GET', `${CMS}?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&resourceVersion=`, { signal: ac.signal });
    await w.res.waitForLines(2);
    const [added, bookmark] = w.res.lines();
    t.deepEqual([added.type, added.object.metadata.name], ['ADDED', 'a']);
    t.is(bookmark.type, 'BOOKMARK');
    t.deepEqual(bookmark.object, { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: String(rv), annotations: { [INITIAL_EVENTS_END]: 'true', [SVC_INITIAL_EVENTS_END]: 'true' } } });
    // client-go's streaming list (WatchListClient) waits for exactly this key.
    t.is(INITIAL_EVENTS_END, 'k8s.io/initial-events-end');
    ac.abort();
    await w.done;
  }));

test('bad watch parameters are 400 before the stream starts', (t) =>
  withStore(async (f) => {
    const cases: Array<[string, RegExp]> = [
      ['sendInitialEvents=true', /sendInitialEvents requires setting resourceVersionMatch to NotOlderThan/],
      ['sendInitialEvents=true&resourceVersionMatch=NotOlderThan', /sendInitialEvents requires allowWatchBookmarks=true/],
      ['resourceVersionMatch=NotOlderThan&resourceVersion=1', /resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided/],
      ['timeoutSeconds=soon', /^timeoutSeconds: Invalid value: "soon"/],
      ['timeoutSeconds=-1', /^timeoutSeconds: Invalid value: "-1": must be a non-negative integer/],
      ['timeoutSeconds=1.5', /^timeoutSeconds: Invalid value: "1.5": must be a non-negative integer/],
      ['resourceVersion=abc', /^invalid resource version "abc"/],
    ];
    for (const [query, message] of cases) {
      const res = await call(f, handleWatch, 'GET', `${CMS}?watch=1&${query}`);
      t.is(res.statusCode, 400, query);
      t.regex(res.body.message, message);
    }
  }));

/** A response whose peer has stopped reading: it takes the first chunk, then nothing (its buffer fills). */
class StalledResponse extends FakeResponse {
  private took = false;
  override _write(chunk: Buffer | string, enc: BufferEncoding, cb: () => void): void {
    if (this.took) return; // never calls back: the peer reads no more
    this.took = true;
    super._write(chunk, enc, cb);
  }
}

const big = (name: string) => ({ ...configMap(name), data: { k: 'x'.repeat(40_000) } });
const configMapWatchers = (f: StoreFixture) => f.cache.stats().watchers.get('/configmaps') ?? 0;

test('a watch whose peer stopped reading ends when its connection closes, and lets go of its watcher', (t) =>
  withStore(async (f) => {
    const res = new StalledResponse();
    const w = start(f, handleWatch, 'GET', `${CMS}?watch=1`, { res });
    await f.store.create(cms(f), 'default', big('a'), admin);
    await f.store.create(cms(f), 'default', big('b'), admin);
    await f.store.create(cms(f), 'default', big('c'), admin);
    await f.cache.waitForRevision(await f.storage.currentRevision(), 2000);
    await flush();
    t.true(res.writableNeedDrain, 'the handler is waiting for the peer');
    t.is(configMapWatchers(f), 1);
    res.destroy(); // the client goes away: no 'drain' will ever come
    await w.done;
    t.is(configMapWatchers(f), 0);
  }));

test('a watch whose peer takes nothing for the write deadline is cut', (t) =>
  withStore(async (f) => {
    const clock = new FakeClock();
    const res = new StalledResponse();
    const w = start(f, handleWatch, 'GET', `${CMS}?watch=1`, { res, after: (ms, fn) => clock.after(ms, fn) });
    await f.store.create(cms(f), 'default', big('a'), admin);
    await f.store.create(cms(f), 'default', big('b'), admin);
    await f.cache.waitForRevision(await f.storage.currentRevision(), 2000);
    await flush();
    t.true(res.writableNeedDrain);
    await clock.advance(WRITE_DEADLINE_MS - 1);
    t.false(res.destroyed);
    await clock.advance(1);
    await w.done;
    t.true(res.destroyed);
    t.is(configMapWatchers(f), 0);
  }));

test('timeoutSeconds=0 leaves the server\'s own timeout, and longer than the server\'s longest is clamped: neither ends the watch at once', (t) =>
  withStore(async (f) => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    t.teardown(() => process.off('warning', onWarning));
    for (const [i, timeout] of ['0', '99999999999999999999'].entries()) {
      const delays: number[] = [];
      const clock = new FakeClock();
      const ac = new AbortController();
      const w = start(f, handleWatch, 'GET', `${CMS}?watch=1&timeoutSeconds=${timeout}`, { signal: ac.signal, after: (ms, fn) => (delays.push(ms), clock.after(ms, fn)) });
      await f.store.create(cms(f), 'default', configMap(`cm${i}`), admin);
      await w.res.waitForLines(i + 1);
      t.is(w.res.lines()[i].object.metadata.name, `cm${i}`, `timeoutSeconds=${timeout}`);
      t.true(delays[0] >= 1_800_000 && delays[0] <= MAX_WATCH_TIMEOUT_S * 1000, `timeoutSeconds=${timeout}: ${delays[0]} ms`);
      ac.abort();
      await w.done;
    }
    await flush();
    t.deepEqual(warnings, []);
  }));

test('timeoutSeconds ends the watch after that long, normally', (t) =>
  withStore(async (f) => {
    const clock = new FakeClock();
    const w = start(f, handleWatch, 'GET', `${CMS}?watch=1&timeoutSeconds=5`, { after: (ms, fn) => clock.after(ms, fn) });
    await f.store.create(cms(f), 'default', configMap('a'), admin);
    await w.res.waitForLines(1);
    await clock.advance(4999);
    t.false(w.res.writableEnded);
    await clock.advance(1);
    await w.done;
    t.true(w.res.writableEnded);
    t.false(w.res.destroyed && !w.res.writableFinished, 'ended, not cut');
  }));

test('watchTimeoutSeconds: unset and 0 pick the server\'s own in [1800, 3600) s, larger values are clamped to 3600 s', (t) => {
  for (const text of [null, '', '0']) {
    const s = watchTimeoutSeconds(text);
    t.true(s >= 1800 && s < 3600, `${text}: ${s}`);
  }
  t.is(watchTimeoutSeconds('1'), 1);
  t.is(watchTimeoutSeconds('3600'), 3600);
  t.is(watchTimeoutSeconds('3601'), MAX_WATCH_TIMEOUT_S);
  t.is(watchTimeoutSeconds('99999999999999999999'), MAX_WATCH_TIMEOUT_S);
});
