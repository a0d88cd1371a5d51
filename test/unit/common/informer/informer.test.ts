import test from 'ava';
import { Informer, type EventHandler } from '../../../../common/informer/informer';
import { ResourceExpiredError } from '../../../../common/informer/list-watch';
import { FakeClock, flush } from '../../../helpers/fake-clock';
import { FakeListWatch, obj, type Obj } from './fake-list-watch';

const MIN = 60_000;

/** Records every notification as a line. */
function recorder(): { seen: string[]; handler: EventHandler<Obj> } {
  const seen: string[] = [];
  return {
    seen,
    handler: {
      onAdd: (o, initial) => seen.push(`add ${o.metadata.name}@${o.metadata.resourceVersion}${initial ? ' initial' : ''}`),
      onUpdate: (old, o) => seen.push(`update ${o.metadata.name} ${old.metadata.resourceVersion}->${o.metadata.resourceVersion}`),
      onDelete: (o) => seen.push(`delete ${o.metadata.name}@${o.metadata.resourceVersion}`),
    },
  };
}

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (cond()) return;
    await flush(2);
  }
  throw new Error(`timed out waiting for ${what}`);
}

function setup(t: { teardown(fn: () => Promise<void> | void): void }, o: { random?: number; resyncPeriodMs?: number } = {}) {
  const clock = new FakeClock();
  const lw = new FakeListWatch();
  const warnings: string[] = [];
  const infos: string[] = [];
  const log = { debug: () => undefined, info: (_o: object, m: string) => infos.push(m), warn: (_o: object, m: string) => warnings.push(m) };
  const informer = new Informer<Obj>(lw, { name: 'things', clock, log, minWatchTimeoutMs: MIN, random: () => o.random ?? 0, resyncPeriodMs: o.resyncPeriodMs });
  const rec = recorder();
  informer.addEventHandler(rec.handler);
  const ac = new AbortController();
  // The run is awaited at teardown; tests only start it.
  const start = (): void => {
    const run = informer.run(ac.signal);
    t.teardown(async () => {
      ac.abort();
      await run;
    });
  };
  return { clock, lw, informer, rec, start, warnings, infos, ac };
}

test('lists, then watches from the list\'s resourceVersion; handlers and cache follow the events', async (t) => {
  const { lw, informer, rec, start } = setup(t);
  lw.lists.push({ items: [obj('a', '1'), obj('b', '2')], resourceVersion: '5' });
  t.false(informer.hasSynced());
  start();
  t.true(await informer.whenSynced());
  await until(() => lw.watches.length === 1, 'the watch');
  t.is(lw.current.from, '5');
  t.deepEqual(rec.seen, ['add a@1 initial', 'add b@2 initial']);
  lw.current.push({ type: 'ADDED', object: obj('c', '6') });
  lw.current.push({ type: 'MODIFIED', object: obj('a', '7', 'changed') });
  lw.current.push({ type: 'DELETED', object: obj('b', '8') });
  lw.current.push({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '9' } } });
  await until(() => informer.lastSyncResourceVersion() === '9', 'the bookmark');
  t.deepEqual(rec.seen.slice(2), ['add c@6', 'update a 1->7', 'delete b@8']);
  t.deepEqual(informer.store.listKeys().sort(), ['a', 'c']);
  t.is(informer.get('a')?.spec, 'changed');
  t.is(lw.listCalls, 1);
});

test('a watch the source ends cleanly is followed by a re-list: handlers hear what changed meanwhile', async (t) => {
  const { lw, informer, rec, start, clock } = setup(t);
  lw.lists.push({ items: [obj('a', '1'), obj('b', '2'), obj('c', '3')], resourceVersion: '3' });
  lw.lists.push({ items: [obj('a', '1'), obj('b', '10'), obj('d', '11')], resourceVersion: '12' });
  start();
  await until(() => lw.watches.length === 1, 'the first watch');
  await clock.advance(2000); // a watch that lasted a while: not a "very short" one
  lw.current.end();
  await until(() => lw.watches.length === 2, 'the second watch');
  t.is(lw.listCalls, 2);
  t.is(lw.current.from, '12');
  // Still there: updated (even unchanged, as client-go's re-list); new: added; missing: deleted with its last state.
  t.deepEqual(rec.seen.slice(3), ['update a 1->1', 'update b 2->10', 'add d@11', 'delete c@3']);
  t.deepEqual(informer.store.listKeys().sort(), ['a', 'b', 'd']);
});

