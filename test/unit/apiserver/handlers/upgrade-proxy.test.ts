import test, { type ExecutionContext } from 'ava';
import { once } from 'node:events';
import { createServer as createHttpServer, ServerResponse, type IncomingMessage } from 'node:http';
import { createServer as createNetServer, connect, type AddressInfo, type Socket } from 'node:net';
import { constants, createSecureServer, type Http2SecureServer, type ServerHttp2Session, type ServerHttp2Stream } from 'node:http2';
import { createSecureContext, type TLSSocket } from 'node:tls';
import { AgentSessions } from '../../../../apiserver/handlers/agent-sessions';
import type { ResourceRequest } from '../../../../apiserver/handlers/context';
import { proxyUpgrade, switchingHead, upgradeHeaders, type UpgradeTarget } from '../../../../apiserver/handlers/upgrade-proxy';
import type { KeyPairPem } from '../../../../apiserver/pki/certs';
import { closed, fakeAgent, testPki } from '../../../helpers/h2-tunnel';

const message = (rawHeaders: string[], extra: Partial<IncomingMessage> = {}): IncomingMessage => {
  const headers: Record<string, string> = {};
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const k = rawHeaders[i].toLowerCase();
    headers[k] = headers[k] ? `${headers[k]}, ${rawHeaders[i + 1]}` : rawHeaders[i + 1];
  }
  return { rawHeaders, headers, method: 'POST', ...extra } as IncomingMessage;
};

test("upgrade headers: the caller's credentials dropped, duplicates kept, Connection/Upgrade set", (t) => {
  const h = upgradeHeaders(
    message([
      'Authorization', 'Bearer secret',
      'Impersonate-User', 'root',
      'Cookie', 'a=b',
      'Host', 'api:6443',
      'Connection', 'Upgrade',
      'Upgrade', 'SPDY/3.1',
      'X-Stream-Protocol-Version', 'v4.channel.k8s.io',
      'X-Stream-Protocol-Version', 'v3.channel.k8s.io',
      'User-Agent', 'kubectl/v1.27',
    ]),
  );
  t.deepEqual(h, { 'x-stream-protocol-version': ['v4.channel.k8s.io', 'v3.channel.k8s.io'], 'user-agent': 'kubectl/v1.27', connection: 'Upgrade', upgrade: 'SPDY/3.1' });
});

