/**
 * Kubernetes protobuf at the handlers: request bodies (create, update, DeleteOptions), responses
 * (objects, lists, Status, errors) and watch streams, as client-go speaks them: Accept
 * "application/vnd.kubernetes.protobuf, application/json" and Content-Type protobuf.
 */
import test from 'ava';
import { decodeObject, decodeWatchFrames, encodeObject } from '../../../../apiserver/codec/envelope';
import { handleCreate } from '../../../../apiserver/handlers/create';
import { handleDelete } from '../../../../apiserver/handlers/delete';
import { handleGet } from '../../../../apiserver/handlers/get';
import { handleList } from '../../../../apiserver/handlers/list';
import { handlePatch } from '../../../../apiserver/handlers/patch';
import { handleUpdate } from '../../../../apiserver/handlers/update';
import { handleWatch } from '../../../../apiserver/handlers/watch';
import { deleteOptionsSchema, listSchemaOf, statusSchema } from '../../../../apiserver/registry/meta-schemas';
import { configMapSchema } from '../../../../apiserver/registry/types/configmaps';
import { secretSchema } from '../../../../apiserver/registry/types/secrets';
import { admin, configMap, withStore } from '../store/fixture';
import { call, start } from './fake-http';

const CMS = '/api/v1/namespaces/default/configmaps';
const PB = 'application/vnd.kubernetes.protobuf';
/** What client-go's protobuf clients (kubectl create ...) send. */
const CLIENT_GO = { accept: `${PB}, application/json`, 'content-type': PB };

test('create from a protobuf body answers 201 in protobuf with the stored object', (t) =>
  withStore(async (f) => {
    const body = encodeObject(configMapSchema, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: 'v' }, binaryData: { b: 'AAEC' } });
    const res = await call(f, handleCreate, 'POST', CMS, { raw: body, headers: CLIENT_GO });
    t.is(res.statusCode, 201);
    t.is(res.headers['content-type'], PB);
    const stored = await f.store.get(f.type('configmaps'), 'default', 'a');
    t.deepEqual(stored.binaryData, { b: 'AAEC' });
    t.deepEqual(decodeObject(configMapSchema, res.bytes), stored);
  }));

test('a Secret created by Go zero-fills every field; the stored object has only what was set', (t) =>
  withStore(async (f) => {
    // What Go writes for kubectl create secret generic s --from-literal=k=v: every non-pointer field, zero or not.
    const goBody = Buffer.concat([
      Buffer.from('k8s\0'),
      Buffer.from([0x0a, 0x0c, 0x0a, 0x02, 0x76, 0x31, 0x12, 0x06, 0x53, 0x65, 0x63, 0x72, 0x65, 0x74]),
      wrapRaw(
        Buffer.from([
          // metadata: name "s", then generateName, namespace, selfLink, uid, resourceVersion "", generation 0, creationTimestamp {}
          ...[0x0a, 0x13, 0x0a, 0x01, 0x73, 0x12, 0x00, 0x1a, 0x00, 0x22, 0x00, 0x2a, 0x00, 0x32, 0x00, 0x38, 0x00, 0x42, 0x00],
          // and field 15 (clusterName, which older clients wrote and the schema no longer has): skipped
          ...[0x7a, 0x00],
          ...[0x12, 0x08, 0x0a, 0x01, 0x6b, 0x12, 0x03, 0x76, 0x61, 0x6c],
          ...[0x1a, 0x06, 0x4f, 0x70, 0x61, 0x71, 0x75, 0x65],
        ]),
      ),
      Buffer.from([0x1a, 0x00, 0x22, 0x00]),
    ]);
    const res = await call(f, handleCreate, 'POST', '/api/v1/namespaces/default/secrets', { raw: goBody, headers: CLIENT_GO });
    t.is(res.statusCode, 201, res.text);
    const stored = await f.store.get(f.type('secrets'), 'default', 's');
    t.deepEqual(stored.data, { k: Buffer.from('val').toString('base64') });
    t.is(stored.type, 'Opaque');
    t.false('generateName' in stored.metadata || 'selfLink' in stored.metadata || 'clusterName' in stored.metadata);
    t.deepEqual(decodeObject(secretSchema, res.bytes), stored);
  }));

function wrapRaw(message: Buffer): Buffer {
  // Unknown.raw (field 2), length-prefixed; the fixture stays under 128 bytes.
  return Buffer.concat([Buffer.from([0x12, message.length]), message]);
}

test('get and list answer protobuf when it comes first, JSON when JSON does; a Table stays JSON', (t) =>
  withStore(async (f) => {
    await f.store.create(f.type('configmaps'), 'default', configMap('a'), admin);
    const get = await call(f, handleGet, 'GET', `${CMS}/a`, { headers: { accept: `${PB}, application/json` } });
    t.is(get.headers['content-type'], PB);
    t.is(decodeObject(configMapSchema, get.bytes).kind, 'ConfigMap');
    const list = await call(f, handleList, 'GET', CMS, { headers: { accept: `${PB}, application/json` } });
    t.is(list.headers['content-type'], PB);
    const decoded = decodeObject(listSchemaOf(configMapSchema), list.bytes);
    t.is(decoded.kind, 'ConfigMapList');
    t.is((decoded.items as unknown[]).length, 1);
    const json = await call(f, handleGet, 'GET', `${CMS}/a`, { headers: { accept: `application/json, ${PB}` } });
    t.is(json.headers['content-type'], 'application/json');
    const table = await call(f, handleList, 'GET', CMS, { headers: { accept: `application/json;as=Table;v=v1;g=meta.k8s.io, ${PB}` } });
    t.is(table.body.kind, 'Table');
    const none = await call(f, handleGet, 'GET', `${CMS}/a`, { headers: { accept: `${PB};as=Table;v=v1;g=meta.k8s.io` } });
    t.is(none.statusCode, 406);
    t.is(none.headers['content-type'], 'application/json');
  }));