test('the informer ends its own watch after the timeout, a random time between the minimum and twice it, then lists again', async (t) => {
  const { lw, start, clock } = setup(t, { random: 0.5 });
  lw.lists.push({ items: [], resourceVersion: '1' });
  start();
  await until(() => lw.watches.length === 1, 'the watch');
  t.is(lw.current.hint.timeoutMs, MIN * 1.5);
  await clock.advance(MIN * 1.5 - 1);
  t.false(lw.current.signal.aborted);
  await clock.advance(1);
  t.true(lw.watches[0].signal.aborted, 'the watch is ended by the informer');
  await until(() => lw.watches.length === 2, 'the next watch');
  t.is(lw.listCalls, 2);
});

test('410 Gone re-lists at once; a second 410 right after backs off', async (t) => {
  const { lw, start, clock, infos, warnings } = setup(t);
  lw.lists.push({ items: [obj('a', '1')], resourceVersion: '1' });
  start();
  await until(() => lw.watches.length === 1, 'the watch');
  lw.current.fail(new ResourceExpiredError('too old resource version: 1'));
  await until(() => lw.watches.length === 2, 'the watch after the re-list');
  t.is(lw.listCalls, 2);
  t.true(infos.some((m) => m.includes('410')));
  lw.current.fail(new ResourceExpiredError('too old resource version: 1'));
  await flush();
  t.is(lw.listCalls, 2, 'no immediate re-list the second time');
  t.deepEqual(clock.delays(), [800]);
  t.is(warnings.length, 1);
  await clock.advance(800);
  await until(() => lw.watches.length === 3, 'the watch after the back-off');
  t.is(lw.listCalls, 3);
});

test('failed lists are retried with back-off doubling from 800 ms to 30 s; a good watch resets it', async (t) => {
  const { lw, informer, start, clock } = setup(t);
  for (let i = 0; i < 8; i++) lw.lists.push(new Error('store unavailable'));
  lw.lists.push({ items: [obj('a', '1')], resourceVersion: '1' });
  start();
  const waits: number[] = [];
  while (!informer.hasSynced()) {
    await flush();
    const [next] = clock.delays();
    if (next === undefined) break;
    waits.push(next);
    await clock.advance(next);
  }
  t.deepEqual(waits.slice(0, 8), [800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000]);
  t.true(informer.hasSynced());
  t.is(lw.listCalls, 9);
  // A watch that ended normally resets the back-off.
  await clock.advance(5000);
  lw.lists.push(new Error('again'));
  lw.current.end();
  await flush();
  t.is(clock.delays()[0], 800);
});

test('a source that ends watches at once with no events is treated as failing (back-off)', async (t) => {
  const { lw, start, clock } = setup(t);
  lw.lists.push({ items: [], resourceVersion: '1' });
  start();
  await until(() => lw.watches.length === 1, 'the watch');
  lw.current.end();
  await flush();
  t.is(lw.listCalls, 1);
  t.is(clock.delays()[0], 800);
});

test('resync: every cached object is handed again as an update each period', async (t) => {
  const { lw, rec, start, clock } = setup(t, { resyncPeriodMs: 20_000 });
  lw.lists.push({ items: [obj('a', '1'), obj('b', '2')], resourceVersion: '2' });
  start();
  await until(() => rec.seen.length === 2, 'the list');
  await clock.advance(19_999);
  t.is(rec.seen.length, 2);
  await clock.advance(1);
  t.deepEqual(rec.seen.slice(2).sort(), ['update a 1->1', 'update b 2->2']);
  await clock.advance(20_000);
  t.is(rec.seen.length, 6);
  t.is(lw.listCalls, 1, 'a resync is not a re-list');
});

test('a handler added later gets the cache replayed; a removed or aborted one hears nothing more; a throwing one does not stop the others', async (t) => {
  const { lw, informer, start, warnings } = setup(t);
  lw.lists.push({ items: [obj('a', '1')], resourceVersion: '1' });
  start();
  await informer.whenSynced();
  informer.addEventHandler({
    onAdd: () => {
      throw new Error('boom');
    },
  });
  const late = recorder();
  const ac = new AbortController();
  informer.addEventHandler(late.handler, { signal: ac.signal });
  t.deepEqual(late.seen, ['add a@1 initial']);
  const removed = recorder();
  const remove = informer.addEventHandler(removed.handler);
  remove();
  await until(() => lw.watches.length === 1, 'the watch');
  lw.current.push({ type: 'ADDED', object: obj('b', '2') });
  await until(() => late.seen.length === 2, 'the add');
  t.deepEqual(late.seen, ['add a@1 initial', 'add b@2']);
  t.deepEqual(removed.seen, ['add a@1 initial']);
  t.true(warnings.some((m) => m.includes('handler threw')));
  ac.abort();
  lw.current.push({ type: 'ADDED', object: obj('c', '3') });
  await until(() => informer.get('c') !== undefined, 'c cached');
  t.is(late.seen.length, 2);
});

