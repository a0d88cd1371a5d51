/**
 * Fixtures of the tests of upgrades tunnelled over HTTP/2 (common/stream/h2-tunnel.ts): a test
 * PKI, an HTTP/2 client that waits for the server's settings, extended CONNECT requests, and
 * waits on events (never on time).
 */
import { once, type EventEmitter } from 'node:events';
import { connect, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2';
import { createCA, issue, type KeyPairPem } from '../../apiserver/pki/certs';

export interface TestPki {
  ca: KeyPairPem;
  /** Serves 127.0.0.1 and localhost. */
  server: KeyPairPem;
  /** A client certificate of `ca`: CN=bob. */
  client: KeyPairPem;
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

/** Resolves once the emitter has closed (at once if it already has). */
export function closed(e: EventEmitter & { closed?: boolean; destroyed?: boolean }): Promise<void> {
  if (e.closed) return Promise.resolve();
  return once(e, 'close').then(() => undefined);
}
