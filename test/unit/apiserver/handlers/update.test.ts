import test from 'ava';
import { handleUpdate } from '../../../../apiserver/handlers/update';
import { admin, configMap, openStore, type StoreFixture } from '../store/fixture';
import { call } from './fake-http';

const A = '/api/v1/namespaces/default/configmaps/a';

async function withA(body: (f: StoreFixture, rv: string) => Promise<void>): Promise<void> {
  const f = await openStore();
  try {
    const a = await f.store.create(f.type('configmaps'), 'default', configMap('a'), admin);
    await body(f, a.metadata.resourceVersion!);
  } finally {
    await f.close();
  }
}

test('PUT replaces the object and answers 200 with it', (t) =>
  withA(async (f, rv) => {
    const res = await call(f, handleUpdate, 'PUT', A, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', resourceVersion: rv }, data: { k: 'new' } } });
    t.is(res.statusCode, 200);
    t.deepEqual(res.body.data, { k: 'new' });
    t.not(res.body.metadata.resourceVersion, rv);
    t.deepEqual((await f.store.get(f.type('configmaps'), 'default', 'a')).data, { k: 'new' });
  }));

test('PUT with a stale resourceVersion is 409 Conflict and changes nothing', (t) =>
  withA(async (f, rv) => {
    await call(f, handleUpdate, 'PUT', A, { body: { ...configMap('a'), metadata: { name: 'a' }, data: { k: 'second' } } });
    const res = await call(f, handleUpdate, 'PUT', A, { body: { ...configMap('a'), metadata: { name: 'a', resourceVersion: rv }, data: { k: 'third' } } });
    t.is(res.statusCode, 409);
    t.like(res.body, {
      kind: 'Status',
      reason: 'Conflict',
      code: 409,
      message: 'Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again',
      details: { name: 'a', kind: 'configmaps' },
    });
    t.deepEqual((await f.store.get(f.type('configmaps'), 'default', 'a')).data, { k: 'second' });
  }));

test('PUT of a missing object is 404, except for the types upstream creates on update (201)', (t) =>
  withA(async (f) => {
    const missing = await call(f, handleUpdate, 'PUT', '/api/v1/namespaces/default/configmaps/b', { body: configMap('b') });
    t.is(missing.statusCode, 404);
    t.is(missing.body.message, 'configmaps "b" not found');
    const lease = {
      apiVersion: 'coordination.svc.io/v1',
      kind: 'Lease',
      metadata: { name: 'l' },
      spec: { holderIdentity: 'me' },
    };
    const made = await call(f, handleUpdate, 'PUT', '/apis/coordination.svc.io/v1/namespaces/default/leases/l', { body: lease });
    t.is(made.statusCode, 201);
    t.is(made.body.spec.holderIdentity, 'me');
  }));

test('PUT whose body names another object is 400', (t) =>
  withA(async (f) => {
    const res = await call(f, handleUpdate, 'PUT', A, { body: configMap('b') });
    t.is(res.statusCode, 400);
    t.is(res.body.message, 'the name of the object (b) does not match the name on the URL (a)');
  }));

test('PUT to /status changes only the status', async (t) => {
  const f = await openStore();
  try {
    const pvcs = f.type('persistentvolumeclaims');
    const c = await f.store.create(pvcs, 'default', { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }, admin);
    const body = { ...c, spec: { ...(c.spec as object), volumeName: 'pv-9' }, status: { phase: 'Bound' } };
    const res = await call(f, handleUpdate, 'PUT', '/api/v1/namespaces/default/persistentvolumeclaims/data/status', { body });
    t.is(res.statusCode, 200);
    t.is(res.body.status.phase, 'Bound');
    t.is(res.body.spec.volumeName, undefined);
  } finally {
    await f.close();
  }
});
