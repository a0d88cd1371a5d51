/**
 * Fixtures of the tests of upgrades tunnelled over HTTP/2 (common/stream/h2-tunnel.ts): a test
 * PKI, a node agent's server (the real NodeServer), an HTTP/2 client that waits for the server's
 * settings, extended CONNECT requests, and waits on events (never on time).
 */
import { once, type EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { connect, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Log } from '../../agent/platform/logger';
import { RequestAuthenticator } from '../../agent/server/authenticator';
import { NodeServer } from '../../agent/server/node-server';
import type { NodeRequestAttributes } from '../../agent/server/request-attributes';
import { createCA, issue, type KeyPairPem } from '../../apiserver/pki/certs';

export interface TestPki {
  ca: KeyPairPem;
  /** Serves 127.0.0.1 and localhost. */
  server: KeyPairPem;
  /** A client certificate of `ca`: CN=bob. */
  client: KeyPairPem;
  /** A client certificate of `ca`: CN=eve (authenticated, not authorized by fakeAgent). */
  eve: KeyPairPem;
  /** A client certificate of another CA (CN=bob as well): presented but not verified. */
  stranger: KeyPairPem;
}

let pki: Promise<TestPki> | undefined;

/** One PKI per test process (key generation is real work). */
export function testPki(): Promise<TestPki> {
  pki ??= (async () => {
    const validityMs = 3_600_000;
    const ca = await createCA('svc-test-h2-ca');
    const other = await createCA('svc-test-other-ca');
    return {
      ca,
      server: await issue(ca, { commonName: 'node-1', ips: ['127.0.0.1'], dnsNames: ['localhost'], usage: 'server', validityMs }),
      client: await issue(ca, { commonName: 'bob', usage: 'client', validityMs }),
      eve: await issue(ca, { commonName: 'eve', usage: 'client', validityMs }),
      stranger: await issue(other, { commonName: 'bob', usage: 'client', validityMs }),
    };
  })();
  return pki;
}

/** An HTTP/2 connection to 127.0.0.1:port (server certificate not verified), resolved once the server's settings are in. */
export async function h2Client(port: number, cert?: KeyPairPem): Promise<ClientHttp2Session> {
  const session = connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false, ...(cert ? { cert: cert.certPem, key: cert.keyPem } : {}) });
  await once(session, 'remoteSettings'); // rejects on an 'error' first
  return session;
}

/** An extended CONNECT stream (RFC 8441) for path with the given upgrade token and extra headers. */
export function extendedConnect(session: ClientHttp2Session, path: string, protocol: string, headers: OutgoingHttpHeaders = {}): ClientHttp2Stream {
  return session.request({ ':method': 'CONNECT', ':protocol': protocol, ':scheme': 'https', ':path': path, ':authority': 'node-1', ...headers }, { endStream: false });
}

/** The response headers of a client stream. */
export async function responseOf(stream: ClientHttp2Stream): Promise<IncomingHttpHeaders> {
  const [h] = await once(stream, 'response'); // rejects on an 'error' first
  return h as IncomingHttpHeaders;
}

/** Everything a readable delivers until its end. */
export async function readToEnd(r: NodeJS.ReadableStream): Promise<string> {
  let out = '';
  for await (const chunk of r) out += (chunk as Buffer).toString();
  return out;
}

/** Resolves once the emitter has closed (at once if it already has), whether or not it failed first. */
export function closed(e: EventEmitter & { closed?: boolean }): Promise<void> {
  if (e.closed) return Promise.resolve();
  return new Promise((resolve) => e.once('close', () => resolve()));
}

const quiet: Log = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

export interface FakeAgent {
  port: number;
  /** What the authorizer was asked, in order. */
  seen: NodeRequestAttributes[];
  /** Who it was asked for. */
  users: string[];
  /** The requests that reached the upgrade handler. */
  upgraded: IncomingMessage[];
}

/**
 * A node agent's server: the real NodeServer on 127.0.0.1 (TLS with the test PKI; HTTP/1.1 and
 * HTTP/2, or with http1Only an https server calling its handlers), authenticating by client
 * certificate of the test CA and allowing bob. Routes: /checkpoint/ answers its method and URL;
 * /exec/ upgrades, answering 101 with X-Stream-Protocol-Version and "hello" in one write, then
 * "echo <first bytes read>" and its end. Closed at the end of the test.
 */
export async function fakeAgent(t: { teardown(fn: () => Promise<void>): void }, o: { http1Only?: boolean; h2IdleMs?: number } = {}): Promise<FakeAgent> {
  const pki = await testPki();
  const seen: NodeRequestAttributes[] = [];
  const users: string[] = [];
  const upgraded: IncomingMessage[] = [];
  const ns = new NodeServer({
    nodeName: 'node-1',
    ...(o.h2IdleMs ? { h2IdleMs: o.h2IdleMs } : {}),
    authenticator: new RequestAuthenticator({ x509: true, anonymous: false }),
    authorizer: { authorize: (u, a) => (seen.push(a), users.push(u.username), Promise.resolve({ allowed: u.username === 'bob', reason: '' })) },
    log: quiet,
    routes: [
      { prefix: '/checkpoint/', handler: (req, res) => (res.writeHead(200).end(`checkpointed ${req.method} ${req.url}`), Promise.resolve()) },
      {
        prefix: '/exec/',
        handler: () => Promise.resolve({}),
        upgrade: (req, socket) => {
          upgraded.push(req);
          socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${req.headers.upgrade}\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\n\r\nhello`);
          socket.once('data', (d: Buffer) => socket.end(`echo ${d.toString()}`));
          return Promise.resolve();
        },
      },
    ],
  });
  if (!o.http1Only) {
    const port = await ns.start({ address: '127.0.0.1', port: 0, certPem: pki.server.certPem, keyPem: pki.server.keyPem, clientCaPem: pki.ca.certPem });
    t.teardown(() => ns.close());
    return { port, seen, users, upgraded };
  }
  const server = createHttpsServer({ cert: pki.server.certPem, key: pki.server.keyPem, ca: pki.ca.certPem, requestCert: true, rejectUnauthorized: false }, (req, res) => void ns.handle(req, res));
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => void ns.handleUpgrade(req, socket, head));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(async () => {
    server.closeAllConnections();
    await ns.close();
    await new Promise<void>((r) => server.close(() => r()));
  });
  return { port: (server.address() as AddressInfo).port, seen, users, upgraded };
}
