import test from 'ava';
import { handlePatch } from '../../../../apiserver/handlers/patch';
import { admin, configMap, openStore, pod, type StoreFixture } from '../store/fixture';
import { call } from './fake-http';

const A = '/api/v1/namespaces/default/configmaps/a';
const merge = { 'content-type': 'application/merge-patch+json' };

async function withA(body: (f: StoreFixture, rv: string) => Promise<void>): Promise<void> {
  const f = await openStore();
  try {
    const a = await f.store.create(f.type('configmaps'), 'default', configMap('a', { labels: { keep: 'yes' } }), admin);
    await body(f, a.metadata.resourceVersion!);
  } finally {
    await f.close();
  }
}

test('merge and JSON patches apply to the current object and answer 200', (t) =>
  withA(async (f) => {
    const m = await call(f, handlePatch, 'PATCH', A, { body: { data: { k2: 'v2' }, metadata: { labels: { keep: null } } }, headers: merge });
    t.is(m.statusCode, 200);
    t.deepEqual(m.body.data, { k: 'v', k2: 'v2' });
    t.deepEqual(m.body.metadata.labels, {});
    const j = await call(f, handlePatch, 'PATCH', A, { body: [{ op: 'replace', path: '/data/k', value: 'x' }], headers: { 'content-type': 'application/json-patch+json' } });
    t.is(j.statusCode, 200);
    t.deepEqual(j.body.data, { k: 'x', k2: 'v2' });
    t.deepEqual((await f.store.get(f.type('configmaps'), 'default', 'a')).data, { k: 'x', k2: 'v2' });
  }));

test('a strategic merge patch merges a pod’s containers by name', async (t) => {
  const f = await openStore();
  try {
    await f.store.create(f.type('pods'), 'default', pod('web'), admin);
    const res = await call(f, handlePatch, 'PATCH', '/api/v1/namespaces/default/pods/web', {
      body: { spec: { containers: [{ name: 'app', image: 'registry.example/app:2' }] } },
      headers: { 'content-type': 'application/strategic-merge-patch+json' },
    });
    t.is(res.statusCode, 200);
    t.is(res.body.spec.containers.length, 1);
    t.is(res.body.spec.containers[0].image, 'registry.example/app:2');
  } finally {
    await f.close();
  }
});

test('a patch pinning a stale resourceVersion is 409; one without applies to whatever is current', (t) =>
  withA(async (f, rv) => {
    await call(f, handlePatch, 'PATCH', A, { body: { data: { k: 'second' } }, headers: merge });
    const stale = await call(f, handlePatch, 'PATCH', A, { body: { metadata: { resourceVersion: rv }, data: { k: 'third' } }, headers: merge });
    t.is(stale.statusCode, 409);
    t.is(stale.body.reason, 'Conflict');
    t.deepEqual((await f.store.get(f.type('configmaps'), 'default', 'a')).data, { k: 'second' });
  }));

test('patch errors: missing object 404, unknown types 415, bad JSON 400, invalid result 422, force on a non-apply patch 422', (t) =>
  withA(async (f) => {
    const missing = await call(f, handlePatch, 'PATCH', '/api/v1/namespaces/default/configmaps/nope', { body: { data: {} }, headers: merge });
    t.is(missing.statusCode, 404);
    t.like(missing.body, { kind: 'Status', reason: 'NotFound' });
    // Server-side apply is served (apply.test.ts); without fieldManager it is upstream's 422.
    const apply = await call(f, handlePatch, 'PATCH', A, { raw: 'data: {}', headers: { 'content-type': 'application/apply-patch+yaml' } });
    t.is(apply.statusCode, 422);
    t.is(apply.body.message, 'PatchOptions.meta.svc.io "" is invalid: fieldManager: Required value: is required for apply patch');
    const force = await call(f, handlePatch, 'PATCH', `${A}?force=true`, { body: { data: {} }, headers: merge });
    t.is(force.statusCode, 422);
    t.is(force.body.message, 'PatchOptions.meta.svc.io "" is invalid: force: Forbidden: may not be specified for non-apply patch');
    const plain = await call(f, handlePatch, 'PATCH', A, { body: { data: {} }, headers: { 'content-type': 'application/json' } });
    t.is(plain.statusCode, 415);
    const garbled = await call(f, handlePatch, 'PATCH', A, { raw: '{"data":', headers: merge });
    t.is(garbled.statusCode, 400);
    const invalid = await call(f, handlePatch, 'PATCH', A, { body: { metadata: { labels: { 'bad key!': 'x' } } }, headers: merge });
    t.is(invalid.statusCode, 422);
    t.is(invalid.body.reason, 'Invalid');
    t.deepEqual((await f.store.get(f.type('configmaps'), 'default', 'a')).metadata.labels, { keep: 'yes' });
  }));
