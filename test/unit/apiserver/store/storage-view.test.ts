import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import { StoreInformers, storeListWatch } from '../../../../apiserver/store/list-watch';
import { adminCtx, openFixture, type Fixture } from '../controllers/store-fixture';

/**
 * core/v1 Event and events.svc.io/v1 Event are one stored resource (ResourceType.storedAs), as
 * upstream: written through either, read, listed, watched, updated and deleted through both.
 */

function coreEvent(name: string, over: Partial<KObject> = {}): KObject {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name },
    involvedObject: { kind: 'Pod', namespace: 'ns', name: 'web', uid: 'u1', apiVersion: 'v1' },
    reason: 'Pulled',
    message: 'Successfully pulled image "nginx"',
    source: { component: 'kubelet', host: 'node-a' },
    firstTimestamp: '2025-03-01T12:00:00Z',
    lastTimestamp: '2025-03-01T12:00:05Z',
    count: 2,
    type: 'Normal',
    reportingComponent: 'kubelet',
    reportingInstance: 'node-a',
    ...over,
  };
}

function v1Event(name: string): KObject {
  return {
    apiVersion: 'events.svc.io/v1',
    kind: 'Event',
    metadata: { name },
    eventTime: '2025-03-01T12:00:00.000000Z',
    regarding: { kind: 'Pod', namespace: 'ns', name: 'web', uid: 'u1' },
    reason: 'Scheduled',
    action: 'Binding',
    note: 'Successfully assigned ns/web to node-a',
    type: 'Normal',
    reportingController: 'default-scheduler',
    reportingInstance: 'default-scheduler-host',
  };
}

function types(f: Fixture) {
  return { core: f.type('', 'v1', 'events'), v1: f.type('events.svc.io', 'v1', 'events') };
}

test('an event written through core/v1 is read and listed through events.svc.io/v1 with upstream\'s field names, and back', async (t) => {
  const f = await openFixture();
  t.teardown(() => f.close());
  const { core, v1 } = types(f);
  const created = await f.store.create(core, 'ns', coreEvent('a'), adminCtx);
  const seen = await f.store.get(v1, 'ns', 'a');
  t.is(seen.apiVersion, 'events.svc.io/v1');
  t.is(seen.metadata.resourceVersion, created.metadata.resourceVersion);
  t.is(seen.metadata.uid, created.metadata.uid);
  t.deepEqual(seen.regarding, coreEvent('a').involvedObject);
  t.is(seen.note, 'Successfully pulled image "nginx"');
  t.deepEqual(seen.deprecatedSource, { component: 'kubelet', host: 'node-a' });
  t.is(seen.deprecatedCount, 2);
  t.is(seen.deprecatedFirstTimestamp, '2025-03-01T12:00:00Z');
  t.is(seen.deprecatedLastTimestamp, '2025-03-01T12:00:05Z');
  t.is(seen.reportingController, 'kubelet');
  for (const k of ['involvedObject', 'message', 'source', 'count', 'firstTimestamp', 'lastTimestamp', 'reportingComponent']) t.false(k in seen, k);

  await f.store.create(v1, 'ns', v1Event('b'), adminCtx);
  const back = await f.store.get(core, 'ns', 'b');
  t.is(back.apiVersion, 'v1');
  t.is(back.message, 'Successfully assigned ns/web to node-a');
  t.deepEqual(back.involvedObject, v1Event('b').regarding);
  t.is(back.reportingComponent, 'default-scheduler');
  t.is(back.action, 'Binding');

  const byCore = await f.store.list(core, 'ns', { labelSelector: [], fieldSelector: [] });
  const byV1 = await f.store.list(v1, 'ns', { labelSelector: [], fieldSelector: [] });
  t.deepEqual(byCore.items.map((o) => o.metadata.name), ['a', 'b']);
  t.deepEqual(byV1.items.map((o) => o.metadata.name), ['a', 'b']);
  t.true(byV1.items.every((o) => o.apiVersion === 'events.svc.io/v1' && o.regarding !== undefined));
  const sel = await f.store.list(v1, 'ns', { labelSelector: [], fieldSelector: [{ key: 'reportingController', operator: '=', values: ['kubelet'] }] });
  t.deepEqual(sel.items.map((o) => o.metadata.name), ['a'], 'field selectors read the view\'s own fields');
});

test('updates and deletes through one view are seen through the other; a name is taken for both', async (t) => {
  const f = await openFixture();
  t.teardown(() => f.close());
  const { core, v1 } = types(f);
  await f.store.create(core, 'ns', coreEvent('a'), adminCtx);
  await t.throwsAsync(f.store.create(v1, 'ns', v1Event('a'), adminCtx), { message: /already exists/ });
  await f.store.create(v1, 'ns', v1Event('b'), adminCtx);
  await f.store.update(v1, 'ns', 'b', (cur) => ({ ...cur!, series: { count: 3, lastObservedTime: '2025-03-01T12:01:00.000000Z' } }), adminCtx);
  const c = await f.store.get(core, 'ns', 'b');
  t.deepEqual(c.series, { count: 3, lastObservedTime: '2025-03-01T12:01:00.000000Z' });
  t.is(c.message, 'Successfully assigned ns/web to node-a', 'the rest is kept');
  await f.store.update(core, 'ns', 'a', (cur) => ({ ...cur!, count: 5 }), adminCtx);
  t.is((await f.store.get(v1, 'ns', 'a')).deprecatedCount, 5);
  await f.store.delete(v1, 'ns', 'a', {}, adminCtx);
  await t.throwsAsync(f.store.get(core, 'ns', 'a'), { message: /not found/ });
});

test('watches and informers of each view get the objects in their own form', async (t) => {
  const f = await openFixture();
  t.teardown(() => f.close());
  const { core, v1 } = types(f);
  const lw = storeListWatch(f.store, f.cache, v1);
  const list = await lw.list(f.signal);
  const ac = new AbortController();
  t.teardown(() => ac.abort());
  const it = lw.watch(list.resourceVersion, ac.signal, { timeoutMs: 60_000 })[Symbol.asyncIterator]();
  await f.store.create(core, 'ns', coreEvent('a'), adminCtx);
  await f.store.update(core, 'ns', 'a', (cur) => ({ ...cur!, count: 3 }), adminCtx);
  const added = (await it.next()).value!;
  t.is(added.type, 'ADDED');
  t.is(added.object.apiVersion, 'events.svc.io/v1');
  t.is(added.object.note, 'Successfully pulled image "nginx"');
  const modified = (await it.next()).value!;
  t.is(modified.type, 'MODIFIED');
  t.is(modified.object.deprecatedCount, 3);
  t.is(modified.prevObject?.deprecatedCount, 2);

  const informers = new StoreInformers(f.store, f.cache, { log: f.log });
  const a = informers.informer(core);
  const b = informers.informer(v1);
  t.not(a, b, 'one informer per served form');
  informers.start(f.signal);
  t.true(await a.whenSynced(f.signal));
  t.true(await b.whenSynced(f.signal));
  t.is(a.get('ns/a')?.message, 'Successfully pulled image "nginx"');
  t.is(b.get('ns/a')?.note, 'Successfully pulled image "nginx"');
  // The stored objects of the watch cache are not changed by the conversions.
  t.is((await f.store.get(core, 'ns', 'a')).involvedObject !== undefined, true);
});