test('the 101 head is written as the backend sent it', (t) => {
  const res = { statusMessage: 'Switching Protocols', rawHeaders: ['Upgrade', 'websocket', 'Sec-WebSocket-Protocol', 'v5.channel.k8s.io'] } as IncomingMessage;
  t.is(switchingHead(res), 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nSec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n');
});

/** A backend that accepts any upgrade and then stays silent; its sockets are kept to see them closed. */
async function silentBackend(): Promise<{ port: number; sockets: Socket[]; close(): void }> {
  const sockets: Socket[] = [];
  const server = createHttpServer();
  server.on('upgrade', (_req, socket: Socket) => {
    sockets.push(socket);
    // Half-open sockets stay open on an HTTP server: close when the proxy does, as a real peer.
    socket.on('end', () => socket.end());
    socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as { port: number }).port, sockets, close: () => server.close() };
}

/** A connected socket pair: `server` plays the API server's side of the client's connection. */
async function socketPair(): Promise<{ client: Socket; server: Socket; close(): void }> {
  const listener = createNetServer();
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  const accepted = new Promise<Socket>((r) => listener.once('connection', r));
  const client = connect((listener.address() as { port: number }).port, '127.0.0.1');
  return { client, server: await accepted, close: () => listener.close() };
}

function request(socket: Socket, signal: AbortSignal): ResourceRequest {
  return {
    req: message(['Connection', 'Upgrade', 'Upgrade', 'SPDY/3.1']),
    res: { headersSent: false, detachSocket: () => undefined },
    upgrade: { socket, head: Buffer.alloc(0) },
    signal,
  } as unknown as ResourceRequest;
}

test('a stream idle in both directions is torn down on both sides', async (t) => {
  const backend = await silentBackend();
  const pair = await socketPair();
  let clientData = '';
  pair.client.on('data', (d: Buffer) => (clientData += d.toString()));
  await proxyUpgrade(request(pair.server, new AbortController().signal), { scheme: 'http', host: '127.0.0.1', port: backend.port, path: '/x', describe: 'test' }, { idleTimeoutMs: 50 });
  t.true(pair.server.destroyed);
  t.is(backend.sockets.length, 1);
  await new Promise<void>((r) => (backend.sockets[0].closed ? r() : backend.sockets[0].once('close', () => r())));
  t.true(backend.sockets[0].destroyed);
  t.regex(clientData, /^HTTP\/1\.1 101 Switching Protocols\r\n/);
  pair.client.destroy();
  pair.close();
  backend.close();
});

test("the server's shutdown signal ends a stream; the client leaving ends the backend's side", async (t) => {
  const backend = await silentBackend();
  const a = await socketPair();
  const stop = new AbortController();
  const first = proxyUpgrade(request(a.server, stop.signal), { scheme: 'http', host: '127.0.0.1', port: backend.port, path: '/x', describe: 'test' }, { idleTimeoutMs: 3_600_000 });
  const b = await socketPair();
  const second = proxyUpgrade(request(b.server, new AbortController().signal), { scheme: 'http', host: '127.0.0.1', port: backend.port, path: '/y', describe: 'test' }, { idleTimeoutMs: 3_600_000 });
  // Both upgraded (the 101 reached each client) before they are ended.
  await Promise.all([a, b].map((p) => new Promise<void>((r) => p.client.once('data', () => r()))));
  stop.abort();
  await first;
  b.client.destroy();
  await second;
  t.true(a.server.destroyed && b.server.destroyed);
  for (const s of backend.sockets) await new Promise<void>((r) => (s.closed ? r() : s.once('close', () => r())));
  t.is(backend.sockets.length, 2);
  t.true(backend.sockets.every((s) => s.destroyed));
  a.close();
  b.close();
  backend.close();
});

test('an unreachable backend is a 503 naming it', async (t) => {
  const pair = await socketPair();
  const err = await t.throwsAsync(proxyUpgrade(request(pair.server, new AbortController().signal), { scheme: 'http', host: '127.0.0.1', port: 1, path: '/x', describe: 'the node agent of n1' }, { idleTimeoutMs: 1000 }));
  t.regex(err.message, /^cannot reach the node agent of n1 at 127\.0\.0\.1:1: /);
  pair.client.destroy();
  pair.close();
});

/** The API server's side: an HTTP server handing its upgrades to proxyUpgrade(target) with a response bound to the socket, as the API server does. */
async function front(t: ExecutionContext, target: UpgradeTarget): Promise<number> {
  const server = createHttpServer();
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket);
    res.on('finish', () => socket.end());
    const r = { req, res, upgrade: { socket, head }, signal: new AbortController().signal } as unknown as ResourceRequest;
    proxyUpgrade(r, target, { idleTimeoutMs: 60_000 }).catch((e: Error) => res.writeHead(503).end(e.message));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return (server.address() as AddressInfo).port;
}

/** Sends an upgrade request head; once "hello" has come, writes `after`; resolves everything received until the end. */
function ask(port: number, head: string, after = 'ping'): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => s.write(head));
    let out = '';
    let sent = false;
    s.on('data', (d: Buffer) => {
      out += d.toString();
      if (!sent && out.includes('hello')) {
        sent = true;
        s.write(after);
      }
    });
    s.on('end', () => resolve(out));
    s.on('error', reject);
  });
}

const SPDY_POST = 'POST /api/v1/namespaces/ns/pods/p/exec?command=ls HTTP/1.1\r\nHost: api\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v5.channel.k8s.io\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\n\r\n';

async function agentTarget(sessions: AgentSessions, port: number, cert?: KeyPairPem): Promise<UpgradeTarget> {
  const pki = await testPki();
  return { scheme: 'https', host: '127.0.0.1', port, path: '/exec/ns/p/c?command=ls', cert: cert ?? pki.client, caPem: pki.ca.certPem, describe: 'the node agent of node-1', sessions };
}

