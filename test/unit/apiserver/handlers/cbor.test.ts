/**
 * CBOR at the handlers (issue 17, item 2), with the CBORServingAndStorage gate as --feature-gates
 * sets it and without it (the default): request bodies (create, update, DeleteOptions, bindings),
 * responses (objects, lists, Status, errors), watch streams, and the 415 and 406 answers.
 */
import test from 'ava';
import { decodeCbor, decodeCborSequence } from '../../../../apiserver/codec/cbor-decode';
import { encodeCbor } from '../../../../apiserver/codec/cbor-encode';
import { loadCbor } from '../../../../apiserver/codec/cbor-lib';
import { CBOR_GATE, parseFlags } from '../../../../apiserver/config/flags';
import { handleCreate } from '../../../../apiserver/handlers/create';
import { handleDelete } from '../../../../apiserver/handlers/delete';
import { handleGet } from '../../../../apiserver/handlers/get';
import { handleList } from '../../../../apiserver/handlers/list';
import { handlePatch } from '../../../../apiserver/handlers/patch';
import { handlePodBinding } from '../../../../apiserver/handlers/pod-binding';
import { handleUpdate } from '../../../../apiserver/handlers/update';
import { handleWatch, INITIAL_EVENTS_END, SVC_INITIAL_EVENTS_END } from '../../../../apiserver/handlers/watch';
import { maxNestingDepth } from '../../../../apiserver/patch/json-bounds';
import { configMapSchema } from '../../../../apiserver/registry/types/configmaps';
import { admin, configMap, withStore } from '../store/fixture';
import { call, start, type FakeResponse } from './fake-http';

const CMS = '/api/v1/namespaces/default/configmaps';
const CBOR = 'application/cbor';
/** The gates of `--feature-gates=CBORServingAndStorage=true`: the defaults (StreamingList among them) plus CBOR. */
const gates = parseFlags([`--feature-gates=${CBOR_GATE}=true`]).featureGates;
/** What client-go's CBOR clients send (ClientsAllowCBOR and ClientsPreferCBOR). */
const CLIENT_GO = { accept: 'application/json;q=0.9,application/cbor;q=1', 'content-type': CBOR };
const limits = { maxDepth: maxNestingDepth };

test.before(async () => {
  await loadCbor();
});

function decoded(res: FakeResponse): any {
  return decodeCbor(res.bytes, undefined, limits);
}

test('create from a CBOR body answers 201 in CBOR; []byte fields arrive in tag 22 and are stored as base64', (t) =>
  withStore(async (f) => {
    const body = encodeCbor(configMapSchema, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: 'v' }, binaryData: { b: 'AAEC' } });
    const res = await call(f, handleCreate, 'POST', CMS, { raw: body, headers: CLIENT_GO, gates });
    t.is(res.statusCode, 201, res.text);
    t.is(res.headers['content-type'], CBOR);
    t.is(res.bytes.subarray(0, 3).toString('hex'), 'd9d9f7');
    const stored = await f.store.get(f.type('configmaps'), 'default', 'a');
    t.deepEqual(stored.binaryData, { b: 'AAEC' });
    t.deepEqual(decodeCbor(res.bytes, configMapSchema, limits), stored);
  }));

test('unknown fields in a CBOR body go to field validation as in JSON; duplicate keys are refused outright', (t) =>
  withStore(async (f) => {
    const body = encodeCbor(undefined, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: 'v' }, colour: 'blue' });
    const strict = await call(f, handleCreate, 'POST', `${CMS}?fieldValidation=Strict`, { raw: body, headers: CLIENT_GO, gates });
    t.is(strict.statusCode, 400);
    t.regex(decoded(strict).message as string, /unknown field "colour"/);
    const warn = await call(f, handleCreate, 'POST', CMS, { raw: body, headers: CLIENT_GO, gates });
    t.is(warn.statusCode, 201);
    t.regex(String(warn.headers.warning), /unknown field \\"colour\\"/);
    t.false('colour' in (await f.store.get(f.type('configmaps'), 'default', 'a')));
    // {kind: ConfigMap, metadata: {name: b, name: c}}: a map may not repeat a key, whatever fieldValidation says.
    const dup = Buffer.from('a2646b696e6469436f6e6669674d6170686d65746164617461a2646e616d656162646e616d656163', 'hex');
    const refused = await call(f, handleCreate, 'POST', `${CMS}?fieldValidation=Ignore`, { raw: dup, headers: CLIENT_GO, gates });
    t.is(refused.statusCode, 400);
    t.regex(decoded(refused).message as string, /could not be decoded as CBOR: duplicate map key "name" at \.metadata/);
  }));

