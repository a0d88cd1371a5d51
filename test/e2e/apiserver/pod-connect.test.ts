/**
 * pods/exec, pods/attach, pods/portforward through a real svc-apiserver (issue 21, item 3) to a
 * stand-in node agent: an HTTPS server on the kubelet paths that records what reached it (path,
 * headers, the client certificate) and, after a 101, echoes every byte. It checks the proxy is
 * byte-transparent for WebSocket and SPDY upgrades, presents the kubelet-client certificate and
 * never the caller's credentials, tears both sides down together, and that RBAC is checked at
 * the API server (403 without pods/exec create). Every wait is bounded.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer } from 'ws';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { call } from '../../helpers/http';
import { eventually } from '../agent/agent-process';

interface Seen {
  url: string;
  method: string;
  headers: IncomingMessage['headers'];
  rawHeaders: string[];
  peerCN: string;
}

let s: RunningApiServer;
let agent: Server;
const seen: Seen[] = [];
/** Backend sockets of accepted upgrades, to see them closed. */
const backendSockets: Duplex[] = [];
const NS = 'default';

test.before(async () => {
  s = await startApiServer();
  const pki = join(s.dataDir, 'pki');
  // The stand-in serves with the API server's own serving pair (any certificate: the agent's is not verified by default).
  agent = createServer({ cert: readFileSync(join(pki, 'apiserver.crt')), key: readFileSync(join(pki, 'apiserver.key')), ca: s.caPem, requestCert: true, rejectUnauthorized: true });
  const wss = new WebSocketServer({ noServer: true, handleProtocols: (p) => [...p][0] ?? false });
  wss.on('connection', (ws) => ws.on('message', (data, binary) => ws.send(data, { binary })));
  agent.on('request', (req, res) => {
    record(req);
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
  agent.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    record(req);
    backendSockets.push(socket);
    if (req.url?.includes('refuse')) {
      socket.end('HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\ncontent-length: 9\r\n\r\nforbidden');
      return;
    }
    if ((req.headers.upgrade ?? '').toLowerCase() === 'websocket') {
      wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
      return;
    }
    // SPDY (or anything else): a 101 naming the chosen protocol, then raw echo; no framing looked at.
    socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\n\r\n');
    if (head.length) socket.write(head);
    socket.pipe(socket);
  });
  await new Promise<void>((r) => agent.listen(0, '127.0.0.1', r));
  const port = (agent.address() as { port: number }).port;
  const admin = (m: 'POST' | 'PUT', path: string, body: unknown) => call(s.admin, m, `${s.url}${path}`, body);
  await admin('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } });
  const node = (await call(s.admin, 'GET', `${s.url}/api/v1/nodes/n1`)).body;
  node.status = { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: port } } };
  const st = await admin('PUT', '/api/v1/nodes/n1/status', node);
  if (st.status !== 200) throw new Error(st.text);
  const pod = (name: string, containers: string[], extra: Record<string, unknown> = {}) =>
    admin('POST', `/api/v1/namespaces/${NS}/pods`, { apiVersion: 'v1', kind: 'Pod', metadata: { name, ...extra }, spec: { ...(name === 'unscheduled' ? {} : { nodeName: 'n1' }), containers: containers.map((c) => ({ name: c, image: 'busybox' })) } });
  for (const r of [await pod('p', ['app']), await pod('two', ['a', 'b']), await pod('annotated', ['a', 'b'], { annotations: { 'kubectl.kubernetes.io/default-container': 'b' } }), await pod('unscheduled', ['app'])]) {
    if (r.status !== 201) throw new Error(r.text);
  }
});
test.after.always(async () => {
  agent?.closeAllConnections();
  agent?.close();
  await s?.stop();
});

function record(req: IncomingMessage) {
  const peer = (req.socket as TLSSocket).getPeerCertificate();
  seen.push({ url: req.url ?? '', method: req.method ?? '', headers: req.headers, rawHeaders: req.rawHeaders, peerCN: String(peer?.subject?.CN ?? '') });
}

