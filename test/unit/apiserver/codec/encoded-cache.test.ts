import test from 'ava';
import { EncodedCache, standIn, type CachedEncoding } from '../../../../apiserver/codec/encoded-cache';
import { decodeObject, encodeObject } from '../../../../apiserver/codec/envelope';
import { listSchemaOf } from '../../../../apiserver/registry/meta-schemas';
import { configMapSchema } from '../../../../apiserver/registry/types/configmaps';

type Json = Record<string, unknown>;

const cm = (name: string, rv: string, data: Record<string, string> = { k: name }): Json => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: rv, creationTimestamp: '2025-01-02T03:04:05Z' },
  data,
});

/** Names versions as the server does (namespace/name@resourceVersion); keys asked are recorded. */
function reads(cache = new EncodedCache(1 << 20)): CachedEncoding & { asked: string[] } {
  const asked: string[] = [];
  return {
    cache,
    asked,
    keyOf: (o) => {
      const m = o.metadata as Json;
      const key = typeof m?.resourceVersion === 'string' ? `${String(m.namespace)}/${String(m.name)}@${m.resourceVersion}` : undefined;
      if (key) asked.push(key);
      return key;
    },
  };
}

test('an object and a list encode the same bytes with the cache as without, and fill it', (t) => {
  const r = reads();
  const a = cm('a', '5');
  t.deepEqual(encodeObject(configMapSchema, a, r), encodeObject(configMapSchema, a));
  t.is(r.cache.count, 1);
  const list = { apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: '9', continue: 'c' }, items: [cm('a', '5'), cm('b', '6'), { metadata: { name: 'no-version' } }] };
  const schema = listSchemaOf(configMapSchema);
  t.deepEqual(encodeObject(schema, list, r), encodeObject(schema, list));
  t.is(r.cache.count, 2, 'the versioned items, once each; the item without a resourceVersion is not cached');
  t.deepEqual(r.asked, ['ns/a@5', 'ns/a@5', 'ns/b@6'], 'each version named once per encoding');
});

test('a cached version is copied, not encoded again: the bytes are those of the version first seen', (t) => {
  const r = reads();
  const first = encodeObject(configMapSchema, cm('a', '5'), r);
  // Not something the server does (a version never changes): it shows the cache answered.
  t.deepEqual(encodeObject(configMapSchema, cm('a', '5', { k: 'changed' }), r), first);
  t.deepEqual((decodeObject(configMapSchema, encodeObject(configMapSchema, cm('a', '6', { k: 'changed' }), r)).data as Json).k, 'changed', 'a new resourceVersion is a new entry');
});

test('stand-in items are written from their message; as JSON they refuse to be written', (t) => {
  const r = reads();
  const schema = listSchemaOf(configMapSchema);
  const items = [cm('a', '5'), cm('b', '6')];
  const full = encodeObject(schema, { apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: '9' }, items }, r);
  const messages = items.map((i) => r.cache.get(`ns/${String((i.metadata as Json).name)}@${String((i.metadata as Json).resourceVersion)}`)!);
  const viaStandIns = encodeObject(schema, { apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: '9' }, items: messages.map((m) => standIn(m)) }, reads());
  t.deepEqual(viaStandIns, full);
  t.deepEqual(decodeObject(schema, viaStandIns).items, items.map(({ apiVersion: _a, kind: _k, ...rest }) => rest));
  t.throws(() => JSON.stringify({ items: [standIn(messages[0])] }), { message: /stand-in/ });
});

test('a malformed item is still refused by name with the cache', (t) => {
  const schema = listSchemaOf(configMapSchema);
  t.throws(() => encodeObject(schema, { kind: 'ConfigMapList', metadata: {}, items: ['x'] }, reads()), { message: /ConfigMapList field items is not an object/ });
  t.throws(() => encodeObject(schema, { kind: 'ConfigMapList', metadata: {}, items: [{ metadata: { name: 7 } }] }, reads()), { message: /ObjectMeta field name is not a string/ });
});

test('the cache holds at most its bound: the oldest entries go first; a message over the bound is not kept', (t) => {
  const c = new EncodedCache(100);
  c.set('a', Buffer.alloc(40));
  c.set('b', Buffer.alloc(40));
  c.set('a', Buffer.alloc(10));
  t.is(c.bytes, 80, 'a version is set once');
  c.set('c', Buffer.alloc(40));
  t.deepEqual([c.get('a'), c.get('b')?.length, c.get('c')?.length], [undefined, 40, 40]);
  t.is(c.bytes, 80);
  c.set('big', Buffer.alloc(101));
  t.is(c.get('big'), undefined);
  t.is(c.count, 2);
});

test('over many evictions the cache keeps exactly the newest entries that fit, oldest out first', (t) => {
  // 10 bytes each under a 1,000-byte bound: 100 entries held; 5,000 sets evict 4,900 (past the
  // point where the eviction order drops the keys it has passed, several times).
  const c = new EncodedCache(1000);
  for (let i = 0; i < 5000; i++) {
    c.set(`k${i}`, Buffer.alloc(10, i % 256));
    const held = Math.min(i + 1, 100);
    if (c.count !== held || c.bytes !== held * 10) t.fail(`after ${i + 1} sets: ${c.count} entries, ${c.bytes} bytes`);
  }
  t.is(c.get('k4899'), undefined);
  t.deepEqual(c.get('k4900'), Buffer.alloc(10, 4900 % 256));
  t.deepEqual(c.get('k4999'), Buffer.alloc(10, 4999 % 256));
  // Sizes vary: a large entry evicts as many old ones as its bytes need.
  c.set('large', Buffer.alloc(505));
  t.is(c.count, 50);
  t.is(c.bytes, 995);
  t.is(c.get('k4950'), undefined);
  t.truthy(c.get('k4951'));
});

test('a message handed out stays as it was after its entry is evicted and its space would have been reused; a message larger than a chunk is kept whole', (t) => {
  const c = new EncodedCache(3 << 20);
  c.set('a', Buffer.alloc(100, 7));
  const handedOut = c.get('a')!;
  // 50,000 entries of 100 bytes: 5 MB through a 3 MiB bound, past several chunks of 1 MiB.
  for (let i = 0; i < 50_000; i++) c.set(`k${i}`, Buffer.alloc(100, i % 256));
  t.is(c.get('a'), undefined);
  t.deepEqual(handedOut, Buffer.alloc(100, 7));
  t.deepEqual(c.get('k49999'), Buffer.alloc(100, 49_999 % 256));
  const large = Buffer.alloc(2 << 20, 9);
  c.set('large', large);
  t.deepEqual(c.get('large'), large);
  t.true(c.bytes <= 3 << 20);
  t.deepEqual(c.get('k49999'), Buffer.alloc(100, 49_999 % 256), 'the newest entries that fit stay');
});
