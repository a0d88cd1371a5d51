import test from 'ava';
import { ApiError, errors } from '../../../../apiserver/api/errors';
import { builtinTypes, ResourceRegistry } from '../../../../apiserver/registry/builtin';
import { GroupAliases, servedBody, servedError, servedEventObject } from '../../../../apiserver/server/group-alias';
import { parseRequestInfo } from '../../../../apiserver/server/request-info';

function registry(): ResourceRegistry {
  const r = new ResourceRegistry();
  for (const t of builtinTypes) r.register(t);
  return r;
}
const groups = () => registry().groups().map((g) => g.name);
const info = (path: string, method = 'GET') => parseRequestInfo(method, path, new URLSearchParams());

test('a resource request under a k8s.io name is handled as its svc.io group and remembers the name asked for', (t) => {
  const a = new GroupAliases(groups(), true);
  const i = a.apply(info('/apis/rbac.authorization.k8s.io/v1/namespaces/ns/roles/r'));
  t.is(i.apiGroup, 'rbac.authorization.svc.io');
  t.is(i.servedGroup, 'rbac.authorization.k8s.io');
  t.is(i.resource, 'roles');
  t.is(i.namespace, 'ns');
  t.is(i.name, 'r');
  // The canonical name, the core group, groups without an upstream twin and unknown groups: unchanged.
  for (const p of ['/apis/rbac.authorization.svc.io/v1/clusterroles', '/api/v1/pods', '/apis/policy/v1/poddisruptionbudgets', '/apis/apps.k8s.io/v1/deployments', '/apis/nothere.k8s.io/v1/things']) {
    t.deepEqual(a.apply(info(p)), info(p), p);
  }
  // Discovery paths are not resource requests: discovery lists both names itself.
  t.deepEqual(a.apply(info('/apis/coordination.k8s.io/v1')), info('/apis/coordination.k8s.io/v1'));
});

test('--serve-k8s-io-groups=false serves only the svc.io names', (t) => {
  const a = new GroupAliases(groups(), false);
  const i = info('/apis/coordination.k8s.io/v1/namespaces/ns/leases');
  t.deepEqual(a.apply(i), i);
  t.is(a.canonicalOf('coordination.k8s.io'), undefined);
  t.is(a.documentTypes(builtinTypes).length, builtinTypes.length);
});

test('discovery and OpenAPI types: every svc.io type again under its k8s.io group, the same schema and kind', (t) => {
  const a = new GroupAliases(groups(), true);
  const docs = a.documentTypes(builtinTypes);
  const names = (g: string) => docs.filter((d) => d.group === g).map((d) => `${d.version}/${d.resource}`).sort();
  for (const g of ['rbac.authorization', 'coordination', 'events', 'certificates', 'authorization']) {
    t.true(names(`${g}.svc.io`).length > 0, g);
    t.deepEqual(names(`${g}.k8s.io`), names(`${g}.svc.io`), g);
  }
  const role = docs.find((d) => d.group === 'rbac.authorization.k8s.io' && d.resource === 'roles')!;
  const canonical = builtinTypes.find((d) => d.group === 'rbac.authorization.svc.io' && d.resource === 'roles')!;
  t.is(role.kind, 'Role');
  t.is(role.schema, canonical.schema);
  t.is(docs.filter((d) => d.group === 'policy').length, 1);
  // Upstream's name first: kubectl resolves a bare resource name to the first group serving it.
  t.true(docs.indexOf(role) < docs.indexOf(canonical));
  t.is(docs.filter((d) => d.group === '').length, builtinTypes.filter((d) => d.group === '').length);
});

const served = { apiGroup: 'coordination.svc.io', servedGroup: 'coordination.k8s.io' };

