import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import test from 'ava';
import type { Authenticator, AuthnResult } from '../../../../agent/server/authenticator';
import type { Authorizer } from '../../../../agent/server/authorizer';
import { NodeServer } from '../../../../agent/server/node-server';
import type { NodeRequestAttributes } from '../../../../agent/server/request-attributes';
import type { Log } from '../../../../agent/platform/logger';
import { extendedConnect, fakeAgent, h2Client, readToEnd, responseOf, testPki } from '../../../helpers/h2-tunnel';
import { readUntil } from '../../../helpers/stream-client';

const quiet: Log = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** Authenticates "Bearer <name>" as user <name>; anything else fails. */
const byHeader: Authenticator = {
  authenticate(req: IncomingMessage): Promise<AuthnResult> {
    const m = /^Bearer (\w+)$/.exec(req.headers.authorization ?? '');
    return Promise.resolve(m ? { ok: true, user: { username: m[1], groups: [] } } : { ok: false, reason: 'no credentials' });
  },
};

async function serve(authorizer: Authorizer, seen: NodeRequestAttributes[] = []): Promise<{ url: string; server: Server }> {
  const ns = new NodeServer({
    nodeName: 'node-1',
    authenticator: byHeader,
    authorizer: {
      async authorize(u, a) {
        seen.push(a);
        return authorizer.authorize(u, a);
      },
    },
    log: quiet,
    routes: [
      { prefix: '/checkpoint/', handler: (_req, res) => (res.writeHead(200).end('checkpointed'), Promise.resolve()) },
      { prefix: '/boom/', handler: () => Promise.reject(new Error('kaput')) },
    ],
  });
  const server = createServer((req, res) => void ns.handle(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const allowBob: Authorizer = { authorize: (u) => Promise.resolve({ allowed: u.username === 'bob', reason: '' }) };

test('no credentials is 401 with a Status body; nothing is authorized or routed', async (t) => {
  const seen: NodeRequestAttributes[] = [];
  const { url, server } = await serve(allowBob, seen);
  const res = await fetch(`${url}/checkpoint/a/b/c`, { method: 'POST' });
  t.is(res.status, 401);
  t.like(await res.json(), { kind: 'Status', code: 401, reason: 'Unauthorized' });
  t.is(seen.length, 0);
  server.close();
});

test('a denied user is 403 naming verb and sub-resource; an allowed one reaches the handler', async (t) => {
  const seen: NodeRequestAttributes[] = [];
  const { url, server } = await serve(allowBob, seen);
  const denied = await fetch(`${url}/checkpoint/a/b/c`, { method: 'POST', headers: { authorization: 'Bearer eve' } });
  t.is(denied.status, 403);
  const body = (await denied.json()) as { message: string; reason: string };
  t.is(body.reason, 'Forbidden');
  t.is(body.message, 'Forbidden (user=eve, verb=create, resource=nodes, subresource=checkpoint)');
  const ok = await fetch(`${url}/checkpoint/a/b/c`, { method: 'POST', headers: { authorization: 'Bearer bob' } });
  t.is(ok.status, 200);
  t.is(await ok.text(), 'checkpointed');
  t.deepEqual(seen[1], { verb: 'create', subresource: 'checkpoint', name: 'node-1', path: '/checkpoint/a/b/c' });
  server.close();
});

test('unknown paths are 404 after authorization (as nodes/proxy); handler failures are 500; authorizer errors are 500', async (t) => {
  const seen: NodeRequestAttributes[] = [];
  const { url, server } = await serve(allowBob, seen);
  const nf = await fetch(`${url}/attach/a/b/c`, { headers: { authorization: 'Bearer bob' } });
  t.is(nf.status, 404);
  t.is(seen[0].subresource, 'proxy');
  const boom = await fetch(`${url}/boom/x`, { headers: { authorization: 'Bearer bob' } });
  t.is(boom.status, 500);
  t.regex(((await boom.json()) as { message: string }).message, /kaput/);
  server.close();
  const broken = await serve({ authorize: () => Promise.reject(new Error('api down')) });
  const r = await fetch(`${broken.url}/checkpoint/a/b/c`, { method: 'POST', headers: { authorization: 'Bearer bob' } });
  t.is(r.status, 500);
  broken.server.close();
});

test('a denied fine-grained sub-resource (/healthz) is retried as nodes/proxy, as upstream; /checkpoint has no fallback', async (t) => {
  const seen: NodeRequestAttributes[] = [];
  const proxyOnly: Authorizer = { authorize: (u, a) => Promise.resolve({ allowed: u.username === 'bob' && a.subresource === 'proxy', reason: '' }) };
  const ns = new NodeServer({
    nodeName: 'node-1',
    authenticator: byHeader,
    authorizer: { authorize: (u, a) => (seen.push(a), proxyOnly.authorize(u, a)) },
    log: quiet,
    routes: [
      { prefix: '/healthz', handler: (_req, res) => (res.writeHead(200).end('ok'), Promise.resolve()) },
      { prefix: '/checkpoint/', handler: (_req, res) => (res.writeHead(200).end('checkpointed'), Promise.resolve()) },
    ],
  });
  const server = createServer((req, res) => void ns.handle(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const ok = await fetch(`${url}/healthz`, { headers: { authorization: 'Bearer bob' } });
  t.is(ok.status, 200);
  t.deepEqual(seen.map((a) => a.subresource), ['healthz', 'proxy']);
  seen.length = 0;
  const eve = await fetch(`${url}/healthz`, { headers: { authorization: 'Bearer eve' } });
  t.is(eve.status, 403);
  t.regex(((await eve.json()) as { message: string }).message, /subresource=healthz/);
  seen.length = 0;
  const ck = await fetch(`${url}/checkpoint/a/b/c`, { method: 'POST', headers: { authorization: 'Bearer bob' } });
  t.is(ck.status, 403);
  t.deepEqual(seen.map((a) => a.subresource), ['checkpoint']);
  server.close();
});

test('every answered request is reported to the observer with its endpoint label and code', async (t) => {
  const calls: [string, string, number][] = [];
  const ns = new NodeServer({
    nodeName: 'node-1',
    authenticator: byHeader,
    authorizer: allowBob,
    log: quiet,
    observer: { request: (method, path, code) => void calls.push([method, path, code]) },
    routes: [{ prefix: '/checkpoint/', handler: (_req, res) => (res.writeHead(200).end('checkpointed'), Promise.resolve()) }],
  });
  const server = createServer((req, res) => void ns.handle(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await (await fetch(`${url}/checkpoint/ns/secret-pod-name/c`, { method: 'POST', headers: { authorization: 'Bearer bob' } })).text();
  await (await fetch(`${url}/checkpoint/ns/p/c`, { method: 'POST' })).text();
  await (await fetch(`${url}/whatever/x`, { headers: { authorization: 'Bearer bob' } })).text();
  for (let i = 0; i < 100 && calls.length < 3; i++) await new Promise((r) => setTimeout(r, 20));
  t.deepEqual(
    calls.sort(),
    [
      ['GET', 'other', 404],
      ['POST', '/checkpoint', 200],
      ['POST', '/checkpoint', 401],
    ].sort(),
  );
  server.close();
});

test('upgrade requests pass the same authentication and authorization; refusals are Status answers on the raw socket', async (t) => {
  const seen: NodeRequestAttributes[] = [];
  const upgraded: string[] = [];
  const ns = new NodeServer({
    nodeName: 'node-1',
    authenticator: byHeader,
    authorizer: { authorize: (u, a) => (seen.push(a), allowBob.authorize(u, a)) },
    log: quiet,
    routes: [
      {
        prefix: '/exec/',
        handler: () => Promise.resolve({}),
        upgrade: (req, socket) => {
          upgraded.push(req.url ?? '');
          socket.end('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n');
          return Promise.resolve();
        },
      },
      { prefix: '/pods', handler: () => Promise.resolve({}) },
    ],
  });
  const server = createServer();
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => void ns.handleUpgrade(req, socket, head));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  const ask = (path: string, auth?: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const s = connect(port, '127.0.0.1', () => s.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n${auth ? `Authorization: Bearer ${auth}\r\n` : ''}\r\n`));
      let out = '';
      s.on('data', (b: Buffer) => (out += b.toString()));
      s.on('end', () => resolve(out));
      s.on('error', reject);
    });
  t.regex(await ask('/exec/ns/p/c?command=ls'), /^HTTP\/1\.1 401 Unauthorized[\s\S]*"reason":"Unauthorized"/);
  const denied = await ask('/exec/ns/p/c?command=ls', 'eve');
  t.regex(denied, /^HTTP\/1\.1 403 Forbidden/);
  t.true(denied.includes('Forbidden (user=eve, verb=get, resource=nodes, subresource=proxy)'));
  t.regex(await ask('/pods', 'bob'), /^HTTP\/1\.1 404 Not Found/);
  t.regex(await ask('/exec/ns/p/c?command=ls', 'bob'), /^HTTP\/1\.1 101 Switching Protocols/);
  t.deepEqual(upgraded, ['/exec/ns/p/c?command=ls']);
  t.true(seen.every((a) => a.subresource === 'proxy' || a.subresource === 'pods'));
  server.close();
});

test('an HTTP/2 client is served on ordinary routes (compatibility API), authenticated by its certificate', async (t) => {
  t.timeout(20_000);
  const { port, users } = await fakeAgent(t);
  const session = await h2Client(port, (await testPki()).client);
  t.teardown(() => session.destroy());
  // Go's cipher preference, as upstream's kubelet (common/tls-ciphers.ts).
  t.is((session.socket as TLSSocket).getCipher().name, 'TLS_AES_128_GCM_SHA256');
  const stream = session.request({ ':method': 'POST', ':path': '/checkpoint/a/b/c' });
  stream.end();
  t.is(Number((await responseOf(stream))[':status']), 200);
  t.is(await readToEnd(stream), 'checkpointed POST /checkpoint/a/b/c');
  t.deepEqual(users, ['bob']);
});

test("extended CONNECT reaches the route's upgrade handler with the client's method, path and headers; its 101 comes back as 200", async (t) => {
  t.timeout(20_000);
  const { port, seen, upgraded } = await fakeAgent(t);
  const session = await h2Client(port, (await testPki()).client);
  t.teardown(() => session.destroy());
  for (const [protocol, method, verb] of [['SPDY/3.1', 'POST', 'create'], ['websocket', 'GET', 'get']] as const) {
    const stream = extendedConnect(session, `/exec/ns/p/c?command=ls&${method}`, protocol, { 'x-svc-upgrade-method': method, 'x-stream-protocol-version': ['v5.channel.k8s.io', 'v4.channel.k8s.io'] });
    const h = await responseOf(stream);
    t.is(Number(h[':status']), 200);
    t.is(h['x-stream-protocol-version'], 'v4.channel.k8s.io');
    t.false('upgrade' in h || 'connection' in h);
    t.is(await readUntil(stream, 'hello'), 'hello');
    stream.end('ping');
    t.is(await readToEnd(stream), 'echo ping');
    const req = upgraded.at(-1)!;
    t.is(req.method, method);
    t.is(req.url, `/exec/ns/p/c?command=ls&${method}`);
    t.like(req.headers, { upgrade: protocol, connection: 'Upgrade', 'x-stream-protocol-version': 'v5.channel.k8s.io, v4.channel.k8s.io' });
    t.false('x-svc-upgrade-method' in req.headers);
    t.like(seen.at(-1), { verb, subresource: 'proxy', path: '/exec/ns/p/c' });
  }
  t.is(upgraded.length, 2);
});

test('an HTTP/2 connection is closed (GOAWAY) once it has had no open stream for the idle time; an open stream keeps it', async (t) => {
  t.timeout(20_000);
  const idleMs = 100;
  const { port } = await fakeAgent(t, { h2IdleMs: idleMs });
  const pki = await testPki();
  // Without streams: closed by the agent.
  const unused = await h2Client(port, pki.client);
  t.teardown(() => unused.destroy());
  await new Promise<void>((resolve) => unused.once('goaway', () => resolve()));
  // With a stream open for several idle times: kept, then closed once the stream is done.
  const session = await h2Client(port, pki.client);
  t.teardown(() => session.destroy());
  let goaway = false;
  session.once('goaway', () => (goaway = true));
  const stream = extendedConnect(session, '/exec/ns/p/c?command=sh', 'websocket', { 'x-svc-upgrade-method': 'GET' });
  t.is(await readUntil(stream, 'hello'), 'hello');
  // A negative can only be watched for a while: five idle times with the stream open.
  await new Promise((r) => setTimeout(r, 5 * idleMs));
  t.false(goaway, 'closed while a stream was open');
  stream.end('bye');
  t.is(await readToEnd(stream), 'echo bye');
  await new Promise<void>((resolve) => (goaway ? resolve() : session.once('goaway', () => resolve())));
});

test('extended CONNECT without a valid client certificate is 401 (Status) on the stream; the upgrade handler is not called', async (t) => {
  t.timeout(20_000);
  const { port, seen, upgraded } = await fakeAgent(t);
  for (const cert of [(await testPki()).stranger, undefined]) {
    const session = await h2Client(port, cert);
    t.teardown(() => session.destroy());
    const stream = extendedConnect(session, '/exec/ns/p/c?command=ls', 'SPDY/3.1', { 'x-svc-upgrade-method': 'POST' });
    const h = await responseOf(stream);
    t.is(Number(h[':status']), 401);
    t.like(JSON.parse(await readToEnd(stream)), { kind: 'Status', code: 401, reason: 'Unauthorized' });
  }
  t.is(upgraded.length, 0);
  t.is(seen.length, 0);
});

test('a CONNECT without :protocol is 405 (the agent is no forward proxy)', async (t) => {
  t.timeout(20_000);
  const { port, seen } = await fakeAgent(t);
  const session = await h2Client(port, (await testPki()).client);
  t.teardown(() => session.destroy());
  const stream = session.request({ ':method': 'CONNECT', ':authority': 'example.com:443' }, { endStream: false });
  t.is(Number((await responseOf(stream))[':status']), 405);
  t.is(seen.length, 0);
});

test('HTTP/1.1 over TLS is still served on the same port: requests and upgrades; CONNECT is 405', async (t) => {
  t.timeout(20_000);
  const { port, upgraded } = await fakeAgent(t);
  const pki = await testPki();
  const ask = (text: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const s = tlsConnect({ host: '127.0.0.1', port, ca: pki.ca.certPem, cert: pki.client.certPem, key: pki.client.keyPem, ALPNProtocols: ['http/1.1'] }, () => s.write(text));
      let out = '';
      s.on('data', (b: Buffer) => {
        out += b.toString();
        if (out.includes('hello')) s.write('ping');
      });
      s.on('end', () => resolve(out));
      s.on('error', reject);
    });
  t.regex(await ask('POST /checkpoint/a/b/c HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'), /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\ncheckpointed POST \/checkpoint\/a\/b\/c\r\n0\r\n\r\n$/);
  const up = await ask('GET /exec/ns/p/c?command=ls HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n');
  t.regex(up, /^HTTP\/1\.1 101 Switching Protocols\r\n[\s\S]*\r\n\r\nhelloecho ping$/);
  t.is(upgraded.length, 1);
  t.regex(await ask('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'), /^HTTP\/1\.1 405 Method Not Allowed\r\n[\s\S]*"reason":"MethodNotAllowed"/);
});
