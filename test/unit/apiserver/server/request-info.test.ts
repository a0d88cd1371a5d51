import test from 'ava';
import { parseRequestInfo, queryBool } from '../../../../apiserver/server/request-info';

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

test('the legacy watch paths are watches of the path after /watch/ (upstream still serves them; ruby kubeclient uses them)', (t) => {
  t.like(parseRequestInfo('GET', '/api/v1/watch/namespaces/ns/pods', q()), { isResourceRequest: true, verb: 'watch', namespace: 'ns', resource: 'pods', name: '' });
  t.like(parseRequestInfo('GET', '/api/v1/watch/pods', q()), { verb: 'watch', namespace: '', resource: 'pods', name: '' });
  t.like(parseRequestInfo('GET', '/api/v1/watch/namespaces/ns/pods/p', q()), { verb: 'watch', namespace: 'ns', resource: 'pods', name: 'p' });
  t.like(parseRequestInfo('GET', '/api/v1/watch/nodes/n1', q()), { verb: 'watch', resource: 'nodes', name: 'n1' });
  t.like(parseRequestInfo('GET', '/api/v1/watch/namespaces/ns', q()), { verb: 'watch', resource: 'namespaces', name: 'ns' });
  t.like(parseRequestInfo('GET', '/apis/apps.svc.io/v1/watch/namespaces/ns/deployments', q()), { verb: 'watch', apiGroup: 'apps.svc.io', namespace: 'ns', resource: 'deployments' });
  // "watch" is the verb whatever the method (the router answers anything but GET with 405).
  t.is(parseRequestInfo('DELETE', '/api/v1/watch/namespaces/ns/pods', q()).verb, 'watch');
  // Not a legacy path: a resource called "watch" (there is none: 404 from the router).
  t.like(parseRequestInfo('GET', '/api/v1/watch', q()), { resource: 'watch', verb: 'list' });
});

test('watch is a boolean as Go spells them: True from the Python client is true; anything else not a boolean is a 400', (t) => {
  for (const v of ['1', 't', 'T', 'TRUE', 'true', 'True', '']) t.is(parseRequestInfo('GET', '/api/v1/pods', q(`watch=${v}`)).verb, 'watch', v);
  for (const v of ['0', 'f', 'F', 'FALSE', 'false', 'False']) t.is(parseRequestInfo('GET', '/api/v1/pods', q(`watch=${v}`)).verb, 'list', v);
  t.is(parseRequestInfo('GET', '/api/v1/namespaces/ns/pods/p', q('watch=True')).verb, 'watch');
  const err = t.throws(() => parseRequestInfo('GET', '/api/v1/pods', q('watch=yes')));
  t.like(err, { reason: 'BadRequest', code: 400 });
  t.regex(err.message, /^watch: invalid boolean "yes"/);
  // Only reads decide between list and watch: a create ignores it.
  t.is(parseRequestInfo('POST', '/api/v1/namespaces/ns/pods', q('watch=yes')).verb, 'create');
});

test('queryBool: absent false, empty true, Go spellings, else a 400 naming the parameter', (t) => {
  t.false(queryBool(q(), 'pretty'));
  t.true(queryBool(q('pretty'), 'pretty'));
  t.true(queryBool(q('orphanDependents=True'), 'orphanDependents'));
  t.false(queryBool(q('orphanDependents=False'), 'orphanDependents'));
  t.throws(() => queryBool(q('follow=ture'), 'follow'), { message: /^follow: invalid boolean "ture": must be one of 1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False$/ });
});
