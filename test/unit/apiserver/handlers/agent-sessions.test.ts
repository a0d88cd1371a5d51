import { once } from 'node:events';
import { createSecureServer, type ServerHttp2Session } from 'node:http2';
import { createServer as createHttpsServer } from 'node:https';
import { connect, createServer as createNetServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { createSecureContext } from 'node:tls';
import test, { type ExecutionContext } from 'ava';
import { AgentSessions, type SessionTarget } from '../../../../apiserver/handlers/agent-sessions';
import { freePort } from '../../../helpers/free-port';
import { closed, testPki } from '../../../helpers/h2-tunnel';

const target = (port: number, credentialsKey = ''): SessionTarget => ({ host: '127.0.0.1', port, secureContext: createSecureContext({}), verify: false, credentialsKey });

/** Listens on 127.0.0.1; closed (its connections cut) at the end of the test. */
async function listen<S extends Server>(t: ExecutionContext, server: S, sockets: Socket[]): Promise<number> {
  server.on('connection', (s: Socket) => sockets.push(s));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return (server.address() as AddressInfo).port;
}

/** An HTTP/2 server (TLS) that accepts extended CONNECT or not; its sessions are kept, in order. */
async function h2Server(t: ExecutionContext, enableConnectProtocol: boolean): Promise<{ port: number; sessions: ServerHttp2Session[]; sockets: Socket[] }> {
  const pki = await testPki();
  const sessions: ServerHttp2Session[] = [];
  const sockets: Socket[] = [];
  const server = createSecureServer({ cert: pki.server.certPem, key: pki.server.keyPem, settings: { enableConnectProtocol } });
  server.on('session', (s: ServerHttp2Session) => sessions.push(s));
  return { port: await listen(t, server, sockets), sessions, sockets };
}

test('acquires share one connection per endpoint and credentials', async (t) => {
  t.timeout(20_000);
  const { port, sessions } = await h2Server(t, true);
  const pool = new AgentSessions();
  t.teardown(() => pool.closeAll());
  const a = await pool.acquire(target(port), 5_000);
  const b = await pool.acquire(target(port), 5_000);
  t.truthy(a && b);
  t.is(a!.session, b!.session);
  t.is(sessions.length, 1);
  // Other credentials: a connection of their own.
  const c = await pool.acquire(target(port, 'other-cert'), 5_000);
  t.not(c!.session, a!.session);
  t.is(sessions.length, 2);
});

type Leased = NonNullable<Awaited<ReturnType<AgentSessions['acquire']>>>;

/** A pool with a 20 ms idle time and two streams it gave on one connection to a new server. */
async function twoStreams(t: ExecutionContext): Promise<{ port: number; sessions: ServerHttp2Session[]; pool: AgentSessions; a: Leased; b: Leased }> {
  const { port, sessions } = await h2Server(t, true);
  const pool = new AgentSessions({ idleMs: 20 });
  t.teardown(() => pool.closeAll());
  const a = (await pool.acquire(target(port), 5_000))!;
  const b = (await pool.acquire(target(port), 5_000))!;
  return { port, sessions, pool, a, b };
}

test('a connection without streams for the idle time is closed; the next acquire opens a new one', async (t) => {
  t.timeout(20_000);
  const { port, sessions, pool, a, b } = await twoStreams(t);
  a.release();
  a.release(); // counted once
  b.release();
  await closed(sessions[0]);
  t.true(a.session.closed || a.session.destroyed);
  const c = (await pool.acquire(target(port), 5_000))!;
  t.not(c.session, a.session);
  t.is(sessions.length, 2);
  t.false(c.session.closed);
});

test('a connection still carrying a stream is not closed when another stream is released', async (t) => {
  t.timeout(20_000);
  const { port, sessions, pool, a, b } = await twoStreams(t);
  a.release();
  // A second connection, released, shows the idle time has passed (its server side closes).
  const other = (await pool.acquire(target(port, 'other'), 5_000))!;
  other.release();
  await closed(sessions[1]);
  t.false(a.session.closed || a.session.destroyed);
  t.is((await pool.acquire(target(port), 5_000))!.session, a.session);
  b.release();
});

/** Acquires against an agent that cannot take tunnels: undefined, remembered until fallbackMs has passed on the injected clock. */
async function fallsBack(t: ExecutionContext, port: number, connections: () => number): Promise<void> {
  let now = 1_000_000;
  const pool = new AgentSessions({ fallbackMs: 60_000, now: () => now });
  t.teardown(() => pool.closeAll());
  t.is(await pool.acquire(target(port), 5_000), undefined);
  t.is(connections(), 1);
  now += 59_000;
  t.is(await pool.acquire(target(port), 5_000), undefined);
  t.is(await pool.acquire(target(port, 'other-cert'), 5_000), undefined, 'the endpoint is remembered, whatever the credentials');
  t.is(connections(), 1);
  now += 2_000;
  t.is(await pool.acquire(target(port), 5_000), undefined);
  t.is(connections(), 2, 'asked again once the memory expired');
}

test('an HTTP/2 agent without extended CONNECT: undefined (HTTP/1.1), remembered for fallbackMs', async (t) => {
  t.timeout(20_000);
  const { port, sessions } = await h2Server(t, false);
  await fallsBack(t, port, () => sessions.length);
});

test('an HTTP/1.1-only agent: undefined (HTTP/1.1), remembered for fallbackMs', async (t) => {
  t.timeout(20_000);
  const pki = await testPki();
  const sockets: Socket[] = [];
  const server = createHttpsServer({ cert: pki.server.certPem, key: pki.server.keyPem }, (_req, res) => res.end('ok'));
  const port = await listen(t, server, sockets);
  await fallsBack(t, port, () => sockets.length);
});

test('an agent not reached (connection refused) is not remembered: once it listens, the next acquire connects', async (t) => {
  t.timeout(20_000);
  const port = await freePort();
  const pool = new AgentSessions();
  t.teardown(() => pool.closeAll());
  // Served over HTTP/1.1 this once, which reports the agent unreachable in its own words.
  t.is(await pool.acquire(target(port), 5_000), undefined);
  const pki = await testPki();
  const server = createSecureServer({ cert: pki.server.certPem, key: pki.server.keyPem, settings: { enableConnectProtocol: true } });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const s = await pool.acquire(target(port), 5_000);
  t.truthy(s, 'a restarted agent is tunnelled to at once, not after the fallback memory');
  s?.release();
  pool.closeAll();
});

test('an agent that accepts and never answers: acquire rejects after its timeout, the connection is cut and the next acquire connects again', async (t) => {
  t.timeout(20_000);
  const sockets: Socket[] = [];
  // Reads and discards (a socket nobody reads never sees the peer's end, nor closes).
  const port = await listen(t, createNetServer((s) => s.resume()), sockets);
  const pool = new AgentSessions();
  t.teardown(() => pool.closeAll());
  await t.throwsAsync(pool.acquire(target(port), 50), { message: 'no HTTP/2 settings within 50 ms' });
  await closed(sockets[0]);
  await t.throwsAsync(pool.acquire(target(port), 50), { message: 'no HTTP/2 settings within 50 ms' });
  t.is(sockets.length, 2, 'a new connection, not the one that timed out');
});

test('a connection the agent closes (GOAWAY, or cut) is not reused', async (t) => {
  t.timeout(20_000);
  const { port, sessions } = await h2Server(t, true);
  const pool = new AgentSessions();
  t.teardown(() => pool.closeAll());
  const a = (await pool.acquire(target(port), 5_000))!;
  const goaway = once(a.session, 'goaway');
  sessions[0].close();
  await goaway;
  const b = (await pool.acquire(target(port), 5_000))!;
  t.not(b.session, a.session);
  t.is(sessions.length, 2);
  a.release();
  sessions[1].destroy();
  await closed(b.session);
  const c = (await pool.acquire(target(port), 5_000))!;
  t.not(c.session, b.session);
  t.is(sessions.length, 3);
  b.release();
  c.release();
});

test('a suspect connection is kept when the agent answers a ping, dropped when it does not', async (t) => {
  t.timeout(20_000);
  const { port } = await h2Server(t, true);
  // A relay in front of the agent that can stop passing bytes: an agent gone without a FIN.
  let frozen = false;
  const relay = createNetServer((c) => {
    const up = connect(port, '127.0.0.1');
    c.on('data', (d: Buffer) => void (frozen || up.write(d)));
    up.on('data', (d: Buffer) => void (frozen || c.write(d)));
    c.on('close', () => up.destroy());
    up.on('close', () => c.destroy());
    c.on('error', () => c.destroy());
    up.on('error', () => up.destroy());
  });
  const relayPort = await listen(t, relay, []);
  const pingTimeoutMs = 100;
  const pool = new AgentSessions({ pingTimeoutMs });
  t.teardown(() => pool.closeAll());
  const s = (await pool.acquire(target(relayPort), 5_000))!;
  pool.suspect(s.session);
  // Pings are answered in order: once ours is, the pool's was.
  await new Promise<void>((resolve) => s.session.ping(() => resolve()));
  // A negative can only be watched for a while: three ping timeouts.
  await new Promise((r) => setTimeout(r, 3 * pingTimeoutMs));
  t.false(s.session.destroyed, 'a connection whose agent answered was dropped');
  frozen = true;
  pool.suspect(s.session);
  await closed(s.session);
  t.true(s.session.destroyed);
  // The next acquire dials anew (through the relay, thawed).
  frozen = false;
  const next = (await pool.acquire(target(relayPort), 5_000))!;
  t.not(next.session, s.session);
});