test('get, list and update: CBOR in the client\'s order, JSON when it comes first, a Table stays JSON', (t) =>
  withStore(async (f) => {
    const a = await f.store.create(f.type('configmaps'), 'default', configMap('a'), admin);
    const get = await call(f, handleGet, 'GET', `${CMS}/a`, { headers: { accept: `${CBOR}, application/json` }, gates });
    t.is(get.headers['content-type'], CBOR);
    t.deepEqual(decoded(get), a);
    const list = await call(f, handleList, 'GET', CMS, { headers: { accept: CBOR }, gates });
    t.is(list.headers['content-type'], CBOR);
    t.like(decoded(list), { kind: 'ConfigMapList', items: [a] });
    const json = await call(f, handleGet, 'GET', `${CMS}/a`, { headers: { accept: `application/json, ${CBOR}` }, gates });
    t.is(json.headers['content-type'], 'application/json');
    const table = await call(f, handleList, 'GET', CMS, { headers: { accept: `${CBOR};as=Table;v=v1;g=meta.k8s.io, application/json;as=Table;v=v1;g=meta.k8s.io` }, gates });
    t.is(table.body.kind, 'Table');
    const updated = await call(f, handleUpdate, 'PUT', `${CMS}/a`, { raw: encodeCbor(configMapSchema, { ...a, data: { k: 'new' } }), headers: CLIENT_GO, gates });
    t.is(updated.statusCode, 200, updated.text);
    t.deepEqual(decoded(updated).data, { k: 'new' });
  }));

test('errors to a CBOR client are a CBOR Status; CBOR patches other than apply are 415; apply in CBOR is served', (t) =>
  withStore(async (f) => {
    const missing = await call(f, handleGet, 'GET', `${CMS}/nope`, { headers: { accept: CBOR }, gates });
    t.is(missing.statusCode, 404);
    t.is(missing.headers['content-type'], CBOR);
    t.like(decoded(missing), { kind: 'Status', reason: 'NotFound', code: 404 });
    await f.store.create(f.type('configmaps'), 'default', configMap('a'), admin);
    const merge = await call(f, handlePatch, 'PATCH', `${CMS}/a`, { raw: encodeCbor(undefined, { data: { x: 'y' } }), headers: CLIENT_GO, gates });
    t.is(merge.statusCode, 415);
    t.regex(decoded(merge).message as string, /application\/apply-patch\+cbor/);
    // Server-side apply in CBOR (issue 18): the applied configuration merged, answered in CBOR.
    const config = encodeCbor(undefined, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { x: 'y' } });
    const apply = await call(f, handlePatch, 'PATCH', `${CMS}/a?fieldManager=cbor-client`, { raw: config, headers: { ...CLIENT_GO, 'content-type': 'application/apply-patch+cbor' }, gates });
    t.is(apply.statusCode, 200);
    t.is(apply.headers['content-type'], CBOR);
    t.deepEqual(decoded(apply).data, { k: 'v', x: 'y' });
    t.like(decoded(apply).metadata.managedFields[0], { manager: 'cbor-client', operation: 'Apply', fieldsV1: { 'f:data': { 'f:x': {} } } });
  }));


