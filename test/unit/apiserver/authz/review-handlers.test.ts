import test from 'ava';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { request } from 'undici';
import type { UserInfo } from '../../../../apiserver/api/user';
import type { ResourceRequest } from '../../../../apiserver/handlers/context';
import { parseRequestInfo, reviewAlias } from '../../../../apiserver/server/request-info';
import { sendError } from '../../../../apiserver/server/respond';
import { admin, openAuthzFixture, type AuthzFixture } from './fixture';
import { eventually } from './helpers';

/** What stock kubectl 1.32 sent for `kubectl auth can-i get pods -n foo` (captured). */
const KUBECTL_SSAR = 'azhzAAoyChdhdXRob3JpemF0aW9uLms4cy5pby92MRIXU2VsZlN1YmplY3RBY2Nlc3NSZXZpZXcSOAoQCgASABoAIgAqADIAOABCABIaChgKA2ZvbxIDZ2V0GgAiACoEcG9kczIAOgAaCAgAEgAaACAAGgAiAA==';
/** `kubectl auth can-i --list -n foo`. */
const KUBECTL_SSRR = 'azhzAAoxChdhdXRob3JpemF0aW9uLms4cy5pby92MRIWU2VsZlN1YmplY3RSdWxlc1JldmlldxIfChAKABIAGgAiACoAMgA4AEIAEgUKA2ZvbxoEGAAiABoAIgA=';

let f: AuthzFixture;
let server: Server;
let base: string;

test.before(async () => {
  f = await openAuthzFixture();
  await f.ready();
  await f.store.create(f.type('rbac.authorization.svc.io', 'rolebindings'), 'foo', { metadata: { name: 'view' }, roleRef: { kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'User', name: 'viewer' }] }, admin).catch(async () => {
    await f.store.create(f.type('', 'namespaces'), '', { metadata: { name: 'foo' } }, admin);
    await f.store.create(f.type('rbac.authorization.svc.io', 'rolebindings'), 'foo', { metadata: { name: 'view' }, roleRef: { kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'User', name: 'viewer' }] }, admin);
  });
  await eventually(async () => (await f.authz.chain.decide({ user: { username: 'viewer', groups: [] }, info: parseRequestInfo('GET', '/api/v1/namespaces/foo/pods', new URLSearchParams()) })).allowed, 'view aggregated');
  // A minimal router: the identity comes from the x-user header; the review alias and handlers as the API server would call them.
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const info = reviewAlias(parseRequestInfo(req.method ?? 'GET', url.pathname, url.searchParams));
    const user: UserInfo = { username: String(req.headers['x-user'] ?? 'nobody'), groups: String(req.headers['x-groups'] ?? 'system:authenticated').split(',') };
    const type = f.registry.lookup(info.apiGroup, info.apiVersion, info.resource)!;
    const handler = f.authz.reviewHandlers.get(`${type.group}/${type.version}/${type.resource}`)!;
    const r: ResourceRequest = { req, res, info, query: url.searchParams, user, type, store: f.store, cache: f.cache, log: pino({ level: 'silent' }), signal: new AbortController().signal, now: () => new Date() };
    handler(r).catch((err) => sendError(req, res, err));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
test.after.always(async () => {
  server?.close();
  await f?.close();
});

async function post(path: string, body: unknown, who: string, headers: Record<string, string> = {}) {
  const res = await request(`${base}${path}`, {
    method: 'POST',
    body: Buffer.isBuffer(body) ? body : JSON.stringify(body),
    headers: { 'content-type': 'application/json', 'x-user': who, ...headers },
  });
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, any> };
}

// The decoding of these captured bodies is asserted in test/unit/apiserver/codec/kubectl-bodies.test.ts.

test('SelfSubjectAccessReview over kubectl protobuf at the authorization.k8s.io alias answers in that group', async (t) => {
  const body = Buffer.from(KUBECTL_SSAR, 'base64');
  const yes = await post('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', body, 'viewer', { 'content-type': 'application/vnd.kubernetes.protobuf' });
  t.is(yes.status, 201);
  t.is(yes.body.apiVersion, 'authorization.k8s.io/v1');
  t.is(yes.body.kind, 'SelfSubjectAccessReview');
  t.true(yes.body.status.allowed);
  const no = await post('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', body, 'stranger', { 'content-type': 'application/vnd.kubernetes.protobuf' });
  t.is(no.status, 201);
  t.false(no.body.status.allowed);
});

