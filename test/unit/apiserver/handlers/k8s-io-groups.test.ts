import test from 'ava';
import { handleCreate } from '../../../../apiserver/handlers/create';
import { handleDelete } from '../../../../apiserver/handlers/delete';
import { handleGet } from '../../../../apiserver/handlers/get';
import { handleList } from '../../../../apiserver/handlers/list';
import { handlePatch } from '../../../../apiserver/handlers/patch';
import { handleUpdate } from '../../../../apiserver/handlers/update';
import { handleWatch } from '../../../../apiserver/handlers/watch';
import { objectKey } from '../../../../apiserver/store/keys';
import { withStore } from '../store/fixture';
import { call, start } from './fake-http';

// Issue 17, item 3: one Lease through coordination.svc.io and coordination.k8s.io. The router's
// aliasing is applied by fake-http as the real router does (--serve-k8s-io-groups, default on).
const SVC = '/apis/coordination.svc.io/v1/namespaces/default/leases';
const K8S = '/apis/coordination.k8s.io/v1/namespaces/default/leases';
const lease = (name: string, apiVersion: string) => ({ apiVersion, kind: 'Lease', metadata: { name }, spec: { holderIdentity: 'a' } });

test('created through the k8s.io name: stored once under the svc.io apiVersion, read through both names in the name asked for', (t) =>
  withStore(async (f) => {
    const created = await call(f, handleCreate, 'POST', K8S, { body: lease('l', 'coordination.k8s.io/v1') });
    t.is(created.statusCode, 201, created.text);
    t.is(created.body.apiVersion, 'coordination.k8s.io/v1');
    // One stored object, canonical: a store written before aliases existed reads the same.
    const kv = await f.storage.get(objectKey(f.type('leases', 'coordination.svc.io'), 'default', 'l'));
    t.is(JSON.parse(kv!.value.toString('utf8')).apiVersion, 'coordination.svc.io/v1');
    t.is((await call(f, handleGet, 'GET', `${SVC}/l`)).body.apiVersion, 'coordination.svc.io/v1');
    const viaK8s = await call(f, handleGet, 'GET', `${K8S}/l`);
    t.is(viaK8s.body.apiVersion, 'coordination.k8s.io/v1');
    t.is(viaK8s.body.metadata.uid, created.body.metadata.uid);
    const list = (await call(f, handleList, 'GET', K8S)).body;
    t.is(list.apiVersion, 'coordination.k8s.io/v1');
    t.is(list.kind, 'LeaseList');
    t.deepEqual(list.items.map((i: { apiVersion: string }) => i.apiVersion), ['coordination.k8s.io/v1']);
    const table = (await call(f, handleList, 'GET', K8S, { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' }, body: undefined })).body;
    t.is(table.kind, 'Table');
    // A body in the svc.io spelling to the k8s.io path (and the reverse) is the same group.
    t.is((await call(f, handleCreate, 'POST', K8S, { body: lease('m', 'coordination.svc.io/v1') })).statusCode, 201);
    t.is((await call(f, handleCreate, 'POST', SVC, { body: lease('n', 'coordination.k8s.io/v1') })).statusCode, 201);
    const wrong = await call(f, handleCreate, 'POST', K8S, { body: lease('o', 'events.k8s.io/v1') });
    t.is(wrong.statusCode, 400);
    t.regex(wrong.body.message, /expected API version \(coordination\.k8s\.io\/v1\)/);
  }));

test('updated, patched and deleted through the other name; errors name the group asked for', (t) =>
  withStore(async (f) => {
    await call(f, handleCreate, 'POST', SVC, { body: lease('l', 'coordination.svc.io/v1') });
    const got = (await call(f, handleGet, 'GET', `${K8S}/l`)).body;
    const put = await call(f, handleUpdate, 'PUT', `${K8S}/l`, { body: { ...got, spec: { holderIdentity: 'b' } } });
    t.is(put.statusCode, 200, put.text);
    t.is(put.body.apiVersion, 'coordination.k8s.io/v1');
    const patched = await call(f, handlePatch, 'PATCH', `${K8S}/l`, { body: { spec: { holderIdentity: 'c' } }, headers: { 'content-type': 'application/merge-patch+json' } });
    t.is(patched.body.apiVersion, 'coordination.k8s.io/v1');
    t.is((await call(f, handleGet, 'GET', `${SVC}/l`)).body.spec.holderIdentity, 'c');
    const deleted = await call(f, handleDelete, 'DELETE', `${K8S}/l`);
    t.is(deleted.statusCode, 200);
    t.is(deleted.body.details.group, 'coordination.k8s.io');
    const gone = await call(f, handleGet, 'GET', `${K8S}/l`);
    t.is(gone.statusCode, 404);
    t.is(gone.body.message, 'leases.coordination.k8s.io "l" not found');
    t.is(gone.body.details.group, 'coordination.k8s.io');
    t.is((await call(f, handleGet, 'GET', `${SVC}/l`)).body.message, 'leases.coordination.svc.io "l" not found');
  }));

test('a watch through the k8s.io name sees writes through either name, each event in the k8s.io group', (t) =>
  withStore(async (f) => {
    await call(f, handleCreate, 'POST', SVC, { body: lease('before', 'coordination.svc.io/v1') });
    const ac = new AbortController();
    const k8s = start(f, handleWatch, 'GET', `${K8S}?watch=1`, { signal: ac.signal });
    const svc = start(f, handleWatch, 'GET', `${SVC}?watch=1`, { signal: ac.signal });
    await k8s.res.waitForLines(1);
    await svc.res.waitForLines(1);
    await call(f, handleCreate, 'POST', K8S, { body: lease('via-k8s', 'coordination.k8s.io/v1') });
    await call(f, handleCreate, 'POST', SVC, { body: lease('via-svc', 'coordination.svc.io/v1') });
    await call(f, handleDelete, 'DELETE', `${K8S}/before`);
    await k8s.res.waitForLines(4);
    await svc.res.waitForLines(4);
    const seen = (lines: Array<{ type: string; object: { apiVersion: string; metadata: { name: string } } }>) => lines.map((l) => [l.type, l.object.metadata.name, l.object.apiVersion]);
    t.deepEqual(seen(k8s.res.lines()), [
      ['ADDED', 'before', 'coordination.k8s.io/v1'],
      ['ADDED', 'via-k8s', 'coordination.k8s.io/v1'],
      ['ADDED', 'via-svc', 'coordination.k8s.io/v1'],
      ['DELETED', 'before', 'coordination.k8s.io/v1'],
    ]);
    t.deepEqual(seen(svc.res.lines()), [
      ['ADDED', 'before', 'coordination.svc.io/v1'],
      ['ADDED', 'via-k8s', 'coordination.svc.io/v1'],
      ['ADDED', 'via-svc', 'coordination.svc.io/v1'],
      ['DELETED', 'before', 'coordination.svc.io/v1'],
    ]);
    ac.abort();
    await Promise.all([k8s.done, svc.done]);
  }));

test('a streaming list through the k8s.io name ends its initial events with a bookmark in that group', (t) =>
  withStore(async (f) => {
    await call(f, handleCreate, 'POST', SVC, { body: lease('a', 'coordination.svc.io/v1') });
    const ac = new AbortController();
    const w = start(f, handleWatch, 'GET', `${K8S}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`, { signal: ac.signal });
    await w.res.waitForLines(2);
    const [added, bookmark] = w.res.lines();
    t.is(added.object.apiVersion, 'coordination.k8s.io/v1');
    t.is(bookmark.type, 'BOOKMARK');
    t.is(bookmark.object.apiVersion, 'coordination.k8s.io/v1');
    ac.abort();
    await w.done;
  }));
