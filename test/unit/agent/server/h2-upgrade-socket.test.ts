import { once } from 'node:events';
import { constants, createSecureServer, type ClientHttp2Stream, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import { H2UpgradeSocket, parseAnswerHead, tunnelledRequest } from '../../../../agent/server/h2-upgrade-socket';
import { closed, extendedConnect, h2Client, readToEnd, responseOf, testPki } from '../../../helpers/h2-tunnel';
import { readUntil } from '../../../helpers/stream-client';

test('parseAnswerHead: the status, headers by lower-case name, repeated ones as arrays', (t) => {
  const a = parseAnswerHead('HTTP/1.1 101 Switching Protocols\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\nSet-Cookie: a=1\r\nset-cookie: b=2\r\nno colon here');
  t.is(a.status, 101);
  t.deepEqual(a.headers, { upgrade: 'SPDY/3.1', 'x-stream-protocol-version': 'v4.channel.k8s.io', 'set-cookie': ['a=1', 'b=2'] });
  t.is(parseAnswerHead('HTTP/1.0 403').status, 403);
  t.is(parseAnswerHead('HTTP/1.1 404 Not Found\r\nA: 1\r\nA: 2\r\nA: 3').headers.a.length, 3);
});

test('parseAnswerHead: a line that is no HTTP/1.1 status line throws, naming it', (t) => {
  t.throws(() => parseAnswerHead('SPDY garbage\r\nA: b'), { message: /^not an HTTP\/1\.1 answer: "SPDY garbage"/ });
  t.throws(() => parseAnswerHead('HTTP/2 200'), { message: /not an HTTP\/1\.1 answer/ });
  t.throws(() => parseAnswerHead('HTTP/1.1 20 OK'), { message: /not an HTTP\/1\.1 answer/ });
});

test("tunnelledRequest: the client's method, the path, Upgrade and Connection put back, pseudo and hop-by-hop headers gone", (t) => {
  const socket = { marker: true } as unknown as Socket;
  const h = {
    ':method': 'CONNECT',
    ':protocol': 'SPDY/3.1',
    ':scheme': 'https',
    ':path': '/exec/ns/p/c?command=ls&stdout=1',
    ':authority': '127.0.0.1:10250',
    'x-svc-upgrade-method': 'post',
    'x-stream-protocol-version': ['v4.channel.k8s.io', 'v3.channel.k8s.io'],
    'user-agent': 'kubectl/v1.32',
    'keep-alive': 'timeout=5',
    te: 'trailers',
  } as unknown as IncomingHttpHeaders;
  const req = tunnelledRequest(h, socket);
  t.is(req.method, 'POST');
  t.is(req.url, '/exec/ns/p/c?command=ls&stdout=1');
  t.is(req.socket, socket);
  t.is(req.httpVersion, '1.1');
  t.deepEqual(req.headers, { 'x-stream-protocol-version': ['v4.channel.k8s.io', 'v3.channel.k8s.io'], 'user-agent': 'kubectl/v1.32', connection: 'Upgrade', upgrade: 'SPDY/3.1' });
  t.deepEqual(req.rawHeaders, ['x-stream-protocol-version', 'v4.channel.k8s.io', 'x-stream-protocol-version', 'v3.channel.k8s.io', 'user-agent', 'kubectl/v1.32', 'connection', 'Upgrade', 'upgrade', 'SPDY/3.1']);
  // Without the method header, GET (a WebSocket upgrade).
  t.is(tunnelledRequest({ ':protocol': 'websocket', ':path': '/attach/a/b/c' }, socket).method, 'GET');
});

/** An extended CONNECT stream (protocol `protocol`) to the server on port, on a client session closed at the end of the test. */
async function streamTo(t: ExecutionContext, port: number, protocol = 'x'): Promise<ClientHttp2Stream> {
  const session = await h2Client(port);
  t.teardown(() => session.destroy());
  return extendedConnect(session, '/exec/a/b/c', protocol);
}

/**
 * An HTTP/2 server whose extended CONNECT streams are served by `handler` on an H2UpgradeSocket,
 * as the agent's upgrade handlers are; its sockets are kept to see them closed.
 */
async function tunnelServer(t: ExecutionContext, handler: (socket: H2UpgradeSocket, headers: IncomingHttpHeaders) => void): Promise<{ port: number; sockets: H2UpgradeSocket[] }> {
  const pki = await testPki();
  const sockets: H2UpgradeSocket[] = [];
  const server = createSecureServer({ cert: pki.server.certPem, key: pki.server.keyPem, settings: { enableConnectProtocol: true } });
  server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    const socket = new H2UpgradeSocket(stream);
    sockets.push(socket);
    handler(socket, headers);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return { port: (server.address() as AddressInfo).port, sockets };
}

const SWITCHING = 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: abc\r\n\r\n';

test('a 101 head and bytes in one write: the client sees 200 with the answer headers (no hop-by-hop ones) and the bytes; its bytes reach the handler', async (t) => {
  t.timeout(20_000);
  const read: string[] = [];
  const { port } = await tunnelServer(t, (socket) => {
    socket.write(`${SWITCHING}hello`);
    socket.on('data', (d: Buffer) => {
      read.push(d.toString());
      if (read.join('').includes('ping')) socket.write('pong');
    });
  });
  const stream = await streamTo(t, port);
  const h = await responseOf(stream);
  t.is(Number(h[':status']), 200);
  t.is(h['sec-websocket-accept'], 'abc');
  t.false('connection' in h);
  t.false('upgrade' in h);
  t.is(await readUntil(stream, 'hello'), 'hello');
  stream.write('ping');
  t.is(await readUntil(stream, 'pong'), 'pong');
  t.is(read.join(''), 'ping');
  stream.close(constants.NGHTTP2_CANCEL);
});

test('a refusal (403 with a body, then end) reaches the client as 403 and the body; the stream and the socket close though the client sent no end', async (t) => {
  t.timeout(20_000);
  const body = '{"kind":"Status","code":403}';
  const { port, sockets } = await tunnelServer(t, (socket) => {
    socket.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
  });
  const stream = await streamTo(t, port, 'SPDY/3.1');
  const h = await responseOf(stream);
  t.is(Number(h[':status']), 403);
  t.is(h['content-type'], 'application/json');
  t.is(await readToEnd(stream), body);
  // A stream left open would count against the connection's concurrent streams for good, and
  // hold the connection's graceful close.
  await closed(stream);
  t.is(stream.rstCode, constants.NGHTTP2_NO_ERROR);
  await closed(sockets[0]);
});

test('a head split across writes is sent once complete, with what follows it', async (t) => {
  t.timeout(20_000);
  const { port } = await tunnelServer(t, (socket) => {
    socket.write(SWITCHING.slice(0, 20));
    socket.write(SWITCHING.slice(20, SWITCHING.length - 1));
    socket.write(`${SWITCHING.slice(-1)}after`);
    socket.end();
  });
  const stream = await streamTo(t, port);
  stream.end();
  const h = await responseOf(stream);
  t.is(Number(h[':status']), 200);
  t.is(h['sec-websocket-accept'], 'abc');
  t.is(await readToEnd(stream), 'after');
});

test('ended before any answer: the client sees 502, and the stream closes', async (t) => {
  t.timeout(20_000);
  const { port, sockets } = await tunnelServer(t, (socket) => socket.end());
  const stream = await streamTo(t, port);
  t.is(Number((await responseOf(stream))[':status']), 502);
  stream.resume();
  await closed(stream);
  await closed(sockets[0]);
});

test('an answer head over 64 KiB fails the socket and resets the stream', async (t) => {
  t.timeout(20_000);
  const errors: Error[] = [];
  const { port, sockets } = await tunnelServer(t, (socket) => {
    socket.on('error', (e) => errors.push(e));
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nX-Long: ${'a'.repeat(64 * 1024)}\r\n`);
  });
  const stream = await streamTo(t, port);
  stream.on('error', () => undefined);
  await closed(stream);
  t.is(stream.rstCode, constants.NGHTTP2_INTERNAL_ERROR);
  await closed(sockets[0]);
  t.deepEqual(errors.map((e) => e.message), ['the upgrade answer head is over 64 KiB']);
});

test('the client resetting the stream destroys the socket, though the handler has read nothing', async (t) => {
  t.timeout(20_000);
  // Not reading: the socket cannot see an end first, only the reset closes it.
  const { port, sockets } = await tunnelServer(t, (socket) => socket.write(SWITCHING));
  const stream = await streamTo(t, port);
  await responseOf(stream);
  stream.close(constants.NGHTTP2_CANCEL);
  await closed(sockets[0]);
  t.true(sockets[0].destroyed);
});

test('a clean end from both sides closes both ends without a reset', async (t) => {
  t.timeout(20_000);
  const { port, sockets } = await tunnelServer(t, (socket) => {
    socket.write(SWITCHING);
    let got = '';
    socket.on('data', (d: Buffer) => (got += d.toString()));
    // A last write larger than the client's stream window: all of it arrives before the end.
    socket.on('end', () => socket.end(`bye ${got} ${'x'.repeat(1 << 20)}`));
  });
  const stream = await streamTo(t, port);
  await responseOf(stream);
  stream.end('last words');
  t.is(await readToEnd(stream), `bye last words ${'x'.repeat(1 << 20)}`);
  await closed(stream);
  t.is(stream.rstCode, constants.NGHTTP2_NO_ERROR);
  await closed(sockets[0]);
  t.true(sockets[0].readableEnded && sockets[0].writableFinished);
});

test('an end() after the socket closed does nothing but call its callback, with no error built (the WebSocket library ends twice)', async (t) => {
  const { port, sockets } = await tunnelServer(t, (socket) => {
    socket.write(SWITCHING);
    socket.resume();
    socket.end();
  });
  const stream = await streamTo(t, port);
  await responseOf(stream);
  stream.end();
  await closed(sockets[0]);
  const errors: unknown[] = [];
  sockets[0].on('error', (e) => errors.push(e));
  const answered = new Promise<unknown[]>((resolve) => sockets[0].end((...args: unknown[]) => resolve(args)));
  // Node's Writable.end would hand the callback an ERR_STREAM_ALREADY_FINISHED built for nothing.
  t.deepEqual(await answered, []);
  t.deepEqual(errors, []);
});
