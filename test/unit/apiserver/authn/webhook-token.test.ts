import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import pino from 'pino';
import { stringify } from 'yaml';
import { ApiError } from '../../../../apiserver/api/errors';
import { loadWebhookClientConfig, parseWebhookClientConfig, WebhookConfigError } from '../../../../apiserver/authn/webhook-client-config';
import { WebhookTokenAuthenticator } from '../../../../apiserver/authn/webhook-token';
import { createCA, issue, type KeyPairPem } from '../../../../apiserver/pki/certs';

const log = pino({ level: 'silent' });
const API = ['https://svc.default.svc'];
const DAY = 86_400_000;

interface Hook {
  url: string;
  ca: KeyPairPem;
  client: KeyPairPem;
  calls: Array<{ body: any; clientCn: string }>;
  answer: (body: any) => unknown;
  server: Server;
}

let pki: { ca: KeyPairPem; serving: KeyPairPem; client: KeyPairPem } | undefined;
async function certs() {
  if (!pki) {
    const ca = await createCA('webhook-ca');
    pki = {
      ca,
      serving: await issue(ca, { commonName: 'webhook', dnsNames: ['localhost'], ips: ['127.0.0.1'], usage: 'server', validityMs: DAY }),
      client: await issue(ca, { commonName: 'svc-apiserver', usage: 'client', validityMs: DAY }),
    };
  }
  return pki;
}

