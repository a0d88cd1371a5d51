import test from 'ava';
import { parseRequestInfo } from '../../../../apiserver/server/request-info';

const q = (s = '') => new URLSearchParams(s);

test('verbs from methods and paths (A.1)', (t) => {
  t.is(parseRequestInfo('GET', '/api/v1/namespaces/ns/pods', q()).verb, 'list');
  t.is(parseRequestInfo('GET', '/api/v1/namespaces/ns/pods', q('watch=1')).verb, 'watch');
  t.is(parseRequestInfo('GET', '/api/v1/namespaces/ns/pods/p', q()).verb, 'get');
  t.is(parseRequestInfo('POST', '/api/v1/namespaces/ns/pods', q()).verb, 'create');
  t.is(parseRequestInfo('PUT', '/api/v1/namespaces/ns/pods/p', q()).verb, 'update');
  t.is(parseRequestInfo('PATCH', '/api/v1/namespaces/ns/pods/p', q()).verb, 'patch');
  t.is(parseRequestInfo('DELETE', '/api/v1/namespaces/ns/pods/p', q()).verb, 'delete');
  t.is(parseRequestInfo('DELETE', '/api/v1/namespaces/ns/pods', q()).verb, 'deletecollection');
  t.is(parseRequestInfo('GET', '/healthz', q()).verb, 'get');
  t.false(parseRequestInfo('GET', '/apis/coordination.svc.io/v1', q()).isResourceRequest);
});

test('namespaces, groups and sub-resources', (t) => {
  const i = parseRequestInfo('PUT', '/apis/coordination.svc.io/v1/namespaces/svc-node-lease/leases/n1', q());
  t.like(i, { apiGroup: 'coordination.svc.io', apiVersion: 'v1', namespace: 'svc-node-lease', resource: 'leases', name: 'n1', subresource: '' });
  const s = parseRequestInfo('PATCH', '/api/v1/nodes/n1/status', q());
  t.like(s, { resource: 'nodes', name: 'n1', subresource: 'status', namespace: '' });
  const ns = parseRequestInfo('GET', '/api/v1/namespaces/foo', q());
  t.like(ns, { resource: 'namespaces', name: 'foo', namespace: 'foo' });
  const nsStatus = parseRequestInfo('PUT', '/api/v1/namespaces/foo/status', q());
  t.like(nsStatus, { resource: 'namespaces', name: 'foo', subresource: 'status' });
  const all = parseRequestInfo('GET', '/api/v1/pods', q());
  t.like(all, { resource: 'pods', namespace: '', verb: 'list' });
});

test('proxy sub-resources are "proxy" whatever path follows, with the verb from the method', (t) => {
  t.like(parseRequestInfo('GET', '/api/v1/nodes/n1/proxy/healthz', new URLSearchParams()), { resource: 'nodes', name: 'n1', subresource: 'proxy', verb: 'get' });
  t.like(parseRequestInfo('POST', '/api/v1/nodes/n1/proxy/checkpoint/default/web/app', new URLSearchParams()), { resource: 'nodes', name: 'n1', subresource: 'proxy', verb: 'create' });
  t.like(parseRequestInfo('GET', '/api/v1/nodes/n1/proxy', new URLSearchParams()), { subresource: 'proxy', verb: 'get' });
});
