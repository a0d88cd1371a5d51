/**
 * Byte-transparent proxying of an HTTP Upgrade (WebSocket or SPDY/3.1) to a backend, as
 * upstream's UpgradeAwareHandler: the request goes to the backend with the client's upgrade
 * headers (its credentials never: see forwardedHeaders); a 101 from the backend is written back
 * to the client as received, then the two sockets are piped both ways without reading frames. Any
 * other answer of the backend (its 400/403/404 Status) is passed to the client as it came. Both
 * sockets end together: a clean end of either once its last bytes are through, at once when either
 * fails, when no byte has moved either way for the idle timeout, or when the server shuts down.
 * Differs from upstream kube-apiserver 1.30+: upstream translates a client's WebSocket v5 stream
 * to SPDY toward the kubelet (its StreamTranslator); svc-node speaks both protocols itself, so
 * every protocol is passed through unchanged. A target with `sessions` (exec and attach to node
 * agents) goes as a stream of the agent's shared HTTP/2 connection when the agent takes one
 * (agent-sessions.ts, ../../common/stream/h2-tunnel.ts): the same bytes, no handshake per stream.
 */
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { createSecureContext, type SecureContext } from 'node:tls';
import type { Duplex } from 'node:stream';
import type { ClientHttp2Session, ClientHttp2Stream, IncomingHttpHeaders as H2Headers } from 'node:http2';
import { ApiError } from '../api/errors';
import { h2Headers, UPGRADE_METHOD_HEADER } from '../../common/stream/h2-tunnel';
import type { AgentSessions } from './agent-sessions';
import type { ResourceRequest } from './context';
import { forwardedHeaders } from './proxy-headers';
import { joinSockets } from '../../common/stream/socket-join';

/** Where an upgrade goes: the backend's address, path with query, and TLS settings (https only). */
export interface UpgradeTarget {
  scheme: 'http' | 'https';
  host: string;
  port: number;
  /** Path and query, already encoded. */
  path: string;
  /** The client certificate presented to the backend (the kubelet-client pair for agents). */
  cert?: { certPem: string; keyPem: string };
  /** CA bundle verifying the backend; undefined: not verified (agents' self-signed certificates, as upstream's default). */
  caPem?: string;
  /** Named in errors: "the node agent of n1". */
  describe: string;
  /** When set (https only), the stream goes over the backend's shared HTTP/2 connection if it takes tunnelled upgrades. */
  sessions?: AgentSessions;
}

/** Limits of a proxied stream. */
export interface UpgradeLimits {
  /** No byte in either direction this long ends the stream (upstream's streamingConnectionIdleTimeout: 4 h). */
  idleTimeoutMs: number;
  /** How long the backend gets to answer the upgrade (default 30 s). */
  handshakeTimeoutMs?: number;
}

export const DEFAULT_STREAM_IDLE_MS = 4 * 60 * 60 * 1000;

/**
 * The TLS client side of upgrades, one per client certificate and CA: the parsed context (parsing
 * the PEM key and certificates for every stream cost more than a resumed handshake) and an agent
 * caching TLS sessions. Upgraded connections are never pooled (each leaves the agent once
 * upgraded), but a stream to an agent seen before resumes its session instead of a full handshake
 * (an exec's round trip is mostly handshakes). The few newest pairs are kept (the kubelet-client
 * certificate changes only when rotated).
 */
const TLS_CLIENTS = new Map<string, { secureContext: SecureContext; agent: HttpsAgent }>();
const MAX_TLS_CLIENTS = 8;

function tlsClient(target: UpgradeTarget): { secureContext: SecureContext; agent: HttpsAgent } {
  const key = `${target.cert?.certPem ?? ''}\0${target.cert?.keyPem ?? ''}\0${target.caPem ?? ''}`;
  let c = TLS_CLIENTS.get(key);
  if (!c) {
    c = {
      secureContext: createSecureContext({ ...(target.cert ? { cert: target.cert.certPem, key: target.cert.keyPem } : {}), ...(target.caPem ? { ca: target.caPem } : {}) }),
      agent: new HttpsAgent({ keepAlive: false, maxCachedSessions: 256 }),
    };
    TLS_CLIENTS.set(key, c);
    if (TLS_CLIENTS.size > MAX_TLS_CLIENTS) TLS_CLIENTS.delete(TLS_CLIENTS.keys().next().value as string);
  }
  return c;
}

