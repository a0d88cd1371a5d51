/**
 * Gets and lists in protobuf take the messages of unchanged stored versions from the cache of
 * encoded versions (server/protobuf.ts, codec/encoded-cache.ts) without decoding the stored value:
 * the answers are the same bytes as a fresh encoding, a write is a new version, JSON answers never
 * see a stand-in, and two stores never share entries.
 */
import test from 'ava';
import { decodeObject, decodeWatchFrames, encodeObject, PROTOBUF_MEDIA_TYPE } from '../../../../apiserver/codec/envelope';
import { handleCreate } from '../../../../apiserver/handlers/create';
import { handleGet } from '../../../../apiserver/handlers/get';
import { handleList } from '../../../../apiserver/handlers/list';
import { handleWatch } from '../../../../apiserver/handlers/watch';
import type { KList, KObject } from '../../../../apiserver/api/types';
import { listSchemaOf } from '../../../../apiserver/registry/meta-schemas';
import { configMapSchema } from '../../../../apiserver/registry/types/configmaps';
import { leaseSchema } from '../../../../apiserver/registry/types/leases';
import type { ObjectStore } from '../../../../apiserver/store/object-store';
import { admin, configMap, withStore, type StoreFixture } from '../store/fixture';
import { call, start } from './fake-http';

const CMS = '/api/v1/namespaces/default/configmaps';
const PB = { accept: 'application/vnd.kubernetes.protobuf, application/json' };

/** Records what the store's get and list returned: a stand-in has no metadata of its own. */
function spy(store: ObjectStore): { standIns: () => number; decoded: () => number; reset: () => void } {
  let items: KObject[] = [];
  const get = store.get.bind(store);
  const list = store.list.bind(store);
  store.get = async (...args: Parameters<ObjectStore['get']>) => {
    const o = await get(...args);
    items.push(o);
    return o;
  };
  store.list = async (...args: Parameters<ObjectStore['list']>): Promise<KList> => {
    const l = await list(...args);
    items.push(...l.items);
    return l;
  };
  return {
    standIns: () => items.filter((o) => o.metadata.name === undefined).length,
    decoded: () => items.filter((o) => o.metadata.name !== undefined).length,
    reset: () => (items = []),
  };
}

test('a second protobuf get and list of unchanged objects are the same bytes, from stand-ins instead of decoded objects', (t) =>
  withStore(async (f) => {
    const cms = f.type('configmaps');
    for (const n of ['a', 'b', 'c']) await f.store.create(cms, 'default', configMap(n, { data: { k: n } }), admin);
    const seen = spy(f.store);
    const list1 = await call(f, handleList, 'GET', CMS, { headers: PB });
    const get1 = await call(f, handleGet, 'GET', `${CMS}/a`, { headers: PB });
    t.deepEqual([seen.decoded(), seen.standIns()], [3, 1], 'the list decodes (and fills the cache); the get after it finds a cached');
    seen.reset();
    const list2 = await call(f, handleList, 'GET', CMS, { headers: PB });
    const get2 = await call(f, handleGet, 'GET', `${CMS}/a`, { headers: PB });
    t.deepEqual([seen.decoded(), seen.standIns()], [0, 4], 'the second reads decode nothing');
    t.deepEqual(list2.bytes, list1.bytes);
    t.deepEqual(get2.bytes, get1.bytes);
    t.deepEqual(decodeObject(configMapSchema, get2.bytes), await f.store.get(cms, 'default', 'a'));
    const items = decodeObject(listSchemaOf(configMapSchema), list2.bytes).items as KObject[];
    t.deepEqual(
      items.map((i) => i.data),
      [{ k: 'a' }, { k: 'b' }, { k: 'c' }],
    );
  }));

