/**
 * Watch events in forms other than plain JSON (protobuf frames, CBOR items, JSON under a group's
 * k8s.io name) are made once per event and form and shared by every watcher of that form
 * (WatchCache.rendering), as the plain JSON rendering is; and a protobuf watch's initial events take
 * their messages from the cache of encoded versions, as a protobuf list does.
 */
import test from 'ava';
import type { KList, KObject } from '../../../../apiserver/api/types';
import { decodeObject, decodeWatchFrames } from '../../../../apiserver/codec/envelope';
import { handleGet } from '../../../../apiserver/handlers/get';
import { handleList } from '../../../../apiserver/handlers/list';
import { handleWatch } from '../../../../apiserver/handlers/watch';
import { configMapSchema } from '../../../../apiserver/registry/types/configmaps';
import { readsOf } from '../../../../apiserver/server/protobuf';
import type { CachedEvent } from '../../../../apiserver/store/watch-cache';
import { admin, configMap, withStore, type StoreFixture } from '../store/fixture';
import { call, start, type Call } from './fake-http';

const CMS = '/api/v1/namespaces/default/configmaps';
const PB = 'application/vnd.kubernetes.protobuf';

/** The next event under prefix after revision from, as the cache holds it (the object every watcher shares). */
async function cachedEvent(f: StoreFixture, prefix: string, from: number): Promise<CachedEvent> {
  const ac = new AbortController();
  for await (const ev of f.cache.watch(prefix, from, ac.signal)) {
    ac.abort();
    return ev;
  }
  throw new Error('no event');
}

/** The protobuf frames a watcher has received once it has n. */
async function frames(w: Call, n: number): Promise<Array<{ type: string; object: Buffer }>> {
  for (;;) {
    const { events } = decodeWatchFrames(w.res.bytes);
    if (events.length >= n) return events;
    await w.res.waitForBytes(w.res.bytes.length + 1);
  }
}

test('each event is encoded once per form and type: every protobuf watcher sends the frame kept with the event', (t) =>
  withStore(async (f) => {
    const cms = f.type('configmaps');
    await f.store.create(cms, 'default', configMap('a', { labels: { app: 'x' } }), admin);
    const rv = f.cache.currentRevision();
    const ac = new AbortController();
    const watch = (query = '') => start(f, handleWatch, 'GET', `${CMS}?watch=1&resourceVersion=${rv}${query}`, { signal: ac.signal, headers: { accept: `${PB}, application/json` } });
    const plain = [watch(), watch(), watch()];
    // For this one the object stops matching: the same event is a DELETED frame, made once too.
    const selecting = [watch('&labelSelector=app%3Dx'), watch('&labelSelector=app%3Dx')];
    try {
      await f.store.update(cms, 'default', 'a', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, labels: { app: 'y' } } }), admin);
      const got = await Promise.all([...plain, ...selecting].map((w) => frames(w, 1)));
      const ev = await cachedEvent(f, '/', rv);
      t.is(ev.type, 'MODIFIED');
      t.deepEqual([...(ev.renderings?.keys() ?? [])].sort(), ['protobuf DELETED  /v1/configmaps', 'protobuf MODIFIED  /v1/configmaps']);
      const modified = ev.renderings!.get('protobuf MODIFIED  /v1/configmaps') as Buffer;
      const deleted = ev.renderings!.get('protobuf DELETED  /v1/configmaps') as Buffer;
      for (const w of plain) t.deepEqual(w.res.bytes, modified, 'the kept frame, byte for byte');
      for (const w of selecting) t.deepEqual(w.res.bytes, deleted);
      t.deepEqual(
        got.map((g) => g[0].type),
        ['MODIFIED', 'MODIFIED', 'MODIFIED', 'DELETED', 'DELETED'],
      );
      t.deepEqual(decodeObject(configMapSchema, got[0][0].object), await f.store.get(cms, 'default', 'a'));
    } finally {
      ac.abort();
      await Promise.all([...plain, ...selecting].map((w) => w.done));
    }
  }));

test('JSON under a k8s.io group name is rendered once per event too, in that group; the svc.io name keeps the plain rendering', (t) =>
  withStore(async (f) => {
    const leases = f.type('leases', 'coordination.svc.io');
    const rv = f.cache.currentRevision();
    const ac = new AbortController();
    const path = (g: string) => `/apis/${g}/v1/namespaces/default/leases?watch=1&resourceVersion=${rv}`;
    const upstream = [0, 1].map(() => start(f, handleWatch, 'GET', path('coordination.k8s.io'), { signal: ac.signal, headers: { accept: 'application/json' } }));
    const own = start(f, handleWatch, 'GET', path('coordination.svc.io'), { signal: ac.signal, headers: { accept: 'application/json' } });
    try {
      await f.store.create(leases, 'default', { apiVersion: 'coordination.svc.io/v1', kind: 'Lease', metadata: { name: 'l' }, spec: { holderIdentity: 'me' } }, admin);
      await Promise.all([...upstream, own].map((w) => w.res.waitForLines(1)));
      const ev = await cachedEvent(f, '/', rv);
      t.deepEqual([...(ev.renderings?.keys() ?? [])], ['json ADDED coordination.k8s.io coordination.svc.io/v1/leases']);
      for (const w of upstream) {
        t.is(w.res.text, ev.renderings!.get('json ADDED coordination.k8s.io coordination.svc.io/v1/leases') as string);
        t.is(w.res.lines()[0].object.apiVersion, 'coordination.k8s.io/v1');
      }
      t.is(own.res.lines()[0].object.apiVersion, 'coordination.svc.io/v1');
      t.is(own.res.text, `{"type":"ADDED","object":${ev.json!}}\n`);
    } finally {
      ac.abort();
      await Promise.all([...upstream, own].map((w) => w.done));
    }
  }));

