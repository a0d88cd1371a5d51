import test from 'ava';
import { gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { parse as parseYaml } from 'yaml';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { call } from '../../helpers/http';

// Wire-level checks of exact codes and bodies against a real svc-apiserver process.
let s: RunningApiServer;
test.before(async () => {
  s = await startApiServer();
});
test.after.always(async () => {
  await s?.stop();
});

const pod = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { app: 'web' } },
  // A scheduler nobody runs, so the built-in scheduler does not write to these pods mid-test.
  spec: { schedulerName: 'wire-test', containers: [{ name: 'c', image: 'busybox:1.36' }] },
  ...extra,
});

async function ns(name: string) {
  const r = await call(s.admin, 'POST', `${s.url}/api/v1/namespaces`, { metadata: { name } });
  if (r.status !== 201) throw new Error(`namespace ${name}: ${r.status} ${r.text}`);
}

test.serial('create answers 201 with the stored object, defaults and metadata', async (t) => {
  await ns('wire');
  const r = await call(s.admin, 'POST', `${s.url}/api/v1/namespaces/wire/pods`, pod('p1'));
  t.is(r.status, 201, r.text);
  t.is(r.body.kind, 'Pod');
  t.regex(r.body.metadata.uid, /^[0-9a-f-]{36}$/);
  t.truthy(r.body.metadata.resourceVersion);
  t.truthy(r.body.metadata.creationTimestamp);
  t.is(r.body.metadata.generation, 1);
  t.is(r.body.spec.restartPolicy, 'Always');
  t.is(r.body.status.phase, 'Pending');
  t.is(r.body.metadata.managedFields[0].operation, 'Update');
  const g = await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/wire/pods/p1`);
  t.is(g.status, 200);
  t.deepEqual(g.body, r.body);
});

test.serial('a second create of the same name is 409 AlreadyExists', async (t) => {
  const r = await call(s.admin, 'POST', `${s.url}/api/v1/namespaces/wire/pods`, pod('p1'));
  t.is(r.status, 409);
  t.is(r.body.kind, 'Status');
  t.is(r.body.reason, 'AlreadyExists');
});

test.serial('update with a stale resourceVersion is 409 Conflict and changes nothing', async (t) => {
  const cur = (await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/wire/pods/p1`)).body;
  const next = { ...cur, metadata: { ...cur.metadata, labels: { app: 'v2' } } };
  const ok = await call(s.admin, 'PUT', `${s.url}/api/v1/namespaces/wire/pods/p1`, next);
  t.is(ok.status, 200, ok.text);
  t.not(ok.body.metadata.resourceVersion, cur.metadata.resourceVersion);
  const stale = await call(s.admin, 'PUT', `${s.url}/api/v1/namespaces/wire/pods/p1`, { ...cur, metadata: { ...cur.metadata, labels: { app: 'v3' } } });
  t.is(stale.status, 409);
  t.is(stale.body.reason, 'Conflict');
  const after = await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/wire/pods/p1`);
  t.is(after.body.metadata.labels.app, 'v2');
});

test.serial('the main resource ignores status; the status sub-resource changes only status', async (t) => {
  const cur = (await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/wire/pods/p1`)).body;
  const r = await call(s.admin, 'PUT', `${s.url}/api/v1/namespaces/wire/pods/p1`, { ...cur, status: { phase: 'Running' } });
  t.is(r.status, 200);
  t.is(r.body.status.phase, 'Pending');
  const st = await call(s.admin, 'PATCH', `${s.url}/api/v1/namespaces/wire/pods/p1/status`, { status: { phase: 'Running' }, spec: { restartPolicy: 'Never' } }, { 'content-type': 'application/merge-patch+json' });
  t.is(st.status, 200, st.text);
  t.is(st.body.status.phase, 'Running');
  t.is(st.body.spec.restartPolicy, 'Always');
});

test.serial('json-patch with a failing test op is rejected and changes nothing', async (t) => {
  const before = (await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/wire/pods/p1`)).body;
  const r = await call(s.admin, 'PATCH', `${s.url}/api/v1/namespaces/wire/pods/p1`, [
    { op: 'test', path: '/metadata/labels/app', value: 'nope' },
    { op: 'replace', path: '/metadata/labels/app', value: 'x' },
  ], { 'content-type': 'application/json-patch+json' });
  t.true(r.status === 422 || r.status === 409 || r.status === 400, r.text);
  t.is(r.body.kind, 'Status');
  const after = (await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/wire/pods/p1`)).body;
  t.is(after.metadata.resourceVersion, before.metadata.resourceVersion);
  const ok = await call(s.admin, 'PATCH', `${s.url}/api/v1/namespaces/wire/pods/p1`, [
    { op: 'test', path: '/metadata/labels/app', value: 'v2' },
    { op: 'add', path: '/metadata/labels/tier', value: 'front' },
  ], { 'content-type': 'application/json-patch+json' });
  t.is(ok.status, 200, ok.text);
  t.is(ok.body.metadata.labels.tier, 'front');
});