test('a write is a new version: the next protobuf list and get carry it; JSON answers are whole objects', (t) =>
  withStore(async (f) => {
    const cms = f.type('configmaps');
    for (const n of ['a', 'b']) await f.store.create(cms, 'default', configMap(n, { data: { k: n } }), admin);
    await call(f, handleList, 'GET', CMS, { headers: PB });
    await f.store.update(cms, 'default', 'a', (cur) => ({ ...cur!, data: { k: 'new' } }), admin);
    await f.store.delete(cms, 'default', 'b', {}, admin);
    const seen = spy(f.store);
    const list = await call(f, handleList, 'GET', CMS, { headers: PB });
    t.deepEqual([seen.decoded(), seen.standIns()], [1, 0]);
    t.deepEqual(
      (decodeObject(listSchemaOf(configMapSchema), list.bytes).items as KObject[]).map((i) => [i.metadata.name, i.data]),
      [['a', { k: 'new' }]],
    );
    t.deepEqual(decodeObject(configMapSchema, (await call(f, handleGet, 'GET', `${CMS}/a`, { headers: PB })).bytes).data, { k: 'new' });
    const json = await call(f, handleList, 'GET', CMS, { headers: { accept: 'application/json' } });
    t.deepEqual(json.body.items, [await f.store.get(cms, 'default', 'a')]);
    const one = await call(f, handleGet, 'GET', `${CMS}/a`, { headers: { accept: 'application/json' } });
    t.deepEqual(one.body, await f.store.get(cms, 'default', 'a'));
  }));

test('selectors read decoded objects (no stand-ins) and still answer the cached bytes', (t) =>
  withStore(async (f) => {
    const cms = f.type('configmaps');
    await f.store.create(cms, 'default', configMap('a', { labels: { app: 'x' } }), admin);
    await f.store.create(cms, 'default', configMap('b', { labels: { app: 'y' } }), admin);
    const whole = await call(f, handleList, 'GET', CMS, { headers: PB });
    const seen = spy(f.store);
    const selected = await call(f, handleList, 'GET', `${CMS}?labelSelector=app%3Dx`, { headers: PB });
    t.deepEqual([seen.decoded(), seen.standIns()], [1, 0]);
    const items = decodeObject(listSchemaOf(configMapSchema), selected.bytes).items as KObject[];
    t.deepEqual(
      items.map((i) => i.metadata.name),
      ['a'],
    );
    t.deepEqual(items[0], (decodeObject(listSchemaOf(configMapSchema), whole.bytes).items as KObject[])[0]);
  }));