function adminTls(): { ca: string; cert: Buffer; key: Buffer } {
  const pki = join(s.dataDir, 'pki');
  return { ca: s.caPem, cert: readFileSync(join(pki, 'admin.crt')), key: readFileSync(join(pki, 'admin.key')) };
}

/** Opens a WebSocket through the API server; resolves once open, rejects with the HTTP status of a refusal. */
function openWs(path: string, o: { token?: string; protocol?: string } = {}): Promise<WebSocket> {
  const tls = o.token ? { ca: s.caPem } : adminTls();
  const ws = new WebSocket(`wss://127.0.0.1:${s.port}${path}`, [o.protocol ?? 'v5.channel.k8s.io'], {
    ...tls,
    servername: 'localhost',
    headers: o.token ? { Authorization: `Bearer ${o.token}` } : {},
    handshakeTimeout: 20_000,
  } as WebSocket.ClientOptions & { servername: string });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => reject(Object.assign(new Error(`${res.statusCode} ${body}`), { status: res.statusCode, body })));
    });
    ws.once('error', reject);
  });
}

function nextMessage(ws: WebSocket): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    ws.once('message', (d) => resolve(Buffer.isBuffer(d) ? d : Buffer.from(d as ArrayBuffer)));
    ws.once('close', () => reject(new Error('closed before a message')));
  });
}

test.serial('exec over WebSocket reaches the kubelet path with the kubelet-client certificate; frames come back byte for byte', async (t) => {
  const before = seen.length;
  const ws = await openWs(`/api/v1/namespaces/${NS}/pods/p/exec?command=sh&command=-c&command=echo%20hi&stdin=true&stdout=true&stderr=false&tty=true`);
  const last = seen[before];
  t.is(last.method, 'GET');
  t.is(last.url, '/exec/default/p/app?input=1&output=1&tty=1&command=sh&command=-c&command=echo+hi');
  t.is(last.peerCN, 'svc-apiserver-kubelet-client');
  t.is(last.headers['sec-websocket-protocol'], 'v5.channel.k8s.io');
  t.is(ws.protocol, 'v5.channel.k8s.io');
  for (const size of [1, 125, 126, 65_536, 300_000]) {
    const frame = Buffer.concat([Buffer.from([0]), randomBytes(size)]);
    const echoed = nextMessage(ws);
    ws.send(frame);
    t.deepEqual(await echoed, frame);
  }
  const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
  ws.close(1000);
  t.is(await closed, 1000);
});

test.serial('a SPDY upgrade (POST) is passed through unparsed: duplicate protocol headers kept, raw bytes echoed', async (t) => {
  const before = seen.length;
  const sock = tlsConnect({ host: '127.0.0.1', port: s.port, servername: 'localhost', ...adminTls() });
  await new Promise<void>((r) => sock.once('secureConnect', () => r()));
  sock.write(
    `POST /api/v1/namespaces/${NS}/pods/p/attach?stdout=true&stdin=true HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n` +
      'X-Stream-Protocol-Version: v4.channel.k8s.io\r\nX-Stream-Protocol-Version: v3.channel.k8s.io\r\nContent-Length: 0\r\n\r\n',
  );
  const payload = randomBytes(1 << 20);
  let got = Buffer.alloc(0);
  let headEnd = -1;
  sock.on('data', (d: Buffer) => {
    got = Buffer.concat([got, d]);
    if (headEnd < 0) {
      headEnd = got.indexOf('\r\n\r\n');
      if (headEnd >= 0) sock.write(payload);
    }
  });
  await eventually('the echoed payload', () => (headEnd >= 0 && got.length - headEnd - 4 >= payload.length ? true : undefined), 30_000, 50);
  const head = got.subarray(0, headEnd).toString();
  t.regex(head, /^HTTP\/1\.1 101 /);
  t.regex(head, /X-Stream-Protocol-Version: v4\.channel\.k8s\.io/);
  t.deepEqual(got.subarray(headEnd + 4), payload);
  const last = seen[before];
  t.is(last.method, 'POST');
  t.is(last.url, '/attach/default/p/app?input=1&output=1&error=1');
  const versions = last.rawHeaders.filter((_, i) => i % 2 === 1 && last.rawHeaders[i - 1].toLowerCase() === 'x-stream-protocol-version');
  t.deepEqual(versions, ['v4.channel.k8s.io', 'v3.channel.k8s.io']);
  // The client vanishing mid-stream closes the agent's side too.
  const backend = backendSockets[backendSockets.length - 1];
  sock.destroy();
  await eventually('the backend socket closed', () => (backend.destroyed ? true : undefined), 20_000, 50);
  t.true(backend.destroyed);
});