test('transform: the cache and the handlers get the transformed objects; deletes of objects never cached are dropped', async (t) => {
  const clock = new FakeClock();
  const lw = new FakeListWatch();
  const informer = new Informer<Obj>(lw, { name: 'x', clock, transform: (o) => ({ metadata: o.metadata }) });
  const rec = recorder();
  informer.addEventHandler(rec.handler);
  lw.lists.push({ items: [obj('a', '1', 'big')], resourceVersion: '1' });
  const ac = new AbortController();
  const run = informer.run(ac.signal);
  await informer.whenSynced();
  t.is(informer.get('a')?.spec, undefined);
  await until(() => lw.watches.length === 1, 'the watch');
  lw.current.push({ type: 'DELETED', object: obj('never', '2') });
  lw.current.push({ type: 'DELETED', object: obj('a', '3') });
  await until(() => informer.store.size() === 0, 'a deleted');
  t.deepEqual(rec.seen, ['add a@1 initial', 'delete a@3']);
  ac.abort();
  await run;
});

test('whenSynced answers false when the signal aborts first; run twice throws', async (t) => {
  const { lw, informer, start } = setup(t);
  lw.lists.push(new Error('down'));
  const ac = new AbortController();
  const waiting = informer.whenSynced(ac.signal);
  ac.abort();
  t.false(await waiting);
  start();
  await t.throwsAsync(informer.run(new AbortController().signal), { message: /already running/ });
});

test('resumeAfterCleanEnd (client-go\'s reflector): clean ends and failures resume the watch from the last version; only 410 lists again', async (t) => {
  const clock = new FakeClock();
  const lw = new FakeListWatch();
  const informer = new Informer<Obj>(lw, { name: 'x', clock, minWatchTimeoutMs: MIN, random: () => 0, resumeAfterCleanEnd: true });
  lw.lists.push({ items: [obj('a', '1')], resourceVersion: '4' });
  const ac = new AbortController();
  const run = informer.run(ac.signal);
  t.teardown(async () => {
    ac.abort();
    await run;
  });
  await until(() => lw.watches.length === 1, 'the watch');
  lw.current.push({ type: 'MODIFIED', object: obj('a', '5') });
  await until(() => informer.lastSyncResourceVersion() === '5', 'the event');
  lw.current.end();
  await until(() => lw.watches.length === 2, 'the resumed watch');
  t.is(lw.current.from, '5');
  await clock.advance(MIN); // the informer's own timeout: resumed too
  await until(() => lw.watches.length === 3, 'the watch after the timeout');
  t.is(lw.current.from, '5');
  lw.current.fail(new Error('connection reset'));
  await flush();
  t.deepEqual(clock.delays()[0], 800);
  await clock.advance(800);
  await until(() => lw.watches.length === 4, 'the watch after the back-off');
  t.is(lw.listCalls, 1, 'no list so far');
  lw.lists.push({ items: [], resourceVersion: '9' });
  lw.current.fail(new ResourceExpiredError('too old'));
  await until(() => lw.watches.length === 5, 'the watch after the re-list');
  t.is(lw.listCalls, 2);
  t.is(lw.current.from, '9');
});

test('a handler with onReplace gets every list whole, and watch events one by one', async (t) => {
  const { lw, informer, start, clock } = setup(t);
  const seen: string[] = [];
  informer.addEventHandler({
    onReplace: (objs) => seen.push(`replace [${objs.map((o) => o.metadata.name).join(',')}]`),
    onAdd: (o) => seen.push(`add ${o.metadata.name}`),
    onDelete: (o) => seen.push(`delete ${o.metadata.name}`),
  });
  lw.lists.push({ items: [obj('a', '1'), obj('b', '2')], resourceVersion: '2' });
  lw.lists.push({ items: [obj('b', '2'), obj('c', '3')], resourceVersion: '3' });
  start();
  await until(() => lw.watches.length === 1, 'the watch');
  lw.current.push({ type: 'ADDED', object: obj('z', '3') });
  lw.current.push({ type: 'DELETED', object: obj('z', '3') });
  await until(() => seen.length === 3, 'the events');
  await clock.advance(2000);
  lw.current.end();
  await until(() => seen.length === 4, 'the re-list');
  t.deepEqual(seen, ['replace [a,b]', 'add z', 'delete z', 'replace [b,c]']);
  const late: string[] = [];
  informer.addEventHandler({ onReplace: (objs) => late.push(objs.map((o) => o.metadata.name).sort().join(',')) });
  t.deepEqual(late, ['b,c'], 'a handler added later gets the cache as one replace');
});