test('under a k8s.io group name the cached versions are answered in the client’s group', (t) =>
  withStore(async (f) => {
    const leases = f.type('leases', 'coordination.svc.io');
    await f.store.create(leases, 'default', { apiVersion: 'coordination.svc.io/v1', kind: 'Lease', metadata: { name: 'l' }, spec: { holderIdentity: 'me' } }, admin);
    const path = '/apis/coordination.k8s.io/v1/namespaces/default/leases';
    for (let i = 0; i < 2; i++) {
      const list = decodeObject(listSchemaOf(leaseSchema), (await call(f, handleList, 'GET', path, { headers: PB })).bytes);
      t.is(list.apiVersion, 'coordination.k8s.io/v1');
      t.is(((list.items as KObject[])[0].spec as { holderIdentity: string }).holderIdentity, 'me');
      const one = decodeObject(leaseSchema, (await call(f, handleGet, 'GET', `${path}/l`, { headers: PB })).bytes);
      t.like(one, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', spec: { holderIdentity: 'me' } });
    }
  }));

test('two stores never share cached versions (the same key and revision in each)', (t) =>
  withStore((f1) =>
    withStore(async (f2) => {
      await f1.store.create(f1.type('configmaps'), 'default', configMap('a', { data: { k: 'one' } }), admin);
      await f2.store.create(f2.type('configmaps'), 'default', configMap('a', { data: { k: 'two' } }), admin);
      const a1 = await f1.store.get(f1.type('configmaps'), 'default', 'a');
      const a2 = await f2.store.get(f2.type('configmaps'), 'default', 'a');
      t.is(a1.metadata.resourceVersion, a2.metadata.resourceVersion);
      for (let i = 0; i < 2; i++) {
        t.deepEqual(decodeObject(configMapSchema, (await call(f1, handleGet, 'GET', `${CMS}/a`, { headers: PB })).bytes).data, { k: 'one' });
        t.deepEqual(decodeObject(configMapSchema, (await call(f2, handleGet, 'GET', `${CMS}/a`, { headers: PB })).bytes).data, { k: 'two' });
      }
    }),
  ));

test('a protobuf create answers the stored version and caches it: the get after it is a stand-in of the same bytes; a dry run is not cached', (t) =>
  withStore(async (f) => {
    const cms = f.type('configmaps');
    const post = (name: string, query = '') =>
      call(f, handleCreate, 'POST', `${CMS}${query}`, {
        raw: encodeObject(configMapSchema, configMap(name, { data: { k: name } })),
        headers: { 'content-type': PROTOBUF_MEDIA_TYPE, accept: PB.accept },
      });
    const created = await post('a');
    t.is(created.statusCode, 201);
    const stored = await f.store.get(cms, 'default', 'a');
    t.deepEqual(decodeObject(configMapSchema, created.bytes), stored);
    const seen = spy(f.store);
    const got = await call(f, handleGet, 'GET', `${CMS}/a`, { headers: PB });
    t.deepEqual([seen.decoded(), seen.standIns()], [0, 1], 'the get copies the message the create cached');
    t.deepEqual(decodeObject(configMapSchema, got.bytes), stored);
    // Byte for byte the create's answer, which is a fresh encoding of the stored version.
    t.deepEqual(got.bytes, created.bytes);
    t.deepEqual(created.bytes, encodeObject(configMapSchema, stored as unknown as Record<string, unknown>));
    // A dry run answers what would be stored, which is no stored version: nothing is cached.
    const dry = await post('b', '?dryRun=All');
    t.is(dry.statusCode, 201);
    await f.store.create(cms, 'default', configMap('b', { data: { k: 'real' } }), admin);
    seen.reset();
    const b = await call(f, handleGet, 'GET', `${CMS}/b`, { headers: PB });
    t.deepEqual([seen.decoded(), seen.standIns()], [1, 0]);
    t.deepEqual(decodeObject(configMapSchema, b.bytes).data, { k: 'real' });
  }));

/** The first two frames of a protobuf watch (the initial ADDED event and the bookmark after it). */
async function initialEvents(f: StoreFixture, path: string): Promise<Array<{ type: string; object: Buffer }>> {
  const ac = new AbortController();
  const w = start(f, handleWatch, 'GET', path, { signal: ac.signal, headers: PB });
  try {
    for (;;) {
      const { events } = decodeWatchFrames(w.res.bytes);
      if (events.length >= 2) return events;
      await w.res.waitForBytes(w.res.bytes.length + 1);
    }
  } finally {
    ac.abort();
    await w.done;
  }
}

test('the cached versions of one object are kept apart per group name: each read answers the group it was asked under, managedFields included', async (t) => {
  const groups = ['coordination.k8s.io', 'coordination.svc.io'];
  const leases = (g: string) => `/apis/${g}/v1/namespaces/default/leases`;
  const json = { accept: 'application/json' };
  // Every pair (the group of the write, the group read first), so that each name's answer is the
  // first cached in one case and found cached in another.
  for (const written of groups) {
    for (const first of groups) {
      await withStore(async (f) => {
        const lease = { apiVersion: `${written}/v1`, kind: 'Lease', metadata: { name: 'l' }, spec: { holderIdentity: 'me' } };
        const post = await call(f, handleCreate, 'POST', `${leases(written)}?fieldManager=writer`, { raw: encodeObject(leaseSchema, lease), headers: { 'content-type': PROTOBUF_MEDIA_TYPE, accept: PB.accept } });
        t.is(post.statusCode, 201);
        const order = first === groups[0] ? groups : [...groups].reverse();
        const check = (o: Record<string, unknown>, group: string, what: string) => {
          const managed = (o.metadata as KObject['metadata']).managedFields ?? [];
          t.true(managed.length > 0, `${what}: managedFields recorded`);
          t.deepEqual([o.apiVersion, ...managed.map((m) => m.apiVersion)], Array(managed.length + 1).fill(`${group}/v1`), `${what} (written under ${written}, ${first} read first)`);
        };
        check(decodeObject(leaseSchema, post.bytes), written, 'the create');
        for (let round = 0; round < 2; round++) {
          for (const g of order) {
            check(decodeObject(leaseSchema, (await call(f, handleGet, 'GET', `${leases(g)}/l`, { headers: PB })).bytes), g, `protobuf get under ${g}`);
            const list = decodeObject(listSchemaOf(leaseSchema), (await call(f, handleList, 'GET', leases(g), { headers: PB })).bytes);
            t.is(list.apiVersion, `${g}/v1`);
            check({ ...(list.items as KObject[])[0], apiVersion: `${g}/v1` }, g, `protobuf list item under ${g}`);
            check((await call(f, handleGet, 'GET', `${leases(g)}/l`, { headers: json })).body, g, `JSON get under ${g}`);
            const added = (await initialEvents(f, `${leases(g)}?watch=1&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan`))[0];
            t.is(added.type, 'ADDED');
            check(decodeObject(leaseSchema, added.object), g, `protobuf watch's initial event under ${g}`);
          }
        }
      });
    }
  }
});