test('errors answer a Status in protobuf to a protobuf client', (t) =>
  withStore(async (f) => {
    const res = await call(f, handleGet, 'GET', `${CMS}/missing`, { headers: { accept: `${PB}, application/json` } });
    t.is(res.statusCode, 404);
    t.is(res.headers['content-type'], PB);
    t.like(decodeObject(statusSchema, res.bytes), { apiVersion: 'v1', kind: 'Status', status: 'Failure', reason: 'NotFound', code: 404 });
    const bad = await call(f, handleCreate, 'POST', CMS, { raw: Buffer.from('k8s\0\x0a\x7f'), headers: CLIENT_GO });
    t.is(bad.statusCode, 400);
    t.regex(decodeObject(statusSchema, bad.bytes).message as string, /could not be decoded as protobuf/);
  }));

test('update from protobuf; a patch in protobuf is 415', (t) =>
  withStore(async (f) => {
    const a = await f.store.create(f.type('configmaps'), 'default', configMap('a'), admin);
    const body = encodeObject(configMapSchema, { ...a, data: { k: 'new' } });
    const res = await call(f, handleUpdate, 'PUT', `${CMS}/a`, { raw: body, headers: CLIENT_GO });
    t.is(res.statusCode, 200);
    t.deepEqual((await f.store.get(f.type('configmaps'), 'default', 'a')).data, { k: 'new' });
    const patch = await call(f, handlePatch, 'PATCH', `${CMS}/a`, { raw: body, headers: CLIENT_GO });
    t.is(patch.statusCode, 415);
  }));

test('DeleteOptions in protobuf: grace period, preconditions and propagation are read', (t) =>
  withStore(async (f) => {
    await f.store.create(f.type('configmaps'), 'default', configMap('a', { finalizers: ['example.com/hold'] }), admin);
    const wrong = encodeObject(deleteOptionsSchema, { apiVersion: 'meta.k8s.io/v1', kind: 'DeleteOptions', preconditions: { uid: 'not-it' } });
    const conflict = await call(f, handleDelete, 'DELETE', `${CMS}/a`, { raw: wrong, headers: CLIENT_GO });
    t.is(conflict.statusCode, 409);
    t.is(decodeObject(statusSchema, conflict.bytes).reason, 'Conflict');
    const orphan = encodeObject(deleteOptionsSchema, { apiVersion: 'meta.k8s.io/v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, propagationPolicy: 'Orphan' });
    const res = await call(f, handleDelete, 'DELETE', `${CMS}/a`, { raw: orphan, headers: CLIENT_GO });
    t.is(res.statusCode, 200);
    t.deepEqual(decodeObject(configMapSchema, res.bytes).metadata, (await f.store.get(f.type('configmaps'), 'default', 'a')).metadata);
    t.deepEqual((await f.store.get(f.type('configmaps'), 'default', 'a')).metadata.finalizers, ['example.com/hold', 'orphan']);
  }));

test('a protobuf watch streams length-prefixed WatchEvent frames under ;stream=watch', (t) =>
  withStore(async (f) => {
    await f.store.create(f.type('configmaps'), 'default', configMap('old'), admin);
    const ac = new AbortController();
    const w = start(f, handleWatch, 'GET', `${CMS}?watch=1&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan`, {
      signal: ac.signal,
      headers: { accept: `${PB}, application/json` },
    });
    await w.res.waitForBytes(4);
    t.is(w.res.headers['content-type'], `${PB};stream=watch`);
    await f.store.create(f.type('configmaps'), 'default', configMap('new'), admin);
    await f.store.delete(f.type('configmaps'), 'default', 'old', {}, admin);
    const events = async (n: number) => {
      for (;;) {
        const { events: got } = decodeWatchFrames(w.res.bytes);
        if (got.length >= n) return got;
        await w.res.waitForBytes(w.res.bytes.length + 1);
      }
    };
    const got = await events(4);
    t.deepEqual(
      got.map((e) => e.type),
      ['ADDED', 'BOOKMARK', 'ADDED', 'DELETED'],
    );
    const objects = got.map((e) => decodeObject(configMapSchema, e.object));
    t.deepEqual(
      objects.map((o) => (o.metadata as { name?: string }).name),
      ['old', undefined, 'new', 'old'],
    );
    t.deepEqual((objects[1].metadata as { annotations?: Record<string, string> }).annotations, { 'k8s.io/initial-events-end': 'true', 'svc.io/initial-events-end': 'true' });
    ac.abort();
    await w.done;
  }));
