import test from 'ava';
import { createServer as createHttpServer, type IncomingMessage } from 'node:http';
import { createServer as createNetServer, connect, type Socket } from 'node:net';
import type { ResourceRequest } from '../../../../apiserver/handlers/context';
import { proxyUpgrade, switchingHead, upgradeHeaders } from '../../../../apiserver/handlers/upgrade-proxy';

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
