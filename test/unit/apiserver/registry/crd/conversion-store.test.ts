import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import type { ConversionTransport } from '../../../../../apiserver/registry/crd/conversion-webhook';
import { customResourceTypes } from '../../../../../apiserver/registry/crd/custom-type';
import type { ResourceType } from '../../../../../apiserver/registry/resource-type';
import { objectKey } from '../../../../../apiserver/store/keys';
import { storeListWatch } from '../../../../../apiserver/store/list-watch';
import { adminCtx, openFixture, type Fixture } from '../../controllers/store-fixture';
import { crd } from './crd-fixtures';

// A Webhook CRD through the store: stored at the storage version, converted on every read (get,
// list, watch) to the version asked for and on every write to the storage version, by the
// conversion webhook (an in-process transport here; the e2e calls a real one over TLS).

type Rec = Record<string, any>;

// v1: spec.host and spec.port; v2: spec.endpoint "host:port".
const v1Schema = { type: 'object', properties: { spec: { type: 'object', properties: { host: { type: 'string' }, port: { type: 'integer' } } } } };
const v2Schema = { type: 'object', properties: { spec: { type: 'object', properties: { endpoint: { type: 'string' } } } } };

function webhookCrd(storage: 'v1' | 'v2' = 'v1'): KObject {
  const o = crd({
    versions: [
      { name: 'v1', served: true, storage: storage === 'v1', schema: { openAPIV3Schema: v1Schema } },
      { name: 'v2', served: true, storage: storage === 'v2', schema: { openAPIV3Schema: v2Schema } },
    ],
  });
  (o.spec as Rec).conversion = { strategy: 'Webhook', webhook: { clientConfig: { url: 'https://conv.example.com/convert' }, conversionReviewVersions: ['v1'] } };
  return o;
}

function convertOne(o: Rec, to: string): Rec {
  const spec = o.spec ?? {};
  if (to === 'example.com/v2') return { ...o, apiVersion: to, spec: { endpoint: `${spec.host}:${spec.port}` } };
  const [host, port] = String(spec.endpoint).split(':');
  return { ...o, apiVersion: to, spec: { host, port: Number(port) } };
}

/** The webhook, in process: counts its calls and the objects it was sent. */
function webhook(): ConversionTransport & { calls: number; objects: number; down: boolean } {
  const w = {
    calls: 0,
    objects: 0,
    down: false,
    post(_cc: Rec, review: unknown) {
      const r = review as Rec;
      if (w.down) return Promise.reject(new Error('Post "https://conv.example.com/convert?timeout=30s": connect ECONNREFUSED'));
      w.calls++;
      w.objects += r.request.objects.length;
      return Promise.resolve({
        apiVersion: r.apiVersion,
        kind: 'ConversionReview',
        response: { uid: r.request.uid, result: { status: 'Success' }, convertedObjects: r.request.objects.map((o: Rec) => convertOne(o, r.request.desiredAPIVersion)) },
      });
    },
  };
  return w;
}

// A fresh store for each test; the tests are serial, so each has f to itself.
let f: Fixture;
test.beforeEach(async () => {
  f = await openFixture();
});
test.afterEach.always(() => f?.close());

const widget = (name: string): KObject => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name, namespace: 'default' }, spec: { host: 'db', port: 5432 } });

/** What storage holds for the object at revision rev (the watch cache hands out stored objects as they are). */
async function storedAt(t: ResourceType, name: string, rev: number): Promise<Rec> {
  const ac = new AbortController();
  try {
    for await (const ev of f.cache.watch(objectKey(t, 'default', name), rev - 1, ac.signal)) return ev.object;
    throw new Error('no event');
  } finally {
    ac.abort();
  }
}

test.serial('every version of a Webhook CRD is served with the CRD\'s converter; without a transport only the storage version', (t) => {
  const w = webhook();
  const types = customResourceTypes(webhookCrd(), Date.now, w).map((v) => v.type);
  t.deepEqual(types.map((x) => x.version), ['v1', 'v2']);
  t.truthy(types[0].converter);
  t.is(types[0].converter, types[1].converter);
  t.is(types[1].storedAs, undefined);
  t.deepEqual(customResourceTypes(webhookCrd()).map((v) => v.type.version), ['v1']);
});

test.serial('created at v1, read at v2 (get, list in one call), written at v2 and stored at v1', async (t) => {
  const w = webhook();
  const [v1, v2] = customResourceTypes(webhookCrd(), Date.now, w).map((v) => v.type);
  await f.store.create(v1, 'default', widget('a'), adminCtx);
  await f.store.create(v1, 'default', widget('b'), adminCtx);
  await f.store.create(v1, 'default', widget('c'), adminCtx);
  t.is(w.calls, 0, 'the storage version needs no conversion');
  const got = await f.store.get(v2, 'default', 'a');
  t.is(got.apiVersion, 'example.com/v2');
  t.deepEqual(got.spec, { endpoint: 'db:5432' });
  t.is(w.calls, 1);
  const list = await f.store.list(v2, 'default', { labelSelector: [], fieldSelector: [] });
  t.deepEqual(list.items.map((o) => [o.apiVersion, (o.spec as Rec).endpoint]), [
    ['example.com/v2', 'db:5432'],
    ['example.com/v2', 'db:5432'],
    ['example.com/v2', 'db:5432'],
  ]);
  t.is(w.calls, 2, 'one review for the three items');
  // An update at v2: validated at v2, stored at v1 (converted), answered at v2.
  const { object } = await f.store.update(v2, 'default', 'a', (cur) => ({ ...cur!, spec: { endpoint: 'db2:6000' } }), adminCtx);
  t.deepEqual(object.spec, { endpoint: 'db2:6000' });
  const asV1 = await f.store.get(v1, 'default', 'a');
  t.deepEqual(asV1.spec, { host: 'db2', port: 6000 });
  // Storage holds the v1 form.
  const raw = await storedAt(v1, 'a', Number(object.metadata.resourceVersion));
  t.is(raw.apiVersion, 'example.com/v1');
  t.deepEqual(raw.spec, { host: 'db2', port: 6000 });
});