/** The request headers an upgrade forwards: forwardedHeaders' set, duplicates kept (SPDY's X-Stream-Protocol-Version lists one protocol a line), plus Connection/Upgrade. */
export function upgradeHeaders(req: IncomingMessage): OutgoingHttpHeaders {
  const allowed = forwardedHeaders(req.headers);
  const out: Record<string, string[]> = {};
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i].toLowerCase();
    if (!(name in allowed)) continue;
    (out[name] ??= []).push(req.rawHeaders[i + 1]);
  }
  const headers: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(out)) headers[k] = v.length === 1 ? v[0] : v;
  headers.connection = 'Upgrade';
  headers.upgrade = req.headers.upgrade ?? '';
  return headers;
}

/** The head of a 101 answer as the backend sent it (raw header names and order). */
export function switchingHead(res: IncomingMessage): string {
  let head = `HTTP/1.1 101 ${res.statusMessage || 'Switching Protocols'}\r\n`;
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) head += `${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}\r\n`;
  return `${head}\r\n`;
}

/**
 * Proxies r's upgrade to target; resolves when the stream has ended (both sockets closed), or
 * after a non-101 answer of the backend has been passed on. Rejects (before anything was written
 * to the client) when the backend cannot be reached: a 503 naming it.
 */
export async function proxyUpgrade(r: ResourceRequest, target: UpgradeTarget, limits: UpgradeLimits): Promise<void> {
  if (!r.upgrade) throw new ApiError('BadRequest', 'Upgrade request required');
  if (target.sessions && target.scheme === 'https') {
    const timeoutMs = limits.handshakeTimeoutMs ?? 30_000;
    const c = tlsClient(target);
    const credentialsKey = `${target.cert?.certPem ?? ''}\0${target.caPem ?? ''}`;
    const s = await target.sessions.acquire({ host: target.host, port: target.port, secureContext: c.secureContext, verify: target.caPem !== undefined, credentialsKey }, timeoutMs).catch((e: unknown) => {
      throw unreachable(target, e as Error);
    });
    if (s) return tunnelUpgrade(r, target, s.session, limits, () => target.sessions!.suspect(s.session)).finally(s.release);
  }
  return upgradeOwnConnection(r, target, limits);
}

function unreachable(target: UpgradeTarget, err: Error): ApiError {
  return new ApiError('ServiceUnavailable', `cannot reach ${target.describe} at ${target.host}:${target.port}: ${err.message}`);
}

/** The upgrade over a connection of its own (HTTP/1.1). */
function upgradeOwnConnection(r: ResourceRequest, target: UpgradeTarget, limits: UpgradeLimits): Promise<void> {
  const client = r.upgrade!;
  return new Promise<void>((resolve, reject) => {
    const tls = target.scheme === 'https';
    const options = {
      host: target.host,
      port: target.port,
      path: target.path,
      method: r.req.method ?? 'GET',
      headers: upgradeHeaders(r.req),
      ...(tls ? tlsClient(target) : { agent: false as const }),
      timeout: limits.handshakeTimeoutMs ?? 30_000,
      ...(tls ? { rejectUnauthorized: target.caPem !== undefined } : {}),
    };
    const up = tls ? httpsRequest(options) : httpRequest(options);
    const done = cancelledWithClient(r, up);
    up.on('timeout', () => up.destroy(new Error(`no answer to the upgrade within ${options.timeout} ms`)));
    up.on('error', (err) => {
      done();
      if (r.res.headersSent || client.socket.destroyed) {
        client.socket.destroy();
        resolve();
      } else reject(unreachable(target, err));
    });
    up.on('response', (res) => {
      done();
      passRefusal(r, res.statusCode ?? 502, res.headers, res).then(resolve, resolve);
    });
    up.on('upgrade', (res, backend, backendHead) => {
      done();
      up.setTimeout(0);
      splice(r, client.socket, client.head, backend, switchingHead(res), backendHead, limits.idleTimeoutMs).then(resolve, resolve);
    });
    up.end();
  });
}

/**
 * Until the backend answers, the request to it is cancelled when the client leaves or the server
 * shuts down; returns what stops that (called once the answer is in).
 */
function cancelledWithClient(r: ResourceRequest, backend: { destroy(): void }): () => void {
  const cancel = () => backend.destroy();
  r.upgrade!.socket.once('close', cancel);
  r.signal.addEventListener('abort', cancel, { once: true });
  return () => {
    r.upgrade!.socket.off('close', cancel);
    r.signal.removeEventListener('abort', cancel);
  };
}

/** The backend refused the upgrade: its status and body go to the client as they are; resolves when passed on. */
function passRefusal(r: ResourceRequest, status: number, received: IncomingMessage['headers'] | H2Headers, body: NodeJS.ReadableStream): Promise<void> {
  const headers: OutgoingHttpHeaders = {};
  for (const [h, v] of Object.entries(received)) if (v !== undefined && !h.startsWith(':') && !['connection', 'keep-alive', 'transfer-encoding', 'upgrade'].includes(h)) headers[h] = v;
  r.res.writeHead(status, headers);
  body.pipe(r.res);
  return new Promise((resolve) => {
    body.on('end', () => resolve());
    body.on('error', () => {
      r.upgrade?.socket.destroy();
      resolve();
    });
  });
}