test("with sessions: the upgrade goes as a stream of the agent's HTTP/2 connection; the client gets a 101 with the agent's headers and bytes flow both ways; a second stream shares the connection", async (t) => {
  t.timeout(20_000);
  const agent = await fakeAgent(t);
  const sessions = new AgentSessions();
  t.teardown(() => sessions.closeAll());
  const port = await front(t, await agentTarget(sessions, agent.port));
  for (let i = 0; i < 2; i++) {
    const out = await ask(port, SPDY_POST, `ping ${i}`);
    t.regex(out, /^HTTP\/1\.1 101 Switching Protocols\r\n/);
    const [head, body] = out.split('\r\n\r\n');
    t.true(head.split('\r\n').includes('x-stream-protocol-version: v4.channel.k8s.io'));
    t.regex(head, /\r\nUpgrade: SPDY\/3\.1(\r\n|$)/);
    t.is(body, `helloecho ping ${i}`);
  }
  t.is(agent.upgraded.length, 2);
  const [a, b] = agent.upgraded;
  t.is(a.method, 'POST');
  t.is(a.url, '/exec/ns/p/c?command=ls');
  t.is(a.headers['x-stream-protocol-version'], 'v5.channel.k8s.io, v4.channel.k8s.io');
  t.is((a.socket as TLSSocket).alpnProtocol, 'h2');
  t.is(a.socket, b.socket, 'one connection for both streams');
});

test("with sessions: the agent's refusal (403 with a Status body) reaches the client as it came; the refused stream does not hold the connection open", async (t) => {
  t.timeout(20_000);
  const agent = await fakeAgent(t);
  const sessions = new AgentSessions({ idleMs: 20 });
  t.teardown(() => sessions.closeAll());
  const target = await agentTarget(sessions, agent.port, (await testPki()).eve);
  // Holds the connection the proxy will share (same endpoint and credentials) until the refusal is through.
  const held = (await sessions.acquire({ host: '127.0.0.1', port: agent.port, secureContext: createSecureContext({ cert: target.cert!.certPem, key: target.cert!.keyPem }), verify: false, credentialsKey: `${target.cert!.certPem}\0${target.caPem}` }, 5_000))!;
  const port = await front(t, target);
  const out = await ask(port, SPDY_POST);
  t.regex(out, /^HTTP\/1\.1 403 Forbidden\r\n/);
  const [head, body] = out.split('\r\n\r\n');
  t.regex(head, /\r\ncontent-type: application\/json\r\n/i);
  t.like(JSON.parse(body), { kind: 'Status', code: 403, reason: 'Forbidden', message: 'Forbidden (user=eve, verb=create, resource=nodes, subresource=proxy)' });
  t.is(agent.upgraded.length, 0);
  // Without streams it is closed after the idle time: a close that waits for open streams, so only
  // once the refused one has closed.
  held.release();
  await closed(held.session);
});

test("with sessions: the request's Content-Length is not forwarded (a SPDY POST saying 0 still carries the stream's bytes)", async (t) => {
  t.timeout(20_000);
  const agent = await fakeAgent(t);
  const sessions = new AgentSessions();
  t.teardown(() => sessions.closeAll());
  const port = await front(t, await agentTarget(sessions, agent.port));
  const out = await ask(port, SPDY_POST.replace('\r\n\r\n', '\r\nContent-Length: 0\r\n\r\n'), 'stdin bytes');
  t.regex(out, /^HTTP\/1\.1 101 /);
  t.is(out.split('\r\n\r\n')[1], 'helloecho stdin bytes');
  t.false('content-length' in agent.upgraded[0].headers);
});