test.serial('port-forward goes to /portForward/{ns}/{pod}; the agent closing ends the client stream', async (t) => {
  const before = seen.length;
  const ws = await openWs(`/api/v1/namespaces/${NS}/pods/p/portforward?ports=8080`, { protocol: 'v4.channel.k8s.io' });
  t.is(seen[before].url, '/portForward/default/p?port=8080');
  const closed = new Promise<void>((r) => ws.once('close', () => r()));
  backendSockets[backendSockets.length - 1].destroy();
  await closed;
  t.is(ws.readyState, WebSocket.CLOSED);
});

test.serial('container choice and errors as upstream: default-container annotation, invalid container, unscheduled pod, agent refusal', async (t) => {
  const refused = (path: string) => openWs(path).then(
    () => t.fail(`${path} was accepted`),
    (e: Error & { status?: number; body?: string }) => e,
  );
  const before = seen.length;
  const ws = await openWs(`/api/v1/namespaces/${NS}/pods/annotated/exec?command=true`);
  t.is(seen[before].url, '/exec/default/annotated/b?output=1&error=1&command=true');
  ws.terminate();
  let e = (await refused(`/api/v1/namespaces/${NS}/pods/two/exec?command=true`));
  t.is(e.status, 400);
  t.is(JSON.parse(e.body!).message, 'a container name must be specified for pod two, choose one of: [a b]');
  e = (await refused(`/api/v1/namespaces/${NS}/pods/p/exec?command=true&container=nope`));
  t.is(e.status, 400);
  t.is(JSON.parse(e.body!).message, 'container nope is not valid for pod p');
  e = (await refused(`/api/v1/namespaces/${NS}/pods/unscheduled/exec?command=true`));
  t.is(e.status, 400);
  t.is(JSON.parse(e.body!).message, 'pod unscheduled does not have a host assigned');
  e = (await refused(`/api/v1/namespaces/${NS}/pods/missing/exec?command=true`));
  t.is(e.status, 404);
  // The agent's own refusal reaches the client as it was.
  e = (await refused(`/api/v1/namespaces/${NS}/pods/p/exec?command=refuse`));
  t.is(e.status, 403);
  t.is(e.body, 'forbidden');
  // Not an upgrade: 400 as upstream.
  const plain = await call(s.admin, 'POST', `${s.url}/api/v1/namespaces/${NS}/pods/p/exec?command=true`);
  t.is(plain.status, 400);
  t.is(plain.body.message, 'Upgrade request required');
});

test.serial("RBAC at the API server: 403 without pods/exec create (a WebSocket GET needs it too); the caller's token never reaches the agent", async (t) => {
  const admin = (path: string, body: unknown) => call(s.admin, 'POST', `${s.url}${path}`, body);
  for (const n of ['execer', 'getter', 'reader']) await admin(`/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: n } });
  await admin(`/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, { metadata: { name: 'exec' }, rules: [{ apiGroups: [''], resources: ['pods/exec'], verbs: ['create', 'get'] }] });
  await admin(`/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, { metadata: { name: 'get-exec' }, rules: [{ apiGroups: [''], resources: ['pods/exec'], verbs: ['get'] }] });
  await admin(`/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, { metadata: { name: 'read' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }] });
  for (const [sa, role] of [['execer', 'exec'], ['getter', 'get-exec'], ['reader', 'read']]) {
    await admin(`/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, { metadata: { name: sa }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role }, subjects: [{ kind: 'ServiceAccount', name: sa, namespace: NS }] });
  }
  const token = async (sa: string) => (await admin(`/api/v1/namespaces/${NS}/serviceaccounts/${sa}/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} })).body.status.token as string;
  const path = `/api/v1/namespaces/${NS}/pods/p/exec?command=true`;
  for (const sa of ['reader', 'getter']) {
    const before = seen.length;
    const e = await openWs(path, { token: await token(sa) }).then(
      () => undefined,
      (err: Error & { status?: number; body?: string }) => err,
    );
    t.is(e?.status, 403, sa);
    t.regex(JSON.parse(e!.body!).message, /cannot (create|get) resource "pods\/exec" in API group "" in the namespace "default"/);
    t.is(seen.length, before, `${sa}: nothing reached the agent`);
  }
  // The binding reaches the authorizer's cache shortly after it is written.
  const execer = await token('execer');
  const ws = await eventually('execer allowed', () => openWs(path, { token: execer }).catch(() => undefined), 20_000, 200);
  ws.terminate();
  const got = seen[seen.length - 1];
  t.is(got.url, '/exec/default/p/app?output=1&error=1&command=true');
  t.is(got.headers.authorization, undefined);
  t.is(got.peerCN, 'svc-apiserver-kubelet-client');
});