/**
 * The upgrade as an extended CONNECT stream of the agent's HTTP/2 connection: the client's
 * request headers go as they came (its method in UPGRADE_METHOD_HEADER), the agent's 200 is the
 * client's 101 (with the agent's answer headers: the WebSocket accept key, the chosen protocol),
 * any other answer is passed on; then the client's socket and the stream are joined byte for byte.
 * `unanswered` is told when the agent did not answer within the handshake timeout.
 */
function tunnelUpgrade(r: ResourceRequest, target: UpgradeTarget, session: ClientHttp2Session, limits: UpgradeLimits, unanswered: () => void): Promise<void> {
  const client = r.upgrade!;
  const protocol = String(r.req.headers.upgrade ?? '').trim();
  const timeoutMs = limits.handshakeTimeoutMs ?? 30_000;
  return new Promise<void>((resolve, reject) => {
    // Shut down while the connection was being set up: the abort below would never be heard.
    if (r.signal.aborted) {
      reject(unreachable(target, new Error('the request was cancelled')));
      return;
    }
    let stream: ClientHttp2Stream;
    try {
      stream = session.request(
        // Content-Length describes the upgrade request's own (empty) body, not the tunnel: on a
        // CONNECT stream it would cap what the client may send (kubectl's SPDY POST says 0).
        { ...h2Headers(upgradeHeaders(r.req)), 'content-length': undefined, ':method': 'CONNECT', ':protocol': protocol, ':scheme': 'https', ':path': target.path, ':authority': `${target.host}:${target.port}`, [UPGRADE_METHOD_HEADER]: r.req.method ?? 'GET' },
        { endStream: false },
      );
    } catch (e) {
      reject(unreachable(target, e as Error));
      return;
    }
    const detach = cancelledWithClient(r, stream);
    const done = () => {
      detach();
      stream.setTimeout(0);
    };
    stream.setTimeout(timeoutMs, () => {
      stream.destroy(new Error(`no answer to the upgrade within ${timeoutMs} ms`));
      unanswered();
    });
    // Until the agent's answer, the stream's failure is the proxy's (a 503 while the client has
    // been told nothing); after it, the splice's, which cuts the client.
    let answered = false;
    const failed = (err: Error) => {
      if (answered) return;
      answered = true;
      done();
      if (r.res.headersSent || client.socket.destroyed) {
        client.socket.destroy();
        resolve();
      } else reject(unreachable(target, err));
    };
    stream.on('error', failed);
    // Closed without an answer and without an error: destroyed here (the client left, the server is
    // shutting down) or closed by the agent with NO_ERROR or CANCEL; no 'response' or 'error' follows.
    stream.once('close', () => failed(new Error(`the stream was closed before an answer (code ${stream.rstCode})`)));
    stream.once('response', (h) => {
      answered = true;
      done();
      const status = Number(h[':status']);
      if (status !== 200) {
        passRefusal(r, status, h, stream).then(resolve, resolve);
        return;
      }
      let head = `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${protocol}\r\n`;
      for (const [name, v] of Object.entries(h)) {
        if (name.startsWith(':') || name === 'date' || v === undefined) continue;
        for (const one of Array.isArray(v) ? v : [v]) head += `${name}: ${one}\r\n`;
      }
      splice(r, client.socket, client.head, stream, `${head}\r\n`, Buffer.alloc(0), limits.idleTimeoutMs).then(resolve, resolve);
    });
  });
}

/** Pipes client and backend both ways until either ends, fails or idles (../../common/stream/socket-join.ts); resolves when both are closed. */
function splice(r: ResourceRequest, client: Duplex, clientHead: Buffer, backend: Socket | ClientHttp2Stream, head101: string, backendHead: Buffer, idleMs: number): Promise<void> {
  // The ServerResponse the router bound to the socket must not write after this.
  r.res.statusCode = 101; // what the request metrics record, as upstream's
  r.res.detachSocket(client as never);
  backend.setTimeout(0);
  client.write(head101);
  if (backendHead.length) client.write(backendHead);
  if (clientHead.length) backend.write(clientHead);
  const joined = joinSockets(client, backend);
  const idle = setTimeout(() => joined.cut(), idleMs);
  const touch = () => idle.refresh();
  client.on('data', touch);
  backend.on('data', touch);
  const onAbort = () => joined.cut();
  r.signal.addEventListener('abort', onAbort, { once: true });
  return joined.closed.then(() => {
    clearTimeout(idle);
    r.signal.removeEventListener('abort', onAbort);
  });
}