test.serial('strategic merge patch merges containers by name', async (t) => {
  const r = await call(s.admin, 'PATCH', `${s.url}/api/v1/namespaces/wire/pods/p1`, { spec: { containers: [{ name: 'c', image: 'busybox:1.37' }] } }, { 'content-type': 'application/strategic-merge-patch+json' });
  t.is(r.status, 200, r.text);
  t.is(r.body.spec.containers.length, 1);
  t.is(r.body.spec.containers[0].image, 'busybox:1.37');
  t.is(r.body.spec.containers[0].imagePullPolicy, 'IfNotPresent');
  t.is(r.body.metadata.generation, 2);
});

test.serial('merge patch with null removes a label', async (t) => {
  const r = await call(s.admin, 'PATCH', `${s.url}/api/v1/namespaces/wire/pods/p1`, { metadata: { labels: { tier: null } } }, { 'content-type': 'application/merge-patch+json' });
  t.is(r.status, 200, r.text);
  t.is(r.body.metadata.labels.tier, undefined);
});

test.serial('label and field selectors', async (t) => {
  await call(s.admin, 'POST', `${s.url}/api/v1/namespaces/wire/pods`, pod('p2', { spec: { nodeName: 'n1', schedulerName: 'wire-test', containers: [{ name: 'c', image: 'x' }] } }));
  const byLabel = await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/wire/pods?labelSelector=app%3Dweb`);
  t.deepEqual(byLabel.body.items.map((p: { metadata: { name: string } }) => p.metadata.name), ['p2']);
  const byNode = await call(s.admin, 'GET', `${s.url}/api/v1/pods?fieldSelector=spec.nodeName%3Dn1`);
  t.deepEqual(byNode.body.items.map((p: { metadata: { name: string } }) => p.metadata.name), ['p2']);
  const bad = await call(s.admin, 'GET', `${s.url}/api/v1/pods?fieldSelector=spec.bogus%3D1`);
  t.is(bad.status, 400);
  t.is(bad.body.kind, 'Status');
});

/** Every namespace also holds the root CA ConfigMap, published asynchronously; lists that count leave it out. */
const NOT_ROOT_CA = 'fieldSelector=metadata.name%21%3Dkube-root-ca.crt';

test.serial('chunked lists keep one resourceVersion and count what remains', async (t) => {
  await ns('chunks');
  // The control plane publishes the root CA ConfigMap into every namespace; wait for it so the count is fixed (25 + 1).
  t.true(await eventually(async () => (await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/chunks/configmaps/kube-root-ca.crt`)).status === 200));
  for (let i = 0; i < 25; i++) {
    const r = await call(s.admin, 'POST', `${s.url}/api/v1/namespaces/chunks/configmaps`, { metadata: { name: `cm-${String(i).padStart(2, '0')}`, labels: { even: String(i % 2 === 0) } }, data: { i: String(i) } });
    t.is(r.status, 201);
  }
  const first = await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/chunks/configmaps?limit=10`);
  t.is(first.body.items.length, 10);
  t.is(first.body.metadata.remainingItemCount, 16);
  t.truthy(first.body.metadata.continue);
  // A write between chunks is not seen by the rest of the list.
  await call(s.admin, 'POST', `${s.url}/api/v1/namespaces/chunks/configmaps`, { metadata: { name: 'cm-zz' } });
  const second = await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/chunks/configmaps?limit=10&continue=${encodeURIComponent(first.body.metadata.continue)}`);
  t.is(second.body.metadata.resourceVersion, first.body.metadata.resourceVersion);
  const third = await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/chunks/configmaps?limit=10&continue=${encodeURIComponent(second.body.metadata.continue)}`);
  t.is(third.body.items.length, 6);
  t.falsy(third.body.metadata.continue);
  t.is(third.body.metadata.remainingItemCount, undefined);
  const names = [...first.body.items, ...second.body.items, ...third.body.items].map((c: { metadata: { name: string } }) => c.metadata.name);
  t.is(new Set(names.filter((n) => n !== 'kube-root-ca.crt')).size, 25);
  t.true(names.includes('kube-root-ca.crt'));
  t.false(names.includes('cm-zz'));
  const filtered = await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/chunks/configmaps?limit=5&labelSelector=even%3Dtrue`);
  t.is(filtered.body.items.length, 5);
  t.is(filtered.body.metadata.remainingItemCount, undefined);
  t.truthy(filtered.body.metadata.continue);
});

