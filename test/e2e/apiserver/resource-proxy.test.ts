/**
 * pods/proxy and services/proxy through a real svc-apiserver (issue 21, item 3): a backend HTTP
 * server stands in for the pod, bound to a non-loopback address of this machine (the proxy
 * refuses loopback targets, as upstream). Checks the path suffix and query, methods and bodies,
 * that the caller's credentials do not reach the target, RBAC on the proxy sub-resource, upstream's
 * 503s for services, the request size bound, and a WebSocket through pods/proxy. Bounded waits.
 */
import test from 'ava';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import WebSocket, { WebSocketServer } from 'ws';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { call } from '../../helpers/http';
import { eventually } from '../agent/agent-process';

let s: RunningApiServer;
let backend: Server;
let port = 0;
const seen: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: string }> = [];
const NS = 'default';
/** A non-loopback IPv4 address of this machine (the proxy refuses loopback, as upstream). */
const HOST = Object.values(networkInterfaces())
  .flat()
  .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

test.before(async () => {
  if (!HOST) throw new Error('this test needs a non-loopback IPv4 address on the machine');
  s = await startApiServer();
  backend = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      res.writeHead(req.url?.startsWith('/teapot') ? 418 : 200, { 'content-type': 'text/plain', 'x-backend': 'yes' });
      res.end(`${req.method} ${req.url} ${body}`);
    });
  });
  const wss = new WebSocketServer({ server: backend });
  wss.on('connection', (ws) => ws.on('message', (d, binary) => ws.send(d, { binary })));
  await new Promise<void>((r) => backend.listen(0, HOST, r));
  port = (backend.address() as { port: number }).port;
  const post = (path: string, body: unknown) => call(s.admin, 'POST', `${s.url}${path}`, body);
  const p = await post(`/api/v1/namespaces/${NS}/pods`, { metadata: { name: 'web' }, spec: { nodeName: 'n1', containers: [{ name: 'app', image: 'busybox', ports: [{ containerPort: port }] }] } });
  if (p.status !== 201) throw new Error(p.text);
  p.body.status = { phase: 'Running', podIP: HOST, podIPs: [{ ip: HOST }] };
  const st = await call(s.admin, 'PUT', `${s.url}/api/v1/namespaces/${NS}/pods/web/status`, p.body);
  if (st.status !== 200) throw new Error(st.text);
  for (const name of ['api', 'empty']) {
    await post(`/api/v1/namespaces/${NS}/services`, { metadata: { name }, spec: { ports: [{ name: 'http', port: 80, targetPort: port }] } });
  }
  await post(`/api/v1/namespaces/${NS}/endpoints`, { metadata: { name: 'api' }, subsets: [{ addresses: [{ ip: HOST }], ports: [{ name: 'http', port }] }] });
});
test.after.always(async () => {
  backend?.closeAllConnections();
  backend?.close();
  await s?.stop();
});

const url = (path: string) => `${s.url}/api/v1/namespaces/${NS}${path}`;

test.serial('pods/proxy: path suffix, query, method and body reach the pod; its status and headers come back', async (t) => {
  let r = await call(s.admin, 'GET', url(`/pods/web:${port}/proxy/some/path%2Fx?a=1&b=two`));
  t.is(r.status, 200);
  t.is(r.text, 'GET /some/path%2Fx?a=1&b=two ');
  t.is(r.headers['x-backend'], 'yes');
  // No port: the first declared container port.
  r = await call(s.admin, 'POST', url('/pods/web/proxy/submit'), 'payload', { 'content-type': 'text/plain' });
  t.is(r.text, 'POST /submit payload');
  r = await call(s.admin, 'PUT', url(`/pods/http:web:${port}/proxy/teapot`), 'x', { 'content-type': 'text/plain' });
  t.is(r.status, 418);
  r = await call(s.admin, 'GET', url('/pods/web:http/proxy/'));
  t.is(r.status, 400);
  t.regex(r.body.message, /invalid port "http" for pod web/);
  r = await call(s.admin, 'GET', url('/pods/ftp:web:21/proxy/'));
  t.is(r.status, 400);
  t.is(r.body.message, 'invalid pod request "ftp:web:21"');
});

