import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { stringify } from 'yaml';
import { createCA, issue, type KeyPairPem } from '../../../apiserver/pki/certs';
import { call } from '../../helpers/http';
import { startHarness, type Harness } from './harness';

const DAY = 86_400_000;
let dir: string;
let hook: Server;
let proxy: HttpServer;
let proxyUrl: string;
let h: Harness;
let webhookCalls = 0;
let proxyCa: KeyPairPem;

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-h11-whp-'));
  const hookCa = await createCA('hook-ca');
  const hookCert = await issue(hookCa, { commonName: 'hook', ips: ['127.0.0.1'], usage: 'server', validityMs: DAY });
  hook = createServer({ cert: hookCert.certPem, key: hookCert.keyPem }, (req, res) => {
    let text = '';
    req.on('data', (d) => (text += d));
    req.on('end', () => {
      webhookCalls++;
      const review = JSON.parse(text);
      if (review.spec.token === 'hook-hang') return; // never answers
      const ok = review.spec.token === 'hook-good';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'TokenReview', status: ok ? { authenticated: true, user: { username: 'hook-user', uid: 'h1', groups: ['hookers'] } } : { authenticated: false } }));
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', () => r()));
  const hookConfig = join(dir, 'webhook.kubeconfig');
  writeFileSync(hookConfig, stringify({ clusters: [{ name: 'hook', cluster: { server: `https://127.0.0.1:${(hook.address() as AddressInfo).port}/authn`, 'certificate-authority-data': Buffer.from(hookCa.certPem).toString('base64') } }], users: [{ name: 'api', user: {} }], contexts: [{ name: 'c', context: { cluster: 'hook', user: 'api' } }], 'current-context': 'c' }));

  proxyCa = await createCA('front-proxy-ca');
  const proxyCert = await issue(proxyCa, { commonName: 'front-proxy', usage: 'client', validityMs: DAY });
  writeFileSync(join(dir, 'proxy-ca.crt'), proxyCa.certPem);
  h = await startHarness({
    webhook: { configFile: hookConfig, version: 'authentication.svc.io/v1', timeoutMs: 700 },
    requestHeader: { clientCaFile: join(dir, 'proxy-ca.crt'), usernameHeaders: ['X-Remote-User'], groupHeaders: ['X-Remote-Group'], extraHeadersPrefix: ['X-Remote-Extra-'], allowedNames: ['front-proxy'] },
  });
  // A small authenticating proxy: it "logs the user in" from its own header and forwards with its client certificate.
  const upstream = new Agent({ connect: { ca: h.pki.ca.certPem, servername: 'localhost', cert: proxyCert.certPem, key: proxyCert.keyPem } });
  proxy = createHttpServer((req, res) => {
    const login = String(req.headers['x-login'] ?? '');
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      request(h.url + (req.url ?? '/'), {
        method: req.method as 'GET',
        dispatcher: upstream,
        body: body || undefined,
        headers: { 'content-type': 'application/json', 'X-Remote-User': login, 'X-Remote-Group': ['staff', 'oncall'], 'X-Remote-Extra-Acme.io%2fTeam': 'core' },
      }).then(
        async (r) => {
          res.writeHead(r.statusCode, { 'content-type': 'application/json' });
          res.end(await r.body.text());
        },
        (err: Error) => {
          res.writeHead(502);
          res.end(err.message);
        },
      );
    });
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});

test.after.always(async () => {
  await h?.close();
  hook?.closeAllConnections();
  hook?.close();
  proxy?.close();
  rmSync(dir, { recursive: true, force: true });
});

const ssrBody = { apiVersion: 'authentication.svc.io/v1', kind: 'SelfSubjectReview' };

test.serial('webhook token authentication: the webhook names the user; refusals are 401; decisions are cached', async (t) => {
  const r = await call(h.anonymous, 'POST', `${h.url}/apis/authentication.svc.io/v1/selfsubjectreviews`, ssrBody, { authorization: 'Bearer hook-good' });
  t.is(r.status, 201, r.text);
  t.deepEqual(r.body.status.userInfo, { username: 'hook-user', uid: 'h1', groups: ['hookers', 'system:authenticated'] });
  const calls = webhookCalls;
  t.is((await call(h.anonymous, 'GET', `${h.url}/api/v1/namespaces`, undefined, { authorization: 'Bearer hook-good' })).status, 200);
  t.is(webhookCalls, calls); // cached
  t.is((await call(h.anonymous, 'GET', `${h.url}/api/v1/namespaces`, undefined, { authorization: 'Bearer hook-bad' })).status, 401);
  const rv = await call(h.admin, 'POST', `${h.url}/apis/authentication.svc.io/v1/tokenreviews`, { apiVersion: 'authentication.svc.io/v1', kind: 'TokenReview', spec: { token: 'hook-good' } });
  t.true(rv.body.status.authenticated);
  t.is(rv.body.status.user.username, 'hook-user');
});

test.serial('a hanging webhook answers 401 within its timeout', async (t) => {
  const r = await call(h.anonymous, 'GET', `${h.url}/api/v1/namespaces`, undefined, { authorization: 'Bearer hook-hang' });
  t.is(r.status, 401);
  t.true(h.lines.some((l) => l.includes('did not answer within 700 ms')));
});

test.serial('the authenticating proxy: users come from its headers, extra keys percent-decoded', async (t) => {
  const res = await request(`${proxyUrl}/apis/authentication.svc.io/v1/selfsubjectreviews`, { method: 'POST', body: JSON.stringify(ssrBody), headers: { 'x-login': 'dana' } });
  const body = JSON.parse(await res.body.text());
  t.is(res.statusCode, 201, JSON.stringify(body));
  t.deepEqual(body.status.userInfo, { username: 'dana', groups: ['staff', 'oncall', 'system:authenticated'], extra: { 'acme.io/team': ['core'] } });
  // Headers from a client without the proxy certificate are not believed.
  const forged = await call(h.anonymous, 'POST', `${h.url}/apis/authentication.svc.io/v1/selfsubjectreviews`, ssrBody, { 'X-Remote-User': 'root' });
  t.is(forged.status, 401);
  // A certificate from the proxy CA with another CN is refused.
  const other = await issue(proxyCa, { commonName: 'not-the-proxy', usage: 'client', validityMs: DAY });
  const agent = new Agent({ connect: { ca: h.pki.ca.certPem, servername: 'localhost', cert: other.certPem, key: other.keyPem } });
  t.teardown(() => agent.close());
  t.is((await call(agent, 'POST', `${h.url}/apis/authentication.svc.io/v1/selfsubjectreviews`, ssrBody, { 'X-Remote-User': 'root' })).status, 401);
});