test.serial('nodes/proxy: {name}:{kubelet port} is the agent with the kubelet-client identity; another port of a loopback node is refused', async (t) => {
  const agentPort = (agent.address() as { port: number }).port;
  const before = seen.length;
  // The client certificate authenticates (x509 comes first, as upstream); the header is not passed on.
  const r = await call(s.admin, 'GET', `${s.url}/api/v1/nodes/n1:${agentPort}/proxy/stats/summary?only=cpu`, undefined, { authorization: 'Bearer not-forwarded' });
  t.is(r.status, 404);
  t.is(r.text, 'not found');
  t.is(seen[before].url, '/stats/summary?only=cpu');
  t.is(seen[before].peerCN, 'svc-apiserver-kubelet-client');
  t.is(seen[before].headers.authorization, undefined);
  // The scheme asked for is ignored for the agent's own port (its scheme is https), as upstream.
  const ok = await call(s.admin, 'GET', `${s.url}/api/v1/nodes/http:n1:${agentPort}/proxy/healthz`);
  t.is(ok.status, 404);
  t.is(seen[before + 1].url, '/healthz');
  const other = await call(s.admin, 'GET', `${s.url}/api/v1/nodes/n1:9100/proxy/metrics`);
  t.is(other.status, 400);
  t.is(other.body.message, 'address not allowed: 127.0.0.1');
  const bad = await call(s.admin, 'GET', `${s.url}/api/v1/nodes/ftp:n1:21/proxy/`);
  t.is(bad.status, 400);
  t.is(bad.body.message, 'invalid node request "ftp:n1:21"');
});

test.serial('discovery lists the connect and proxy sub-resources with upstream verbs', async (t) => {
  const doc = (await call(s.admin, 'GET', `${s.url}/api/v1`)).body;
  const verbs = (name: string) => doc.resources.find((r: { name: string }) => r.name === name)?.verbs;
  for (const sub of ['pods/exec', 'pods/attach', 'pods/portforward']) t.deepEqual(verbs(sub), ['create', 'get'], sub);
  for (const sub of ['pods/proxy', 'services/proxy', 'nodes/proxy']) t.deepEqual(verbs(sub), ['create', 'delete', 'get', 'patch', 'update'], sub);
});

// Last: it stops the server.
test.serial("the server's shutdown ends an open stream on both sides, and the server exits", async (t) => {
  const ws = await openWs(`/api/v1/namespaces/${NS}/pods/p/exec?command=sh&stdin=true`);
  const backend = backendSockets[backendSockets.length - 1];
  const closed = new Promise<void>((r) => ws.once('close', () => r()));
  const exited = new Promise<number | null>((r) => (s.proc.exitCode !== null ? r(s.proc.exitCode) : s.proc.once('exit', (code) => r(code))));
  s.proc.kill('SIGTERM');
  await closed;
  t.is(ws.readyState, WebSocket.CLOSED);
  await eventually('the agent side closed', () => (backend.destroyed ? true : undefined), 20_000, 50);
  t.is(await exited, 0);
});