test.serial('resourceVersion and resourceVersionMatch: the 400 rows of the table', async (t) => {
  const base = `${s.url}/api/v1/namespaces/chunks/configmaps`;
  t.is((await call(s.admin, 'GET', `${base}?resourceVersionMatch=Exact`)).status, 400);
  t.is((await call(s.admin, 'GET', `${base}?resourceVersionMatch=NotOlderThan`)).status, 400);
  t.is((await call(s.admin, 'GET', `${base}?resourceVersion=0&resourceVersionMatch=Exact`)).status, 400);
  const first = await call(s.admin, 'GET', `${base}?limit=2`);
  const bad = await call(s.admin, 'GET', `${base}?limit=2&resourceVersion=5&continue=${encodeURIComponent(first.body.metadata.continue)}`);
  t.is(bad.status, 400);
  const exact = await call(s.admin, 'GET', `${base}?resourceVersion=${first.body.metadata.resourceVersion}&resourceVersionMatch=Exact`);
  t.is(exact.status, 200);
  t.is(exact.body.metadata.resourceVersion, first.body.metadata.resourceVersion);
  const garbage = await call(s.admin, 'GET', `${base}?continue=notatoken`);
  t.is(garbage.status, 400);
});

test.serial('finalizers hold deletion; removing the last one removes the object', async (t) => {
  const r = await call(s.admin, 'POST', `${s.url}/api/v1/namespaces/wire/configmaps`, { metadata: { name: 'fin', finalizers: ['example.com/hold'] } });
  t.is(r.status, 201);
  const d = await call(s.admin, 'DELETE', `${s.url}/api/v1/namespaces/wire/configmaps/fin`);
  t.is(d.status, 200);
  t.truthy(d.body.metadata.deletionTimestamp);
  const still = await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/wire/configmaps/fin`);
  t.is(still.status, 200);
  const p = await call(s.admin, 'PATCH', `${s.url}/api/v1/namespaces/wire/configmaps/fin`, { metadata: { finalizers: null } }, { 'content-type': 'application/merge-patch+json' });
  t.is(p.status, 200, p.text);
  t.is((await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/wire/configmaps/fin`)).status, 404);
});

test.serial('delete preconditions and dryRun', async (t) => {
  await call(s.admin, 'POST', `${s.url}/api/v1/namespaces/wire/configmaps`, { metadata: { name: 'pre' } });
  const wrong = await call(s.admin, 'DELETE', `${s.url}/api/v1/namespaces/wire/configmaps/pre`, { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'not-the-uid' } });
  t.is(wrong.status, 409);
  const dry = await call(s.admin, 'DELETE', `${s.url}/api/v1/namespaces/wire/configmaps/pre?dryRun=All`);
  t.is(dry.status, 200);
  t.is((await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/wire/configmaps/pre`)).status, 200);
  const dryCreate = await call(s.admin, 'POST', `${s.url}/api/v1/namespaces/wire/configmaps?dryRun=All`, { metadata: { name: 'ghost' } });
  t.is(dryCreate.status, 201);
  t.is((await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/wire/configmaps/ghost`)).status, 404);
  const badDry = await call(s.admin, 'POST', `${s.url}/api/v1/namespaces/wire/configmaps?dryRun=Some`, { metadata: { name: 'ghost' } });
  t.is(badDry.status, 400);
});

