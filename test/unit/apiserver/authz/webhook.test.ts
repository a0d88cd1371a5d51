import test from 'ava';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { compileCondition } from '../../../../apiserver/authz/cel-conditions';
import { WebhookAuthorizer, type WebhookOptions } from '../../../../apiserver/authz/webhook';
import { loadWebhookKubeconfig } from '../../../../apiserver/authz/webhook-kubeconfig';
import { nonRes, res, user } from './helpers';

interface Seen {
  body: Record<string, unknown>;
}
let server: Server;
let url: string;
const seen: Seen[] = [];
let hang = false;

test.before(async () => {
  server = createServer((req, resp) => {
    let b = '';
    req.on('data', (d) => (b += d));
    req.on('end', () => {
      const body = JSON.parse(b) as Record<string, unknown>;
      seen.push({ body });
      if (hang) return; // never answers
      const spec = body.spec as { user: string };
      const answer = (status: unknown, code = 200) => {
        resp.writeHead(code, { 'content-type': 'application/json' });
        resp.end(typeof status === 'string' ? status : JSON.stringify({ apiVersion: body.apiVersion, kind: 'SubjectAccessReview', status }));
      };
      if (spec.user === 'allowed') answer({ allowed: true, reason: 'hook says yes' });
      else if (spec.user === 'denied') answer({ allowed: false, denied: true, reason: 'hook says no' });
      else if (spec.user === 'garbage') answer('<html>');
      else if (spec.user === 'error') answer({}, 500);
      else answer({ allowed: false, reason: 'no idea' });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/authorize`;
});
test.after.always(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

function hook(o: Partial<WebhookOptions> = {}, clock = { ms: 0 }): WebhookAuthorizer {
  return new WebhookAuthorizer({
    name: 'test-hook',
    endpoint: { url, insecureSkipTlsVerify: false },
    version: 'v1',
    timeoutMs: 2000,
    authorizedTtlMs: 300_000,
    unauthorizedTtlMs: 30_000,
    cacheAuthorized: true,
    cacheUnauthorized: true,
    failurePolicy: 'NoOpinion',
    matchConditions: [],
    now: () => clock.ms,
    log: pino({ level: 'silent' }),
    ...o,
  });
}

test.serial('allow, hard deny and no opinion', async (t) => {
  const h = hook();
  t.deepEqual(await h.authorize({ user: user('allowed'), info: res('get', 'pods', { namespace: 'a', name: 'p' }) }), { decision: 'allow', reason: 'hook says yes' });
  t.deepEqual(await h.authorize({ user: user('denied'), info: res('get', 'pods', { namespace: 'a', name: 'p' }) }), { decision: 'deny', reason: 'hook says no' });
  t.deepEqual(await h.authorize({ user: user('someone'), info: res('get', 'pods', { namespace: 'a', name: 'p' }) }), { decision: 'no-opinion', reason: 'no idea' });
  await h.close();
});

test.serial('the request is a SubjectAccessReview with resource or non-resource attributes', async (t) => {
  seen.length = 0;
  const h = hook();
  await h.authorize({ user: { username: 'allowed', uid: 'u1', groups: ['g1'], extra: { scopes: ['a'] } }, info: res('list', 'pods', { namespace: 'ns' }), fieldSelector: [{ key: 'spec.nodeName', operator: 'In', values: ['n1'] }] } as never);
  await h.authorize({ user: user('allowed'), info: nonRes('get', '/metrics') });
  t.deepEqual(seen[0].body, {
    apiVersion: 'authorization.svc.io/v1',
    kind: 'SubjectAccessReview',
    spec: {
      resourceAttributes: { namespace: 'ns', verb: 'list', group: '', version: 'v1', resource: 'pods', subresource: '', name: '', fieldSelector: { requirements: [{ key: 'spec.nodeName', operator: 'In', values: ['n1'] }] } },
      user: 'allowed',
      groups: ['g1'],
      extra: { scopes: ['a'] },
      uid: 'u1',
    },
  });
  t.deepEqual((seen[1].body.spec as Record<string, unknown>).nonResourceAttributes, { path: '/metrics', verb: 'get' });
  await h.close();
});

test.serial('v1beta1 sends groups as `group`', async (t) => {
  seen.length = 0;
  const h = hook({ version: 'v1beta1' });
  await h.authorize({ user: user('allowed', 'team'), info: nonRes('get', '/x') });
  const spec = seen[0].body.spec as Record<string, unknown>;
  t.is(seen[0].body.apiVersion, 'authorization.svc.io/v1beta1');
  t.deepEqual(spec.group, ['team', 'system:authenticated']);
  t.is(spec.groups, undefined);
  await h.close();
});

test.serial('decisions are cached for their TTLs', async (t) => {
  seen.length = 0;
  const clock = { ms: 0 };
  const h = hook({}, clock);
  const a = { user: user('allowed'), info: res('get', 'pods', { namespace: 'a', name: 'p' }) };
  const n = { user: user('nobody'), info: res('get', 'pods', { namespace: 'a', name: 'p' }) };
  await h.authorize(a);
  await h.authorize(n);
  await h.authorize(a);
  await h.authorize(n);
  t.is(seen.length, 2);
  clock.ms = 31_000; // unauthorized TTL (30s) passed, authorized (5m) not
  await h.authorize(a);
  await h.authorize(n);
  t.is(seen.length, 3);
  clock.ms = 301_000;
  await h.authorize(a);
  t.is(seen.length, 4);
  const noCache = hook({ cacheAuthorized: false }, clock);
  await noCache.authorize(a);
  await noCache.authorize(a);
  t.is(seen.length, 6);
  await h.close();
  await noCache.close();
});

test.serial('failures follow failurePolicy: garbage, HTTP errors, and a hanging webhook within its timeout', async (t) => {
  const open = hook();
  const closed = hook({ failurePolicy: 'Deny', timeoutMs: 300 });
  const g = { user: user('garbage'), info: nonRes('get', '/x') };
  t.is((await open.authorize(g)).decision, 'no-opinion');
  t.is((await closed.authorize(g)).decision, 'deny');
  t.is((await closed.authorize({ user: user('error'), info: nonRes('get', '/x') })).decision, 'deny');
  hang = true;
  try {
    const d = await closed.authorize({ user: user('slow'), info: nonRes('get', '/slow') });
    t.is(d.decision, 'deny');
    t.regex(d.reason ?? '', /timed out/);
    const o = hook({ timeoutMs: 300 });
    t.is((await o.authorize({ user: user('slow'), info: nonRes('get', '/slow2') })).decision, 'no-opinion');
    await o.close();
  } finally {
    hang = false;
  }
  await open.close();
  await closed.close();
});

test.serial('matchConditions: false skips the webhook, errors follow failurePolicy', async (t) => {
  seen.length = 0;
  const onlyTeam = compileCondition("request.groups.exists(g, g == 'team')");
  const h = hook({ matchConditions: [onlyTeam] });
  t.is((await h.authorize({ user: user('allowed'), info: nonRes('get', '/x') })).decision, 'no-opinion');
  t.is(seen.length, 0);
  t.is((await h.authorize({ user: user('allowed', 'team'), info: nonRes('get', '/x') })).decision, 'allow');
  t.is(seen.length, 1);
  const erring = compileCondition("request.resourceAttributes.namespace == 'x'");
  const deny = hook({ matchConditions: [erring], failurePolicy: 'Deny' });
  t.is((await deny.authorize({ user: user('allowed'), info: nonRes('get', '/x') })).decision, 'deny');
  const skip = hook({ matchConditions: [erring] });
  t.is((await skip.authorize({ user: user('allowed'), info: nonRes('get', '/x') })).decision, 'no-opinion');
  t.is(seen.length, 1);
  for (const z of [h, deny, skip]) await z.close();
});

test('webhook kubeconfig: current context, data and file material, errors name the field', (t) => {
  const files: Record<string, string> = {
    '/etc/hook/kc': `apiVersion: v1
kind: Config
clusters:
- name: a
  cluster: {server: "https://a.example:8443/authz"}
- name: b
  cluster: {server: "https://b.example/authz", certificate-authority-data: ${Buffer.from('CA-PEM').toString('base64')}}
users:
- name: apiserver
  user: {client-certificate: cert.pem, client-key: /abs/key.pem}
contexts:
- name: c
  context: {cluster: b, user: apiserver}
current-context: c
`,
    '/etc/hook/cert.pem': 'CERT',
    '/abs/key.pem': 'KEY',
  };
  const read = (p: string) => {
    if (!(p in files)) throw new Error(`ENOENT ${p}`);
    return files[p];
  };
  t.deepEqual(loadWebhookKubeconfig('/etc/hook/kc', read), { url: 'https://b.example/authz', caPem: 'CA-PEM', certPem: 'CERT', keyPem: 'KEY', token: undefined, insecureSkipTlsVerify: false });
  files['/x'] = 'clusters: [{name: a, cluster: {server: "https://h/x?y=1"}}]';
  t.throws(() => loadWebhookKubeconfig('/x', read), { message: /must not have query parameters/ });
  files['/y'] = 'clusters: [{name: a, cluster: {}}]';
  t.throws(() => loadWebhookKubeconfig('/y', read), { message: /server: Required value/ });
});
