import test from 'ava';
import { encodeObject, decodeObject, PROTOBUF_MEDIA_TYPE } from '../../../../apiserver/codec/envelope';
import { handleCreate } from '../../../../apiserver/handlers/create';
import type { ResourceType } from '../../../../apiserver/registry/resource-type';
import { configMapSchema, configMapType } from '../../../../apiserver/registry/types/configmaps';
import { readsOf, revisionOf } from '../../../../apiserver/server/protobuf';
import { configMap, withStore } from '../store/fixture';
import { call } from '../handlers/fake-http';

test('a resourceVersion names its revision only in the form the stores write', (t) => {
  t.is(revisionOf('1'), 1);
  t.is(revisionOf('123456789012345'), 123456789012345);
  for (const rv of ['', '0', '007', '12a', '-1', '1.5', ' 1', '1e3', '1234567890123456']) t.is(revisionOf(rv), undefined, JSON.stringify(rv));
});

test('reads name a version by its revision; a view names none', (t) => {
  const store = {};
  const reads = readsOf(store, configMapType);
  t.is(reads.keyOf({ metadata: { name: 'a', resourceVersion: '42' } }), 42);
  t.is(reads.keyOf({ metadata: { name: 'a' } }), undefined);
  t.is(reads.keyOf({ metadata: { name: 'a', resourceVersion: '0042' } }), undefined);
  const view = { ...configMapType, storedAs: {} as NonNullable<ResourceType['storedAs']> };
  t.is(readsOf(store, view).keyOf({ metadata: { resourceVersion: '42' } }), undefined);
  t.is(reads.fresh, false);
  t.true(readsOf(store, configMapType, true).fresh);
  t.is(readsOf(store, view).cache, reads.cache, 'one cache per store');
});

test('a protobuf create keeps its answer without looking its new version up first', (t) =>
  withStore(async (f) => {
    const asked: unknown[] = [];
    const cache = readsOf(f.store, f.type('configmaps')).cache;
    const get = cache.get.bind(cache);
    cache.get = (key) => {
      asked.push(key);
      return get(key);
    };
    const res = await call(f, handleCreate, 'POST', '/api/v1/namespaces/default/configmaps', {
      raw: encodeObject(configMapSchema, configMap('a', { data: { k: 'v' } })),
      headers: { 'content-type': PROTOBUF_MEDIA_TYPE, accept: PROTOBUF_MEDIA_TYPE },
    });
    t.is(res.statusCode, 201);
    const rv = (decodeObject(configMapSchema, res.bytes).metadata as { resourceVersion: string }).resourceVersion;
    t.deepEqual(asked, []);
    // The cached message is the answer's raw: what precedes its two empty last fields (4 bytes).
    const cached = get(Number(rv));
    t.truthy(cached);
    t.deepEqual(res.bytes.subarray(res.bytes.length - 4 - cached!.length, res.bytes.length - 4), cached);
  }));