test('DeleteOptions and bindings in CBOR are read', (t) =>
  withStore(async (f) => {
    await f.store.create(f.type('configmaps'), 'default', configMap('a', { finalizers: ['example.com/hold'] }), admin);
    const wrong = encodeCbor(undefined, { apiVersion: 'meta.k8s.io/v1', kind: 'DeleteOptions', preconditions: { uid: 'not-it' } });
    const conflict = await call(f, handleDelete, 'DELETE', `${CMS}/a`, { raw: wrong, headers: CLIENT_GO, gates });
    t.is(conflict.statusCode, 409);
    t.is(decoded(conflict).reason, 'Conflict');
    const orphan = encodeCbor(undefined, { apiVersion: 'meta.k8s.io/v1', kind: 'DeleteOptions', propagationPolicy: 'Orphan' });
    t.is((await call(f, handleDelete, 'DELETE', `${CMS}/a`, { raw: orphan, headers: CLIENT_GO, gates })).statusCode, 200);
    t.deepEqual((await f.store.get(f.type('configmaps'), 'default', 'a')).metadata.finalizers, ['example.com/hold', 'orphan']);

    await f.store.create(f.type('pods'), 'default', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x' }] } }, admin);
    const binding = encodeCbor(undefined, { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p' }, target: { kind: 'Node', name: 'n1' } });
    const bound = await call(f, handlePodBinding, 'POST', '/api/v1/namespaces/default/pods/p/binding', { raw: binding, headers: CLIENT_GO, gates });
    t.is(bound.statusCode, 201, bound.text);
    t.like((await f.store.get(f.type('pods'), 'default', 'p')).spec, { nodeName: 'n1' });
  }));

test('a CBOR watch streams self-described {type, object} items as application/cbor-seq, bookmarks included', (t) =>
  withStore(async (f) => {
    await f.store.create(f.type('configmaps'), 'default', configMap('old'), admin);
    const ac = new AbortController();
    const w = start(f, handleWatch, 'GET', `${CMS}?watch=1&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan`, {
      signal: ac.signal,
      headers: { accept: CLIENT_GO.accept },
      gates,
    });
    await w.res.waitForBytes(3);
    t.is(w.res.headers['content-type'], 'application/cbor-seq');
    await f.store.create(f.type('configmaps'), 'default', configMap('new'), admin);
    await f.store.delete(f.type('configmaps'), 'default', 'old', {}, admin);
    // Every write is whole items: what has arrived decodes as a sequence once the next item is complete.
    let events: any[] = [];
    while (events.length < 4) {
      await w.res.waitForBytes(w.res.bytes.length + 1);
      events = decodeCborSequence(w.res.bytes, undefined, limits);
    }
    t.deepEqual(
      events.map((e) => [e.type, e.object.metadata.name]),
      [
        ['ADDED', 'old'],
        ['BOOKMARK', undefined],
        ['ADDED', 'new'],
        ['DELETED', 'old'],
      ],
    );
    t.deepEqual(events[1].object.metadata.annotations, { [INITIAL_EVENTS_END]: 'true', [SVC_INITIAL_EVENTS_END]: 'true' });
    ac.abort();
    await w.done;
  }));

test('without the gate: CBOR bodies are 415, a CBOR-only Accept is 406, and JSON answers when listed after CBOR', (t) =>
  withStore(async (f) => {
    const body = encodeCbor(configMapSchema, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } });
    const create = await call(f, handleCreate, 'POST', CMS, { raw: body, headers: CLIENT_GO });
    t.is(create.statusCode, 415);
    t.is(create.headers['content-type'], 'application/json');
    t.notRegex(create.text, /cbor/);
    await f.store.create(f.type('configmaps'), 'default', configMap('a'), admin);
    t.is((await call(f, handleUpdate, 'PUT', `${CMS}/a`, { raw: body, headers: CLIENT_GO })).statusCode, 415);
    t.is((await call(f, handleDelete, 'DELETE', `${CMS}/a`, { raw: body, headers: CLIENT_GO })).statusCode, 415);
    t.is((await call(f, handlePatch, 'PATCH', `${CMS}/a`, { raw: body, headers: { 'content-type': 'application/apply-patch+cbor' } })).statusCode, 415);
    t.is((await call(f, handleGet, 'GET', `${CMS}/a`, { headers: { accept: CBOR } })).statusCode, 406);
    const fallback = await call(f, handleGet, 'GET', `${CMS}/a`, { headers: { accept: CLIENT_GO.accept } });
    t.is(fallback.statusCode, 200);
    t.is(fallback.headers['content-type'], 'application/json');
    t.is((await call(f, handleWatch, 'GET', `${CMS}?watch=1`, { headers: { accept: 'application/cbor-seq' } })).statusCode, 406);
  }));