test('a protobuf watch with initial events takes their messages from the cache of encoded versions and fills it: the same frames either way', (t) =>
  withStore(async (f) => {
    const cms = f.type('configmaps');
    for (const n of ['a', 'b', 'c']) await f.store.create(cms, 'default', configMap(n, { data: { k: n } }), admin);
    const initial = async () => {
      const ac = new AbortController();
      const w = start(f, handleWatch, 'GET', `${CMS}?watch=1&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan`, { signal: ac.signal, headers: { accept: `${PB}, application/json` } });
      try {
        return await frames(w, 4);
      } finally {
        ac.abort();
        await w.done;
      }
    };
    let items: KObject[] = [];
    const list = f.store.list.bind(f.store);
    f.store.list = async (...args: Parameters<typeof f.store.list>): Promise<KList> => {
      const l = await list(...args);
      items = l.items;
      return l;
    };
    const first = await initial();
    t.true(
      items.every((i) => i.metadata.name !== undefined),
      'nothing cached yet: decoded objects',
    );
    const second = await initial();
    t.is(items.length, 3);
    t.true(
      items.every((i) => i.metadata.name === undefined),
      'the first watch left their messages in the cache: stand-ins, nothing decoded',
    );
    t.deepEqual(second, first);
    // A protobuf list reads the same messages (a watch fills the cache as a list does).
    const listed = await call(f, handleList, 'GET', CMS, { headers: { accept: PB } });
    t.is(items.filter((i) => i.metadata.name === undefined).length, 3);
    t.is(listed.statusCode, 200);
    t.deepEqual(
      first.slice(0, 3).map((e) => (decodeObject(configMapSchema, e.object).data as { k: string }).k),
      ['a', 'b', 'c'],
    );
  }));

test('the message of a version a protobuf watcher was sent is the one the next protobuf get copies; a deletion caches nothing', (t) =>
  withStore(async (f) => {
    const cms = f.type('configmaps');
    const rv = f.cache.currentRevision();
    const versions = readsOf(f.store, cms).cache;
    const ac = new AbortController();
    const w = start(f, handleWatch, 'GET', `${CMS}?watch=1&resourceVersion=${rv}`, { signal: ac.signal, headers: { accept: `${PB}, application/json` } });
    try {
      await f.store.create(cms, 'default', configMap('a', { data: { k: 'v1' } }), admin);
      await f.store.update(cms, 'default', 'a', (cur) => ({ ...cur!, data: { k: 'v2' } }), admin);
      await frames(w, 2);
      t.is(versions.count, 2, 'the ADDED and the MODIFIED version');
      let decoded = 0;
      const get = f.store.get.bind(f.store);
      f.store.get = async (...args: Parameters<typeof f.store.get>) => {
        const o = await get(...args);
        if (o.metadata.name !== undefined) decoded++;
        return o;
      };
      const one = await call(f, handleGet, 'GET', `${CMS}/a`, { headers: { accept: PB } });
      t.is(decoded, 0, 'a stand-in: the watch frame’s message, not a decoded object');
      t.deepEqual(decodeObject(configMapSchema, one.bytes), await get(cms, 'default', 'a'));
      const modified = (await frames(w, 2))[1];
      t.deepEqual(one.bytes, modified.object, 'the same enveloped bytes the watcher got');
      await f.store.delete(cms, 'default', 'a', {}, admin);
      t.is((await frames(w, 3))[2].type, 'DELETED');
      t.is(versions.count, 2);
    } finally {
      ac.abort();
      await w.done;
    }
  }));

test('the two Event APIs share stored events but not their renderings: a protobuf watcher of each gets its own kind', (t) =>
  withStore(async (f) => {
    const core = f.type('events');
    const rv = f.cache.currentRevision();
    const ac = new AbortController();
    const watch = (path: string) => start(f, handleWatch, 'GET', `${path}?watch=1&resourceVersion=${rv}`, { signal: ac.signal, headers: { accept: `${PB}, application/json` } });
    // The core watcher renders the event first; the events.svc.io/v1 watcher, started after from the
    // same revision, replays the same cached event and must not reuse that frame.
    const coreWatch = watch('/api/v1/namespaces/default/events');
    let v1Watch: Call | undefined;
    try {
      await f.store.create(core, 'default', { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e' }, involvedObject: { kind: 'Pod', namespace: 'default', name: 'web' }, reason: 'Pulled', message: 'pulled', type: 'Normal' }, admin);
      const [c] = await frames(coreWatch, 1);
      t.deepEqual([...((await cachedEvent(f, '/', rv)).renderings?.keys() ?? [])], ['protobuf ADDED  /v1/events']);
      v1Watch = watch('/apis/events.svc.io/v1/namespaces/default/events');
      const [v] = await frames(v1Watch, 1);
      t.notDeepEqual(c.object, v.object);
      t.like(decodeObject(f.type('events', 'events.svc.io', 'v1').schema, v.object), { note: 'pulled', reason: 'Pulled', regarding: { name: 'web' } });
    } finally {
      ac.abort();
      await Promise.all([coreWatch.done, v1Watch?.done]);
    }
  }));