test('with sessions but an HTTP/1.1-only agent: the upgrade falls back to a connection of its own', async (t) => {
  t.timeout(20_000);
  const agent = await fakeAgent(t, { http1Only: true });
  const sessions = new AgentSessions();
  t.teardown(() => sessions.closeAll());
  const port = await front(t, await agentTarget(sessions, agent.port));
  for (let i = 0; i < 2; i++) {
    const out = await ask(port, SPDY_POST, `ping ${i}`);
    t.regex(out, /^HTTP\/1\.1 101 Switching Protocols\r\n[\s\S]*\r\nX-Stream-Protocol-Version: v4\.channel\.k8s\.io\r\n/);
    t.is(out.split('\r\n\r\n')[1], `helloecho ping ${i}`);
  }
  t.is(agent.upgraded.length, 2);
  t.not((agent.upgraded[0].socket as TLSSocket).alpnProtocol, 'h2');
  t.not(agent.upgraded[0].socket, agent.upgraded[1].socket);
});

/** An HTTP/2 agent taking extended CONNECT streams and never answering them (its 'stream' events tell each). */
async function mutedAgent(t: ExecutionContext): Promise<{ port: number; server: Http2SecureServer }> {
  const pki = await testPki();
  const server = createSecureServer({ cert: pki.server.certPem, key: pki.server.keyPem, settings: { enableConnectProtocol: true } });
  const sessions: ServerHttp2Session[] = [];
  server.on('session', (s: ServerHttp2Session) => sessions.push(s));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    for (const s of sessions) s.destroy();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return { port: (server.address() as AddressInfo).port, server };
}

test('with sessions: the client leaving (resolves), or the server shutting down (rejects), before the agent answered ends the proxy and the stream', async (t) => {
  t.timeout(20_000);
  const agent = await mutedAgent(t);
  const sessions = new AgentSessions();
  t.teardown(() => sessions.closeAll());
  const target: UpgradeTarget = { scheme: 'https', host: '127.0.0.1', port: agent.port, path: '/exec/a/b/c', describe: 'the node agent of node-1', sessions };
  const gone = await socketPair();
  const other = await socketPair();
  t.teardown(() => {
    for (const p of [gone, other]) {
      p.client.destroy();
      p.close();
    }
  });
  let arrived = once(agent.server, 'stream');
  const left = proxyUpgrade(request(gone.server, new AbortController().signal), target, { idleTimeoutMs: 3_600_000 });
  const [first] = (await arrived) as [ServerHttp2Stream];
  gone.client.destroy();
  await left;
  await closed(first);
  const stop = new AbortController();
  arrived = once(agent.server, 'stream');
  const stopped = proxyUpgrade(request(other.server, stop.signal), target, { idleTimeoutMs: 3_600_000 });
  const [second] = (await arrived) as [ServerHttp2Stream];
  stop.abort();
  // As over HTTP/1.1: the client, told nothing yet, is answered 503 by the caller.
  await t.throwsAsync(stopped, { message: /^cannot reach the node agent of node-1 at 127\.0\.0\.1:\d+: the stream was closed before an answer/ });
  await closed(second);
});

test('with sessions: the agent resetting the stream after its answer cuts the client; the proxy resolves (nothing left to answer)', async (t) => {
  t.timeout(20_000);
  const agent = await mutedAgent(t);
  agent.server.on('stream', (s: ServerHttp2Stream) => {
    s.on('error', () => undefined); // its own reset, below
    s.respond({ ':status': 200 });
    s.write('hello', () => s.close(constants.NGHTTP2_INTERNAL_ERROR));
  });
  const sessions = new AgentSessions();
  t.teardown(() => sessions.closeAll());
  const pair = await socketPair();
  t.teardown(() => {
    pair.client.destroy();
    pair.close();
  });
  let received = '';
  pair.client.on('data', (d: Buffer) => (received += d.toString()));
  await proxyUpgrade(request(pair.server, new AbortController().signal), { scheme: 'https', host: '127.0.0.1', port: agent.port, path: '/exec/a/b/c', describe: 'test', sessions }, { idleTimeoutMs: 3_600_000 });
  await closed(pair.client);
  t.regex(received, /^HTTP\/1\.1 101 Switching Protocols\r\n/);
});
