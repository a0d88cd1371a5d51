import test from 'ava';
import { isResourceExpired } from '../../../../common/informer/list-watch';
import { tooOld, type WatchCache } from '../../../../apiserver/store/watch-cache';
import type { ObjectStore } from '../../../../apiserver/store/object-store';
import { storeListWatch, StoreInformers, typedHandler, waitForCacheSync } from '../../../../apiserver/store/list-watch';
import type { KObject } from '../../../../apiserver/api/types';
import { adminCtx, openFixture } from '../controllers/store-fixture';

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

test('lists through the store at its revision, then follows the watch cache from there; one namespace only when asked', async (t) => {
  const f = await openFixture();
  t.teardown(() => f.close());
  const cms = f.type('', 'v1', 'configmaps');
  const a = await f.store.create(cms, 'a', { metadata: { name: 'one' } }, adminCtx);
  await f.store.create(cms, 'b', { metadata: { name: 'two' } }, adminCtx);
  const lw = storeListWatch(f.store, f.cache, cms, { namespace: 'a' });
  const list = await lw.list(f.signal);
  t.deepEqual(list.items.map((o) => `${o.metadata.namespace}/${o.metadata.name}`), ['a/one']);
  t.is(list.resourceVersion, String(Number(a.metadata.resourceVersion) + 1), 'the store revision, past both writes');
  const ac = new AbortController();
  const it = lw.watch(list.resourceVersion, ac.signal, { timeoutMs: 60_000 })[Symbol.asyncIterator]();
  await f.store.create(cms, 'b', { metadata: { name: 'elsewhere' } }, adminCtx);
  await f.store.create(cms, 'a', { metadata: { name: 'three' } }, adminCtx);
  const ev = (await it.next()).value!;
  t.is(ev.type, 'ADDED');
  t.is(ev.object.metadata.name, 'three');
  ac.abort();
  t.true((await it.next()).done, 'the watch ends normally when its signal aborts');
});

test('the watch cache\'s 410 becomes ResourceExpiredError', async (t) => {
  const cache = {
    whenReady: () => Promise.resolve(),
    // eslint-disable-next-line require-yield, @typescript-eslint/require-await -- a watch that fails at once
    async *watch() {
      throw tooOld(3);
    },
  } as unknown as WatchCache;
  const lw = storeListWatch({} as ObjectStore, cache, { group: '', version: 'v1', resource: 'pods', namespaced: true } as never);
  const err = await t.throwsAsync(async () => {
    for await (const _ of lw.watch('3', new AbortController().signal, { timeoutMs: 1000 })) t.fail();
  });
  t.true(isResourceExpired(err));
  t.regex(err.message, /too old resource version: 3/);
});

test('a match keeps only matching objects: one that stops matching is deleted, one that starts matching added', async (t) => {
  const f = await openFixture();
  t.teardown(() => f.close());
  const cms = f.type('', 'v1', 'configmaps');
  await f.store.create(cms, 'a', { metadata: { name: 'in', labels: { keep: 'yes' } } }, adminCtx);
  await f.store.create(cms, 'a', { metadata: { name: 'out' } }, adminCtx);
  const informers = new StoreInformers(f.store, f.cache, { log: f.log });
  const informer = informers.informer(cms, { view: { name: 'kept', match: (o) => o.metadata.labels?.keep === 'yes' } });
  const seen: string[] = [];
  informer.addEventHandler({ onAdd: (o) => seen.push(`+${o.metadata.name}`), onDelete: (o) => seen.push(`-${o.metadata.name}`) });
  informers.start(f.signal);
  t.true(await waitForCacheSync(f.signal, informer));
  t.deepEqual(informer.store.listKeys(), ['a/in']);
  const label = (name: string, labels: Record<string, string>) => f.store.update(cms, 'a', name, (c) => ({ ...c!, metadata: { ...c!.metadata, labels } }), adminCtx);
  await label('in', {});
  await label('out', { keep: 'yes' });
  await until(() => seen.length === 3, 'both changes');
  t.deepEqual(seen, ['+in', '-in', '+out']);
  t.deepEqual(informer.store.listKeys(), ['a/out']);
});

test('the factory shares one informer per type, namespace and view, and starts the ones asked for after start', async (t) => {
  const f = await openFixture();
  t.teardown(() => f.close());
  const nodes = f.type('', 'v1', 'nodes');
  const secrets = f.type('', 'v1', 'secrets');
  const informers = new StoreInformers(f.store, f.cache, { log: f.log });
  const n1 = informers.informer(nodes);
  t.is(informers.informer(nodes), n1);
  t.is(informers.informer(nodes, { namespace: 'ignored-for-cluster-scoped' }), n1);
  t.not(informers.informer(nodes, { view: { name: 'v' } }), n1);
  t.not(informers.informer(secrets, { namespace: 'svc-system' }), informers.informer(secrets));
  informers.start(f.signal);
  const late = informers.informer(f.type('', 'v1', 'configmaps'));
  t.true(await waitForCacheSync(f.signal, n1, late));
  // A typed handler skips re-deliveries at the same resourceVersion (re-lists, resyncs).
  const calls: string[] = [];
  const h = typedHandler(nodes, { upsert: (_t, o: KObject) => calls.push(`upsert ${o.metadata.resourceVersion}`), remove: () => calls.push('remove') });
  const n = { metadata: { name: 'n', resourceVersion: '5' } };
  h.onUpdate!(n, { metadata: { name: 'n', resourceVersion: '5' } });
  h.onUpdate!(n, { metadata: { name: 'n', resourceVersion: '6' } });
  t.deepEqual(calls, ['upsert 6']);
});