test.serial('ownerReferences: Background deletes dependents, Orphan keeps them', async (t) => {
  const owner = (await call(s.admin, 'POST', `${s.url}/api/v1/namespaces/wire/configmaps`, { metadata: { name: 'owner' } })).body;
  const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid };
  await call(s.admin, 'POST', `${s.url}/api/v1/namespaces/wire/configmaps`, { metadata: { name: 'dep', ownerReferences: [ref] } });
  await call(s.admin, 'DELETE', `${s.url}/api/v1/namespaces/wire/configmaps/owner?propagationPolicy=Background`);
  t.true(await eventually(async () => (await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/wire/configmaps/dep`)).status === 404));

  const owner2 = (await call(s.admin, 'POST', `${s.url}/api/v1/namespaces/wire/configmaps`, { metadata: { name: 'owner2' } })).body;
  await call(s.admin, 'POST', `${s.url}/api/v1/namespaces/wire/configmaps`, { metadata: { name: 'dep2', ownerReferences: [{ ...ref, name: 'owner2', uid: owner2.metadata.uid }] } });
  await call(s.admin, 'DELETE', `${s.url}/api/v1/namespaces/wire/configmaps/owner2?propagationPolicy=Orphan`);
  t.true(await eventually(async () => (await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/wire/configmaps/owner2`)).status === 404));
  const dep2 = await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/wire/configmaps/dep2`);
  t.is(dep2.status, 200);
  t.is(dep2.body.metadata.ownerReferences, undefined);
});

test.serial('Foreground deletion removes dependents before the owner', async (t) => {
  const owner = (await call(s.admin, 'POST', `${s.url}/api/v1/namespaces/wire/configmaps`, { metadata: { name: 'fg-owner' } })).body;
  const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'fg-owner', uid: owner.metadata.uid, blockOwnerDeletion: true };
  await call(s.admin, 'POST', `${s.url}/api/v1/namespaces/wire/configmaps`, { metadata: { name: 'fg-dep', ownerReferences: [ref] } });
  const d = await call(s.admin, 'DELETE', `${s.url}/api/v1/namespaces/wire/configmaps/fg-owner?propagationPolicy=Foreground`);
  t.is(d.status, 200);
  t.truthy(d.body.metadata.deletionTimestamp, 'the owner waits, terminating');
  t.true(d.body.metadata.finalizers.includes('foregroundDeletion'));
  t.true(await eventually(async () => (await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/wire/configmaps/fg-owner`)).status === 404));
  t.is((await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/wire/configmaps/fg-dep`)).status, 404);
});

test.serial('deletecollection deletes what the selector matches and nothing else', async (t) => {
  await ns('dc');
  for (const [name, tier] of [['a', 'x'], ['b', 'x'], ['c', 'y']]) {
    await call(s.admin, 'POST', `${s.url}/api/v1/namespaces/dc/configmaps`, { metadata: { name, labels: { tier } } });
  }
  const r = await call(s.admin, 'DELETE', `${s.url}/api/v1/namespaces/dc/configmaps?labelSelector=tier%3Dx`);
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body.items.map((i: { metadata: { name: string } }) => i.metadata.name).sort(), ['a', 'b']);
  const left = await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/dc/configmaps?${NOT_ROOT_CA}`);
  t.deepEqual(left.body.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['c']);
  const dry = await call(s.admin, 'DELETE', `${s.url}/api/v1/namespaces/dc/configmaps?dryRun=All`);
  t.is(dry.status, 200);
  t.is((await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/dc/configmaps/c`)).status, 200, 'dry run deletes nothing');
});

test.serial('namespaces: missing → 404, terminating → 403, deletion empties them', async (t) => {
  const missing = await call(s.admin, 'POST', `${s.url}/api/v1/namespaces/nowhere/configmaps`, { metadata: { name: 'x' } });
  t.is(missing.status, 404);
  await ns('doomed');
  await call(s.admin, 'POST', `${s.url}/api/v1/namespaces/doomed/configmaps`, { metadata: { name: 'a', finalizers: ['example.com/slow'] } });
  const d = await call(s.admin, 'DELETE', `${s.url}/api/v1/namespaces/doomed`);
  t.is(d.status, 200);
  t.is(d.body.status.phase, 'Terminating');
  const refused = await call(s.admin, 'POST', `${s.url}/api/v1/namespaces/doomed/configmaps`, { metadata: { name: 'b' } });
  t.is(refused.status, 403);
  await call(s.admin, 'PATCH', `${s.url}/api/v1/namespaces/doomed/configmaps/a`, { metadata: { finalizers: null } }, { 'content-type': 'application/merge-patch+json' });
  t.true(await eventually(async () => (await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/doomed`)).status === 404));
  const sys = await call(s.admin, 'DELETE', `${s.url}/api/v1/namespaces/default`);
  t.is(sys.status, 403);
});