test.serial('a watch at v2 gets converted events; the watch at v1 none converted', async (t) => {
  const w = webhook();
  const [v1, v2] = customResourceTypes(webhookCrd(), Date.now, w).map((v) => v.type);
  const from = f.cache.currentRevision();
  const ac = new AbortController();
  t.teardown(() => ac.abort());
  const events = storeListWatch(f.store, f.cache, v2).watch(String(from), ac.signal, { timeoutMs: 60_000 })[Symbol.asyncIterator]();
  await f.store.create(v1, 'default', widget('a'), adminCtx);
  await f.store.update(v1, 'default', 'a', (cur) => ({ ...cur!, spec: { host: 'db', port: 1 } }), adminCtx);
  const first = (await events.next()).value;
  t.is(first.type, 'ADDED');
  t.is(first.object.apiVersion, 'example.com/v2');
  t.deepEqual(first.object.spec, { endpoint: 'db:5432' });
  const second = (await events.next()).value;
  t.is(second.type, 'MODIFIED');
  t.deepEqual(second.object.spec, { endpoint: 'db:1' });
  t.deepEqual(second.prevObject.spec, { endpoint: 'db:5432' });
  t.is(w.calls, 2, 'one review per event, prevObject with object');
});

test.serial('objects stored at an older storage version are converted for the storage version too; a list sends only those', async (t) => {
  const w = webhook();
  const [v1] = customResourceTypes(webhookCrd('v1'), Date.now, w).map((v) => v.type);
  await f.store.create(v1, 'default', widget('old'), adminCtx);
  // The CRD's storage version moves to v2: new writes are stored at v2.
  const [v1b, v2b] = customResourceTypes(webhookCrd('v2'), Date.now, w).map((v) => v.type);
  await f.store.create(v1b, 'default', widget('new'), adminCtx);
  // Converted to the v2 storage version, and what was stored back to v1 for the answer (as upstream decodes what etcd returns).
  t.is(w.calls, 2);
  t.is((await f.store.get(v2b, 'default', 'new')).apiVersion, 'example.com/v2');
  t.is(w.calls, 2, 'stored at v2: read at v2 without a call');
  const before = w.objects;
  const list = await f.store.list(v2b, 'default', { labelSelector: [], fieldSelector: [] });
  t.deepEqual(list.items.map((o) => [o.metadata.name, (o.spec as Rec).endpoint]), [
    ['new', 'db:5432'],
    ['old', 'db:5432'],
  ]);
  t.is(w.objects - before, 1, 'only the object stored at v1 was sent');
});

test.serial('a webhook that fails makes reads at other versions a 500 naming it; the storage version still reads', async (t) => {
  const w = webhook();
  const [v1, v2] = customResourceTypes(webhookCrd(), Date.now, w).map((v) => v.type);
  await f.store.create(v1, 'default', widget('a'), adminCtx);
  w.down = true;
  const err = await f.store.get(v2, 'default', 'a').then(
    () => undefined,
    (e: { code: number; message: string }) => e,
  );
  t.is(err?.code, 500);
  t.regex(err?.message ?? '', /conversion webhook for example\.com\/v1, Kind=Widget failed: Post "https:\/\/conv\.example\.com\/convert\?timeout=30s"/);
  const writeErr = await f.store.create(v2, 'default', { apiVersion: 'example.com/v2', kind: 'Widget', metadata: { name: 'b', namespace: 'default' }, spec: { endpoint: 'x:1' } }, adminCtx).then(
    () => undefined,
    (e: { code: number }) => e,
  );
  t.is(writeErr?.code, 500);
  t.is((await f.store.get(v1, 'default', 'a')).apiVersion, 'example.com/v1');
});

test.serial('a watch event whose conversion failed is converted again for the next watcher (failures are not cached)', async (t) => {
  const w = webhook();
  const [v1, v2] = customResourceTypes(webhookCrd(), Date.now, w).map((v) => v.type);
  const from = f.cache.currentRevision();
  await f.store.create(v1, 'default', widget('a'), adminCtx);
  const first = async () => {
    const ac = new AbortController();
    try {
      for await (const ev of storeListWatch(f.store, f.cache, v2).watch(String(from), ac.signal, { timeoutMs: 60_000 })) return ev;
      throw new Error('no event');
    } finally {
      ac.abort();
    }
  };
  w.down = true;
  await t.throwsAsync(first(), { message: /conversion webhook for example\.com\/v1, Kind=Widget failed/ });
  w.down = false;
  const ev = await first();
  t.deepEqual(ev.object.spec, { endpoint: 'db:5432' });
  // Converted once more, then shared: a third watcher needs no call.
  const calls = w.calls;
  await first();
  t.is(w.calls, calls);
});