test('SelfSubjectAccessReview JSON in the svc group', async (t) => {
  const r = await post('/apis/authorization.svc.io/v1/selfsubjectaccessreviews', { apiVersion: 'authorization.svc.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { namespace: 'foo', verb: 'list', resource: 'secrets' } } }, 'viewer');
  t.is(r.status, 201);
  t.is(r.body.apiVersion, 'authorization.svc.io/v1');
  t.false(r.body.status.allowed);
  const masters = await post('/apis/authorization.svc.io/v1/selfsubjectaccessreviews', { spec: { nonResourceAttributes: { path: '/anything', verb: 'delete' } } }, 'root', { 'x-groups': 'system:masters' });
  t.true(masters.body.status.allowed);
});

test('SubjectAccessReview for another user, v1 and v1beta1 (group)', async (t) => {
  const v1 = await post('/apis/authorization.svc.io/v1/subjectaccessreviews', { apiVersion: 'authorization.svc.io/v1', kind: 'SubjectAccessReview', spec: { user: 'viewer', groups: ['system:authenticated'], resourceAttributes: { namespace: 'foo', verb: 'get', resource: 'pods', name: 'p' } } }, 'root');
  t.is(v1.status, 201);
  t.true(v1.body.status.allowed);
  t.regex(v1.body.status.reason, /RBAC: allowed by RoleBinding "view"/);
  const beta = await post('/apis/authorization.svc.io/v1beta1/subjectaccessreviews', { apiVersion: 'authorization.svc.io/v1beta1', kind: 'SubjectAccessReview', spec: { user: 'x', group: ['system:masters'], nonResourceAttributes: { path: '/x', verb: 'get' } } }, 'root');
  t.true(beta.body.status.allowed);
  const bad = await post('/apis/authorization.svc.io/v1/subjectaccessreviews', { spec: { resourceAttributes: { verb: 'get' }, nonResourceAttributes: { path: '/x', verb: 'get' } } }, 'root');
  t.is(bad.status, 422);
  t.regex(bad.body.message, /spec.nonResourceAttributes: Invalid value: .*cannot be specified in combination with resourceAttributes/);
  t.regex(bad.body.message, /spec.user: Invalid value: "": at least one of user or group must be specified/);
  const none = await post('/apis/authorization.svc.io/v1/selfsubjectaccessreviews', { spec: {} }, 'root');
  t.regex(none.body.message, /spec.resourceAttributes: Required value: exactly one of nonResourceAttributes or resourceAttributes must be specified/);
  const kind = await post('/apis/authorization.svc.io/v1/subjectaccessreviews', { apiVersion: 'authorization.svc.io/v1', kind: 'Pod', spec: {} }, 'root');
  t.is(kind.status, 400);
});

test('LocalSubjectAccessReview is limited to its namespace', async (t) => {
  const ok = await post('/apis/authorization.svc.io/v1/namespaces/foo/localsubjectaccessreviews', { spec: { user: 'viewer', resourceAttributes: { verb: 'list', resource: 'pods' } } }, 'root');
  t.is(ok.status, 201);
  t.is(ok.body.spec.resourceAttributes.namespace, 'foo');
  t.true(ok.body.status.allowed);
  const other = await post('/apis/authorization.svc.io/v1/namespaces/foo/localsubjectaccessreviews', { spec: { user: 'viewer', resourceAttributes: { namespace: 'bar', verb: 'list', resource: 'pods' } } }, 'root');
  t.is(other.status, 422);
  t.regex(other.body.message, /must match metadata.namespace/);
});

test('SelfSubjectRulesReview lists the rules in a namespace', async (t) => {
  const r = await post('/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', Buffer.from(KUBECTL_SSRR, 'base64'), 'viewer', { 'content-type': 'application/vnd.kubernetes.protobuf' });
  t.is(r.status, 201);
  t.is(r.body.kind, 'SelfSubjectRulesReview');
  const rules = r.body.status.resourceRules as { verbs: string[]; resources: string[] }[];
  t.true(rules.some((x) => x.resources.includes('pods') && x.verbs.includes('list')));
  t.true((r.body.status.nonResourceRules as { nonResourceURLs: string[] }[]).some((x) => x.nonResourceURLs.includes('/apis/*')));
  t.false(r.body.status.incomplete);
  // The Node authorizer cannot enumerate a node's permissions, so its answer is marked incomplete.
  const n = await post('/apis/authorization.svc.io/v1/selfsubjectrulesreviews', { spec: { namespace: 'foo' } }, 'system:node:n1', { 'x-groups': 'system:nodes,system:authenticated' });
  t.true(n.body.status.incomplete);
  t.regex(n.body.status.evaluationError, /node authorizer does not support user rule resolution/);
});

test('other verbs on review resources are refused', async (t) => {
  const res = await request(`${base}/apis/authorization.svc.io/v1/selfsubjectaccessreviews/x`, { method: 'PUT', body: '{}', headers: { 'x-user': 'root' } });
  t.is(res.statusCode, 405);
  await res.body.text();
});