test.serial('bad input gets a clear Status and changes nothing', async (t) => {
  const url = `${s.url}/api/v1/namespaces/wire/configmaps`;
  const malformed = await call(s.admin, 'POST', url, '{"metadata": {', { 'content-type': 'application/json' });
  t.is(malformed.status, 400);
  t.is(malformed.body.kind, 'Status');
  const badYaml = await call(s.admin, 'POST', url, 'metadata: [unclosed', { 'content-type': 'application/yaml' });
  t.is(badYaml.status, 400);
  const wrongKind = await call(s.admin, 'POST', url, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'k' } });
  t.is(wrongKind.status, 400);
  const wrongVersion = await call(s.admin, 'POST', url, { apiVersion: 'apps/v1', kind: 'ConfigMap', metadata: { name: 'k' } });
  t.is(wrongVersion.status, 400);
  const badName = await call(s.admin, 'POST', url, { metadata: { name: 'Not_Valid' } });
  t.is(badName.status, 422);
  t.is(badName.body.reason, 'Invalid');
  t.true(badName.body.details.causes.some((c: { field: string }) => c.field === 'metadata.name'));
  const huge = await call(s.admin, 'POST', url, { metadata: { name: 'huge' }, data: { x: 'a'.repeat(4 * 1024 * 1024) } });
  t.is(huge.status, 413);
  const unknown = await call(s.admin, 'GET', `${s.url}/api/v1/widgets`);
  t.is(unknown.status, 404);
  t.is(unknown.body.kind, 'Status');
  const list = await call(s.admin, 'GET', url);
  t.false(list.body.items.some((c: { metadata: { name: string } }) => ['k', 'huge', 'Not_Valid'].includes(c.metadata.name)));
});