test.serial('services/proxy: a ready endpoint for the service port; 503 as upstream without one', async (t) => {
  let r = await call(s.admin, 'GET', url('/services/api:http/proxy/healthz?x=y'));
  t.is(r.status, 200);
  t.is(r.text, 'GET /healthz?x=y ');
  r = await call(s.admin, 'GET', url('/services/api:80/proxy/'));
  t.is(r.text, 'GET / ');
  r = await call(s.admin, 'GET', url('/services/api:81/proxy/'));
  t.is(r.status, 503);
  t.is(r.body.message, 'no service port 81 found for service "api"');
  r = await call(s.admin, 'GET', url('/services/empty:http/proxy/'));
  t.is(r.status, 503);
  t.is(r.body.message, 'no endpoints available for service "empty"');
  r = await call(s.admin, 'GET', url('/services/missing/proxy/'));
  t.is(r.status, 404);
});

test.serial('a declared body over 16 MiB is refused with 413 before reaching the pod', async (t) => {
  const before = seen.length;
  const r = await call(s.admin, 'POST', url('/pods/web/proxy/big'), 'x'.repeat((16 << 20) + 1), { 'content-type': 'text/plain' });
  t.is(r.status, 413);
  t.is(r.body.reason, 'RequestEntityTooLarge');
  t.is(seen.length, before);
});

test.serial('a WebSocket through pods/proxy is echoed byte for byte', async (t) => {
  const ws = new WebSocket(`wss://127.0.0.1:${s.port}/api/v1/namespaces/${NS}/pods/web:${port}/proxy/ws`, {
    ca: s.caPem,
    cert: readFileSync(join(s.dataDir, 'pki', 'admin.crt')),
    key: readFileSync(join(s.dataDir, 'pki', 'admin.key')),
    servername: 'localhost',
  } as WebSocket.ClientOptions & { servername: string });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const got = new Promise<Buffer>((r) => ws.once('message', (d) => r(d as Buffer)));
  const data = Buffer.from([0, 1, 2, 255, 254]);
  ws.send(data);
  t.deepEqual(await got, data);
  ws.close();
});

test.serial("RBAC on pods/proxy and services/proxy; the caller's token never reaches the pod", async (t) => {
  const post = (path: string, body: unknown) => call(s.admin, 'POST', `${s.url}${path}`, body);
  for (const n of ['proxier', 'nobody']) await post(`/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: n } });
  await post(`/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, { metadata: { name: 'proxy' }, rules: [{ apiGroups: [''], resources: ['pods/proxy', 'services/proxy'], verbs: ['get'] }] });
  await post(`/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, { metadata: { name: 'proxier' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'proxy' }, subjects: [{ kind: 'ServiceAccount', name: 'proxier', namespace: NS }] });
  const token = async (sa: string) => (await post(`/api/v1/namespaces/${NS}/serviceaccounts/${sa}/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} })).body.status.token as string;
  const as = (tok: string, method: 'GET' | 'POST', path: string) => call(s.anonymous, method, url(path), method === 'POST' ? 'x' : undefined, { authorization: `Bearer ${tok}`, 'content-type': 'text/plain' });
  const nobody = await token('nobody');
  const before = seen.length;
  let r = await as(nobody, 'GET', '/pods/web/proxy/secret');
  t.is(r.status, 403);
  t.regex(r.body.message, /cannot get resource "pods\/proxy"/);
  t.is(seen.length, before);
  const proxier = await token('proxier');
  r = await eventually('proxier allowed', async () => {
    const got = await as(proxier, 'GET', '/services/api:http/proxy/mine');
    return got.status === 200 ? got : undefined;
  }, 20_000, 200);
  t.is(r.text, 'GET /mine ');
  t.is(seen[seen.length - 1].headers.authorization, undefined);
  // get does not allow a POST (create).
  r = await as(proxier, 'POST', '/pods/web/proxy/mine');
  t.is(r.status, 403);
  t.regex(r.body.message, /cannot create resource "pods\/proxy"/);
});