/** A local HTTPS token webhook that wants the API server's client certificate. */
async function startHook(t: { teardown(f: () => void): void }, answer: (body: any) => unknown): Promise<Hook> {
  const p = await certs();
  const hook = { calls: [], answer } as unknown as Hook;
  const server = createServer({ cert: p.serving.certPem, key: p.serving.keyPem, ca: p.ca.certPem, requestCert: true, rejectUnauthorized: true }, (req, res) => {
    let text = '';
    req.on('data', (d) => (text += d));
    req.on('end', () => {
      const body = JSON.parse(text);
      hook.calls.push({ body, clientCn: (req.socket as TLSSocket).getPeerCertificate().subject.CN as string });
      const out = hook.answer(body);
      if (out === 'hang') return; // never answers
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(typeof out === 'string' ? out : JSON.stringify(out));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return Object.assign(hook, { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/authenticate`, ca: p.ca, client: p.client, server });
}

function authn(hook: Hook, opts: { version?: 'authentication.svc.io/v1' | 'authentication.svc.io/v1beta1'; timeoutMs?: number; now?: () => number } = {}) {
  return new WebhookTokenAuthenticator({
    client: { server: hook.url, caPem: hook.ca.certPem, certPem: hook.client.certPem, keyPem: hook.client.keyPem },
    ...(opts.version ? { version: opts.version } : {}),
    ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
    apiAudiences: API,
    ...(opts.now ? { now: opts.now } : {}),
    log,
  });
}

const ok = (body: any, status: Record<string, unknown>) => ({ apiVersion: body.apiVersion, kind: 'TokenReview', status });

async function is401(t: { true(v: boolean, m?: string): void }, p: Promise<unknown>, why: RegExp): Promise<void> {
  try {
    await p;
    t.true(false, 'expected 401');
  } catch (err) {
    t.true(err instanceof ApiError && err.code === 401, String(err));
    t.true(why.test((err as Error).message), (err as Error).message);
  }
}

test('a TokenReview goes out with the token and audiences; the answer names the user; decisions are cached for the TTL', async (t) => {
  const hook = await startHook(t, (b) =>
    b.spec.token === 'good' ? ok(b, { authenticated: true, user: { username: 'jane', uid: 'u1', groups: ['dev'], extra: { 'acme.io/x': ['1'] } } }) : ok(b, { authenticated: false }),
  );
  let now = 1_000_000;
  const a = authn(hook, { now: () => now });
  t.teardown(() => a.close());
  const r = await a.authenticateToken('good', API);
  t.deepEqual(r, { user: { username: 'jane', uid: 'u1', groups: ['dev'], extra: { 'acme.io/x': ['1'] } }, audiences: API });
  t.is(hook.calls.length, 1);
  t.is(hook.calls[0].body.apiVersion, 'authentication.svc.io/v1beta1'); // the default version (5.4)
  t.deepEqual(hook.calls[0].body.spec, { token: 'good', audiences: API });
  t.is(hook.calls[0].clientCn, 'svc-apiserver');
  t.deepEqual(await a.authenticateToken('good', API), r);
  t.is(await a.authenticateToken('bad', API), null);
  t.is(await a.authenticateToken('bad', API), null);
  t.is(hook.calls.length, 2); // one call each, the rest from the cache
  now += 119_000;
  await a.authenticateToken('good', API);
  t.is(hook.calls.length, 2);
  now += 2_000; // past the 2 minute default TTL
  await a.authenticateToken('good', API);
  t.is(hook.calls.length, 3);
});

test('v1: the answer must use the same apiVersion; status.error is a 401 and is not cached', async (t) => {
  let mode = 'mismatch';
  const hook = await startHook(t, (b) => {
    if (mode === 'mismatch') return { apiVersion: 'authentication.svc.io/v1beta1', kind: 'TokenReview', status: { authenticated: true, user: { username: 'x' } } };
    if (mode === 'error') return ok(b, { authenticated: false, error: 'token revoked upstream' });
    if (mode === 'garbage') return 'not json';
    return ok(b, { authenticated: true, user: {} });
  });
  const a = authn(hook, { version: 'authentication.svc.io/v1' });
  t.teardown(() => a.close());
  await is401(t, a.authenticateToken('t', API), /apiVersion/);
  mode = 'error';
  await is401(t, a.authenticateToken('t', API), /token revoked upstream/);
  await is401(t, a.authenticateToken('t', API), /token revoked upstream/);
  t.is(hook.calls.length, 3);
  mode = 'garbage';
  await is401(t, a.authenticateToken('t', API), /not JSON/);
  mode = 'nouser';
  await is401(t, a.authenticateToken('t', API), /no user/);
});

test('audiences: the answer narrows them; none means the API server only', async (t) => {
  const hook = await startHook(t, (b) => ok(b, { authenticated: true, user: { username: 'u' }, ...(b.spec.token === 'scoped' ? { audiences: ['vault'] } : {}) }));
  const a = authn(hook);
  t.teardown(() => a.close());
  t.deepEqual((await a.authenticateToken('scoped', ['vault', 'x']))!.audiences, ['vault']);
  t.is(await a.authenticateToken('scoped', API), null);
  t.deepEqual((await a.authenticateToken('plain', API))!.audiences, API);
  t.is(await a.authenticateToken('plain', ['vault']), null);
});

test('a hanging webhook is a 401 after the timeout, not a stuck request', async (t) => {
  const hook = await startHook(t, () => 'hang');
  const a = authn(hook, { timeoutMs: 300 });
  t.teardown(() => a.close());
  await is401(t, a.authenticateToken('t', API), /did not answer within 300 ms/);
});

test('a webhook that is down is a 401', async (t) => {
  const hook = await startHook(t, () => ({}));
  const a = new WebhookTokenAuthenticator({ client: { server: 'https://127.0.0.1:1/x', caPem: hook.ca.certPem }, apiAudiences: API, timeoutMs: 2000, log });
  t.teardown(() => a.close());
  await is401(t, a.authenticateToken('t', API), /ECONNREFUSED|connect/);
});

test('the kubeconfig-format file: cluster server and CA, user certificate, relative paths, errors name the field', async (t) => {
  const p = await certs();
  const dir = mkdtempSync(join(tmpdir(), 'svc-h11-wh-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'ca.crt'), p.ca.certPem);
  const file = join(dir, 'webhook.yaml');
  writeFileSync(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'hook', cluster: { server: 'https://hook.example:8443/authn', 'certificate-authority': 'ca.crt' } }],
      users: [{ name: 'api', user: { 'client-certificate-data': Buffer.from(p.client.certPem).toString('base64'), 'client-key-data': Buffer.from(p.client.keyPem).toString('base64') } }],
      contexts: [{ name: 'c', context: { cluster: 'hook', user: 'api' } }],
      'current-context': 'c',
    }),
  );
  const c = loadWebhookClientConfig(file);
  t.is(c.server, 'https://hook.example:8443/authn');
  t.is(c.caPem, p.ca.certPem);
  t.is(c.certPem, p.client.certPem);
  t.throws(() => parseWebhookClientConfig('clusters: []\n', 'w.yaml'), { instanceOf: WebhookConfigError, message: /w\.yaml: clusters: at least one cluster/ });
  t.throws(() => parseWebhookClientConfig('clusters:\n- name: a\n  cluster: {}\n', 'w.yaml'), { message: /clusters\[a\]\.cluster\.server: Required value/ });
  t.throws(() => parseWebhookClientConfig('clusters:\n- name: a\n  cluster: {server: "https://x", certificate-authority: nope.crt}\n', join(dir, 'w.yaml')), { message: /certificate-authority: cannot read .*nope\.crt: ENOENT/ });
  t.throws(() => parseWebhookClientConfig('clusters:\n- name: a\n  cluster: {server: "https://x"}\nusers:\n- name: u\n  user: {client-certificate: c.crt}\n', join(dir, 'w.yaml')), { message: /client-certificate: cannot read/ });
});