test.serial('fieldValidation: Warn adds Warning headers, Strict rejects listing every field', async (t) => {
  const url = `${s.url}/api/v1/namespaces/wire/configmaps`;
  const body = '{"metadata":{"name":"fv1"},"bogus":1,"data":{"a":"1"},"data":{"a":"2"}}';
  const warn = await call(s.admin, 'POST', url, body);
  t.is(warn.status, 201, warn.text);
  // RFC 7234 warn-text is a quoted-string: inner quotes arrive escaped.
  const w = String(warn.headers.warning ?? '').replace(/\\"/g, '"');
  t.regex(w, /^299 - "unknown field "bogus"",299 - "duplicate field "data""$/);
  t.is(warn.body.bogus, undefined);
  const strict = await call(s.admin, 'POST', `${url}?fieldValidation=Strict`, body.replace('fv1', 'fv2'));
  t.is(strict.status, 400);
  t.regex(strict.body.message, /unknown field "bogus"/);
  t.regex(strict.body.message, /duplicate field "data"/);
  const ignore = await call(s.admin, 'POST', `${url}?fieldValidation=Ignore`, body.replace('fv1', 'fv3'));
  t.is(ignore.status, 201);
  t.is(ignore.headers.warning, undefined);
});

test.serial('encodings: YAML both ways, Table, 406, gzip, pretty', async (t) => {
  const url = `${s.url}/api/v1/namespaces/wire/configmaps`;
  const y = await call(s.admin, 'POST', url, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  k: v\n', { 'content-type': 'application/yaml', accept: 'application/yaml' });
  t.is(y.status, 201, y.text);
  t.is(parseYaml(y.text).data.k, 'v');
  const table = await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/wire/pods`, undefined, { accept: 'application/json;as=Table;g=meta.svc.io;v=v1' });
  t.is(table.body.kind, 'Table');
  t.is(table.body.apiVersion, 'meta.svc.io/v1');
  t.deepEqual(table.body.columnDefinitions.slice(0, 2).map((c: { name: string }) => c.name), ['Name', 'Ready']);
  const cmTable = await call(s.admin, 'GET', url, undefined, { accept: 'application/json;as=Table;g=meta.svc.io;v=v1' });
  t.truthy(cmTable.body.rows.length);
  const fallback = await call(s.admin, 'GET', url, undefined, { accept: 'application/vnd.svc.protobuf, application/json' });
  t.is(fallback.status, 200);
  t.is(fallback.body.kind, 'ConfigMapList');
  const none = await call(s.admin, 'GET', url, undefined, { accept: 'application/vnd.svc.protobuf' });
  t.is(none.status, 406);
  t.is(none.body.kind, 'Status');
  const res = await request(`${url}`, { dispatcher: s.admin, headers: { 'accept-encoding': 'gzip' } });
  const raw = Buffer.from(await res.body.arrayBuffer());
  t.is(res.headers['content-encoding'], 'gzip');
  t.is(JSON.parse(gunzipSync(raw).toString()).kind, 'ConfigMapList');
  const pretty = await call(s.admin, 'GET', `${url}/from-yaml?pretty=true`);
  t.true(pretty.text.includes('\n  "'));
  const cbor = await call(s.admin, 'POST', url, 'x', { 'content-type': 'application/cbor' });
  t.is(cbor.status, 415);
});

test.serial('watch: ADDED, MODIFIED, DELETED from a resourceVersion, with a bookmark for streaming lists', async (t) => {
  const start = (await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/wire/configmaps`)).body.metadata.resourceVersion;
  const res = await request(`${s.url}/api/v1/namespaces/wire/configmaps?watch=1&resourceVersion=${start}&timeoutSeconds=10`, { dispatcher: s.admin });
  t.is(res.statusCode, 200);
  const events: Array<{ type: string; object: { metadata: { name: string } } }> = [];
  const reading = (async () => {
    let buf = '';
    for await (const chunk of res.body) {
      buf += chunk.toString();
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        events.push(JSON.parse(buf.slice(0, i)));
        buf = buf.slice(i + 1);
        if (events.length === 3) return;
      }
    }
  })();
  await call(s.admin, 'POST', `${s.url}/api/v1/namespaces/wire/configmaps`, { metadata: { name: 'w1' } });
  await call(s.admin, 'PATCH', `${s.url}/api/v1/namespaces/wire/configmaps/w1`, { data: { a: 'b' } }, { 'content-type': 'application/merge-patch+json' });
  await call(s.admin, 'DELETE', `${s.url}/api/v1/namespaces/wire/configmaps/w1`);
  await reading;
  res.body.destroy();
  t.deepEqual(events.map((e) => e.type), ['ADDED', 'MODIFIED', 'DELETED']);
  t.true(events.every((e) => e.object.metadata.name === 'w1'));

  const streaming = await request(`${s.url}/api/v1/namespaces/chunks/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=5`, { dispatcher: s.admin });
  let text = '';
  for await (const chunk of streaming.body) {
    text += chunk.toString();
    if (text.includes('"BOOKMARK"')) break;
  }
  streaming.body.destroy();
  const lines = text.trim().split('\n').map((l) => JSON.parse(l));
  t.true(lines.filter((l) => l.type === 'ADDED').length >= 26);
  const bm = lines.find((l) => l.type === 'BOOKMARK');
  t.is(bm.object.metadata.annotations['svc.io/initial-events-end'], 'true');
  const bad = await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/chunks/configmaps?watch=1&sendInitialEvents=true`);
  t.is(bad.status, 400);
});

test.serial('discovery, version, openapi and health', async (t) => {
  const api = await call(s.admin, 'GET', `${s.url}/api`);
  t.deepEqual(api.body.versions, ['v1']);
  const v1 = await call(s.admin, 'GET', `${s.url}/api/v1`);
  t.true(v1.body.resources.some((r: { name: string }) => r.name === 'pods/status'));
  const apis = await call(s.admin, 'GET', `${s.url}/apis`);
  t.true(apis.body.groups.some((g: { name: string }) => g.name === 'coordination.svc.io'));
  t.is((await call(s.admin, 'GET', `${s.url}/apis/coordination.svc.io/v1`)).body.resources[0].name, 'leases');
  t.truthy((await call(s.admin, 'GET', `${s.url}/version`)).body.gitVersion);
  t.is((await call(s.admin, 'GET', `${s.url}/openapi/v2`)).body.swagger, '2.0');
  const ready = await call(s.anonymous, 'GET', `${s.url}/readyz?verbose`);
  t.is(ready.status, 200);
  t.regex(ready.text, /\[\+\]ping ok/);
  t.regex(ready.text, /readyz check passed/);
  const excl = await call(s.anonymous, 'GET', `${s.url}/livez?verbose&exclude=etcd`);
  t.regex(excl.text, /\[\+\]etcd excluded: ok/);
  t.is((await call(s.anonymous, 'GET', `${s.url}/livez/ping`)).text, 'ok');
  t.is((await call(s.anonymous, 'GET', `${s.url}/livez/nonesuch`)).status, 404);
  t.is((await call(s.anonymous, 'GET', `${s.url}/api/v1/pods`)).status, 403);
  const badToken = await call(s.anonymous, 'GET', `${s.url}/api/v1/pods`, undefined, { authorization: 'Bearer nope' });
  t.is(badToken.status, 401);
});

async function eventually(check: () => Promise<boolean>, ms = 15_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}