test('responses are spelled in the group the client asked for; the canonical request is answered as stored', (t) => {
  const lease = { apiVersion: 'coordination.svc.io/v1', kind: 'Lease', metadata: { name: 'l' }, spec: {} };
  t.deepEqual(servedBody(served, lease), { ...lease, apiVersion: 'coordination.k8s.io/v1' });
  t.is(lease.apiVersion, 'coordination.svc.io/v1', 'the stored object is not changed');
  t.is(servedBody({ apiGroup: 'coordination.svc.io' }, lease), lease);
  const list = { apiVersion: 'coordination.svc.io/v1', kind: 'LeaseList', metadata: {}, items: [lease, lease] };
  const out = servedBody(served, list) as typeof list;
  t.is(out.apiVersion, 'coordination.k8s.io/v1');
  t.deepEqual(out.items.map((i) => i.apiVersion), ['coordination.k8s.io/v1', 'coordination.k8s.io/v1']);
  const table = { kind: 'Table', apiVersion: 'meta.k8s.io/v1', rows: [{ cells: ['l'], object: lease }, { cells: ['m'] }] };
  const tout = servedBody(served, table) as { apiVersion: string; rows: Array<{ object?: { apiVersion: string } }> };
  t.is(tout.apiVersion, 'meta.k8s.io/v1');
  t.is(tout.rows[0].object!.apiVersion, 'coordination.k8s.io/v1');
  t.is(tout.rows[1].object, undefined);
  const status = { kind: 'Status', apiVersion: 'v1', status: 'Success', details: { name: 'l', group: 'coordination.svc.io', kind: 'leases' } };
  t.deepEqual(servedBody(served, status), { ...status, details: { ...status.details, group: 'coordination.k8s.io' } });
  // Another group's apiVersion (an object this group embeds) is left alone.
  t.deepEqual(servedBody(served, { apiVersion: 'v1', kind: 'Pod', metadata: {} }), { apiVersion: 'v1', kind: 'Pod', metadata: {} });
  t.is(servedEventObject(served, lease as never).apiVersion, 'coordination.k8s.io/v1');
});

test('managedFields entries name the API version in the group the client asked for, as upstream records the version written', (t) => {
  const entry = (apiVersion: string) => ({ manager: 'm', operation: 'Update', apiVersion, fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } });
  const lease = { apiVersion: 'coordination.svc.io/v1', kind: 'Lease', metadata: { name: 'l', managedFields: [entry('coordination.svc.io/v1')] }, spec: {} };
  const out = servedBody(served, lease) as typeof lease;
  t.deepEqual(out.metadata, { name: 'l', managedFields: [entry('coordination.k8s.io/v1')] });
  t.is(lease.metadata.managedFields[0].apiVersion, 'coordination.svc.io/v1', 'the stored object is not changed');
  t.is(servedEventObject(served, lease as never).metadata.managedFields![0].apiVersion, 'coordination.k8s.io/v1');
});

test('errors name the group the client asked for, in details and message', (t) => {
  const nf = servedError(served, errors.notFound('leases', 'l', 'coordination.svc.io')) as ApiError;
  t.is(nf.message, 'leases.coordination.k8s.io "l" not found');
  t.is(nf.details?.group, 'coordination.k8s.io');
  t.is(nf.code, 404);
  const forbidden = servedError(served, errors.forbidden('leases.coordination.svc.io is forbidden: User "u" cannot list resource "leases" in API group "coordination.svc.io" in the namespace "n"')) as ApiError;
  t.is(forbidden.message, 'leases.coordination.k8s.io is forbidden: User "u" cannot list resource "leases" in API group "coordination.k8s.io" in the namespace "n"');
  const bad = servedError(served, new ApiError('BadRequest', 'the API version in the data (v2) does not match the expected API version (coordination.svc.io/v1)')) as ApiError;
  t.regex(bad.message, /expected API version \(coordination\.k8s\.io\/v1\)$/);
  const other = errors.notFound('pods', 'p');
  t.is(servedError(served, other), other);
  t.is(servedError(undefined, other), other);
  t.is(servedError({ servedGroup: undefined }, other), other);
});
