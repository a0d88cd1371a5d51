import test from 'ava';
import { handleGet } from '../../../../apiserver/handlers/get';
import { admin, configMap, openStore, withStore } from '../store/fixture';
import { call } from './fake-http';

test('GET answers 200 with the object; a missing one is a 404 Status naming it', (t) =>
  withStore(async (f) => {
    const stored = await f.store.create(f.type('configmaps'), 'default', configMap('a'), admin);
    const res = await call(f, handleGet, 'GET', '/api/v1/namespaces/default/configmaps/a');
    t.is(res.statusCode, 200);
    t.deepEqual(res.body, stored);
    const missing = await call(f, handleGet, 'GET', '/api/v1/namespaces/default/configmaps/nope');
    t.is(missing.statusCode, 404);
    t.deepEqual(missing.body, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'configmaps "nope" not found',
      reason: 'NotFound',
      code: 404,
      details: { name: 'nope', kind: 'configmaps' },
    });
  }));

test('GET of a cluster-scoped object ignores the namespace the router drops; Table rendering on request', (t) =>
  withStore(async (f) => {
    await f.store.create(f.type('namespaces'), '', { metadata: { name: 'team' } }, admin);
    const res = await call(f, handleGet, 'GET', '/api/v1/namespaces/team', { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
    t.is(res.statusCode, 200);
    t.is(res.body.kind, 'Table');
    t.deepEqual(res.body.rows.map((r: { cells: unknown[] }) => r.cells.slice(0, 2)), [['team', 'Active']]);
  }));

test('a resourceVersion that is not a number is 400; a future one is 504 once the wait runs out', async (t) => {
  const f = await openStore({ rvWaitMs: 20 });
  try {
    await f.store.create(f.type('configmaps'), 'default', configMap('a'), admin);
    const bad = await call(f, handleGet, 'GET', '/api/v1/namespaces/default/configmaps/a?resourceVersion=abc');
    t.is(bad.statusCode, 400);
    t.is(bad.body.message, 'invalid resource version "abc": must be a non-negative integer');
    const future = await call(f, handleGet, 'GET', `/api/v1/namespaces/default/configmaps/a?resourceVersion=${(await f.storage.currentRevision()) + 100}`);
    t.is(future.statusCode, 504);
    t.is(future.headers['retry-after'], '1');
    t.regex(future.body.message, /^Too large resource version/);
  } finally {
    await f.close();
  }
});
