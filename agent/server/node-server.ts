/**
 * The agent's HTTPS server (upstream's kubelet server on --address:--port): TLS with the serving
 * certificate, client certificates requested (and checked by the authenticator, not the TLS layer,
 * so token and anonymous callers can connect), every request authenticated (401 Status on failure)
 * and authorized for nodes/<sub-resource> (403 Status on denial) before it is routed by path
 * prefix to a handler; unknown paths are 404. It is the agent's one HTTP error edge: handlers
 * throw, and answer() turns what they throw into the reply (status-reply.ts).
 */
import { createSecureServer, type Http2SecureServer, type Http2ServerRequest, type Http2ServerResponse, type Http2Session, type Http2Stream } from 'node:http2';
import { createSecureContext, type SecureContextOptions, type TLSSocket } from 'node:tls';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { AgentError, ForbiddenError, InternalError, InvalidArgumentError, MethodNotAllowedError, NotFoundError, UnauthorizedError } from '../errors';
import type { Log } from '../platform/logger';
import { pathLabel, type RequestObserver } from '../metrics/agent-metrics';
import type { Authenticator } from './authenticator';
import type { Authorizer } from './authorizer';
import { requestAttributes } from './request-attributes';
import { replyError, replyErrorOnSocket, replyJson, type ErrorBody } from './status-reply';
import { H2UpgradeSocket, tunnelledRequest } from './h2-upgrade-socket';
import { serverCipherPreference } from '../../common/tls-ciphers';

/**
 * HTTP/2 settings of the server: extended CONNECT for the API server's tunnelled upgrades
 * (../../common/stream/h2-tunnel.ts), and a stream window large enough that an exec's stdin (a
 * `kubectl cp` into the pod) is not held to 64 KiB per round trip.
 */
const H2_SETTINGS = { enableConnectProtocol: true, initialWindowSize: 1 << 20, maxConcurrentStreams: 1000 };
/** Each HTTP/2 connection's receive window over all its streams. */
const H2_CONNECTION_WINDOW = 8 << 20;
/**
 * An HTTP/2 connection without streams this long is closed (GOAWAY), as https.Server closes idle
 * keep-alive connections: nobody holds connections open for free. Longer than the API server's own
 * idle close (90 s), which normally comes first. A connection's open streams keep it, however
 * quiet (an exec shell waiting for input; each stream has its own idle cut).
 */
const H2_IDLE_MS = 120_000;

/** Closes `session` once it has had no open stream for idleMs. */
function closeWhenIdle(session: Http2Session, idleMs: number): void {
  let open = 0;
  let idle: NodeJS.Timeout | undefined;
  const arm = (): void => {
    idle = setTimeout(() => session.close(), idleMs);
    idle.unref();
  };
  arm();
  session.on('stream', (stream: Http2Stream) => {
    open++;
    clearTimeout(idle);
    stream.once('close', () => {
      if (--open === 0 && !session.closed) arm();
    });
  });
  session.once('close', () => clearTimeout(idle));
}

/**
 * Serves one request: resolves a JSON body (answered 200) or undefined when it wrote the answer
 * itself (streams, text); fails by throwing, an AgentError for answers such as 404 or 405.
 */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => Promise<unknown>;

/**
 * Serves one upgrade request (exec, attach, port-forward) on its raw socket, after authentication
 * and authorization: answers 101 and streams, or writes its refusal on the socket. Fails by
 * throwing (before anything was written), answered like a handler's failure.
 */
export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => Promise<void>;

export interface Route {
  /** Path prefix with its trailing slash ("/checkpoint/"), or an exact path without one. */
  prefix: string;
  handler: RequestHandler;
  /** For requests asking for a protocol upgrade (Connection: Upgrade); without it they are 404. */
  upgrade?: UpgradeHandler;
  /** How errors are answered (default a Status body). */
  errors?: ErrorBody;
}

/**
 * Runs a handler and answers what it resolves or throws (the error edge). A throw that is not an
 * AgentError is a bug and is logged. Never rejects.
 */
export async function answer(handler: RequestHandler, req: IncomingMessage, res: ServerResponse, o: { errors?: ErrorBody; log?: Log; path?: string } = {}): Promise<void> {
  try {
    const body = await handler(req, res);
    if (body !== undefined && !res.headersSent) replyJson(res, 200, body);
  } catch (e) {
    if (!(e instanceof AgentError)) o.log?.warn({ path: o.path ?? req.url, error: (e as Error).message }, 'request failed');
    replyError(res, e, o.errors);
  }
}

export interface NodeServerOptions {
  nodeName: string;
  authenticator: Authenticator;
  authorizer: Authorizer;
  routes: readonly Route[];
  log: Log;
  /** Told every answered request (metrics); optional. */
  observer?: RequestObserver;
  /** Milliseconds, for request latencies; defaults to performance.now. */
  now?: () => number;
  /** An HTTP/2 connection without open streams this long is closed (default H2_IDLE_MS). */
  h2IdleMs?: number;
}

export interface ListenOptions {
  address: string;
  /** 0 picks a free port. */
  port: number;
  certPem: string;
  keyPem: string;
  /** CA bundle client certificates are verified against; undefined accepts none. */
  clientCaPem?: string;
  minVersion?: 'TLSv1.2' | 'TLSv1.3';
}

function matches(path: string, prefix: string): boolean {
  return prefix.endsWith('/') ? path.startsWith(prefix) : path === prefix;
}

export class NodeServer {
  private server: Http2SecureServer | undefined;
  private listen: ListenOptions | undefined;
  /** Upgraded connections (streams): the HTTP server no longer tracks them, so close() cuts them itself. */
  private readonly upgraded = new Set<Duplex>();
  /** Every open TLS connection, HTTP/1.1 and HTTP/2 alike: close() cuts them (the HTTP/2 server has no closeAllConnections). */
  private readonly connections = new Set<TLSSocket>();

  constructor(private readonly o: NodeServerOptions) {
    this.endpoints = [...new Set(o.routes.map((r) => '/' + (r.prefix.split('/')[1] ?? '')))];
  }

  private readonly endpoints: string[];

  /** Handles one request: authn, authz, route. Never rejects; failures are answered. */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const observer = this.o.observer;
    if (!observer) return this.serve(req, res);
    const now = this.o.now ?? (() => performance.now());
    const started = now();
    // Recorded when the answer is complete (a log stream's latency is its lifetime, as upstream's).
    res.once('close', () => {
      let path = '/';
      try {
        path = new URL(req.url ?? '/', 'https://node.invalid').pathname;
      } catch {
        // counted as "other"
      }
      observer.request(req.method ?? '', pathLabel(path, this.endpoints), res.statusCode, (now() - started) / 1000);
    });
    return this.serve(req, res);
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const admitted = await this.admit(req);
    if ('error' in admitted) {
      replyError(res, admitted.error);
      return;
    }
    const route = admitted.route;
    await answer(route.handler, req, res, { log: this.o.log, path: admitted.path, ...(route.errors ? { errors: route.errors } : {}) });
  }

  /** Handles one upgrade request: authn, authz, route to its upgrade handler; refusals are written on the socket. Never rejects. */
  async handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => socket.destroy());
    this.upgraded.add(socket);
    socket.once('close', () => this.upgraded.delete(socket));
    const admitted = await this.admit(req);
    if ('error' in admitted) {
      replyErrorOnSocket(socket, admitted.error);
      return;
    }
    const { route, path } = admitted;
    if (!route.upgrade) {
      replyErrorOnSocket(socket, new NotFoundError(`the server could not find the requested resource (${path})`));
      return;
    }
    try {
      await route.upgrade(req, socket, head);
    } catch (e) {
      if (!(e instanceof AgentError)) this.o.log.warn({ path, error: (e as Error).message }, 'upgrade request failed');
      replyErrorOnSocket(socket, e);
    }
  }

  /** Authenticates, authorizes and routes a request; resolves the route, or the error to answer. */
  private async admit(req: IncomingMessage): Promise<{ route: Route; path: string } | { error: AgentError }> {
    let path: string;
    try {
      path = new URL(req.url ?? '/', 'https://node.invalid').pathname;
    } catch {
      return { error: new InvalidArgumentError('malformed request URL') };
    }
    const authn = await this.o.authenticator.authenticate(req);
    if (!authn.ok) {
      this.o.log.info({ path, reason: authn.reason }, 'unauthenticated request refused');
      return { error: new UnauthorizedError('Unauthorized') };
    }
    const user = authn.user;
    const attrs = requestAttributes(req.method, path, this.o.nodeName);
    try {
      let d = await this.o.authorizer.authorize(user, attrs);
      if (!d.allowed && attrs.fallback) d = await this.o.authorizer.authorize(user, { ...attrs, subresource: attrs.fallback });
      if (!d.allowed) {
        this.o.log.info({ user: user.username, groups: user.groups, verb: attrs.verb, subresource: attrs.subresource, reason: d.reason }, 'request forbidden');
        // Upstream's kubelet message, so operators see which permission is missing.
        return { error: new ForbiddenError(`Forbidden (user=${user.username}, verb=${attrs.verb}, resource=nodes, subresource=${attrs.subresource})`) };
      }
    } catch (e) {
      this.o.log.warn({ user: user.username, error: (e as Error).message }, 'authorization failed');
      return { error: new InternalError(`Authorization error (user=${user.username}, verb=${attrs.verb}, resource=nodes, subresource=${attrs.subresource})`) };
    }
    const route = this.o.routes.find((r) => matches(path, r.prefix));
    if (!route) return { error: new NotFoundError(`the server could not find the requested resource (${path})`) };
    return { route, path };
  }

  /**
   * Listens with TLS; resolves the bound port. Rejects when the address cannot be bound. HTTP/1.1
   * and HTTP/2 are both served (ALPN), as upstream's kubelet (Go's server) does; HTTP/2 also
   * carries the API server's tunnelled upgrades as extended CONNECT streams.
   */
  async start(l: ListenOptions): Promise<number> {
    this.listen = l;
    const server = createSecureServer({
      ...this.secureOptions(l.certPem, l.keyPem),
      requestCert: l.clientCaPem !== undefined,
      // The authenticator decides: an unverified certificate is a 401, no certificate may still carry a token.
      rejectUnauthorized: false,
      allowHTTP1: true,
      settings: H2_SETTINGS,
    });
    // What https.Server does by default for HTTP/1.1 keep-alive connections (the HTTP/2 server leaves it unset: never).
    (server as unknown as { keepAliveTimeout: number }).keepAliveTimeout = 5_000;
    server.on('request', (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => {
      // HTTP/2 requests come as the compatibility API's request and response, which the handlers use alike.
      void this.handle(req as IncomingMessage, res as ServerResponse);
    });
    // Upgrade requests (exec, attach, port-forward over SPDY or WebSocket) arrive here, not as requests.
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.handleUpgrade(req, socket, head));
    server.on('connect', (req: IncomingMessage | Http2ServerRequest, second: Duplex | Http2ServerResponse) => this.handleConnect(req, second));
    server.on('secureConnection', (socket: TLSSocket) => {
      // As https.Server does by default (the HTTP/2 server does not): a small answer is not held
      // back by Nagle's algorithm waiting for the ACK of the previous one.
      socket.setNoDelay(true);
      this.connections.add(socket);
      socket.once('close', () => this.connections.delete(socket));
    });
    server.on('session', (session: Http2Session) => {
      session.setLocalWindowSize(H2_CONNECTION_WINDOW);
      closeWhenIdle(session, this.o.h2IdleMs ?? H2_IDLE_MS);
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(l.port, l.address, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const addr = server.address();
    return typeof addr === 'object' && addr ? addr.port : l.port;
  }

  /**
   * A CONNECT request. Over HTTP/2 with :protocol, a tunnelled upgrade: served by the upgrade
   * handlers on the stream (h2-upgrade-socket.ts), with the same authentication (the connection's
   * certificate) and authorization as an upgrade of its own connection. Any other CONNECT is 405:
   * the agent is no forward proxy.
   */
  private handleConnect(req: IncomingMessage | Http2ServerRequest, second: Duplex | Http2ServerResponse): void {
    if (!('stream' in req)) {
      replyErrorOnSocket(second as Duplex, new MethodNotAllowedError('CONNECT is not served'));
      return;
    }
    const stream = req.stream;
    if (req.headers[':protocol'] === undefined) {
      stream.respond({ ':status': 405 });
      stream.end();
      return;
    }
    void this.handleUpgrade(tunnelledRequest(req.headers, stream.session?.socket), new H2UpgradeSocket(stream), Buffer.alloc(0));
  }

  private secureOptions(certPem: string, keyPem: string): SecureContextOptions {
    const l = this.listen!;
    // Go's cipher preference, as upstream's kubelet (common/tls-ciphers.ts).
    return { cert: certPem, key: keyPem, ...(l.clientCaPem ? { ca: l.clientCaPem } : {}), minVersion: l.minVersion ?? 'TLSv1.2', ...serverCipherPreference };
  }

  /**
   * Swaps the serving certificate for new connections (established ones keep theirs). Throws when
   * the pair is unusable (the key does not match, bad PEM); the old pair then stays.
   */
  setCertificate(certPem: string, keyPem: string): void {
    if (!this.server || !this.listen) throw new Error('the server is not listening');
    const opts = this.secureOptions(certPem, keyPem);
    // Built first so that a bad pair throws here rather than leaving the server without a context.
    createSecureContext(opts);
    this.server.setSecureContext(opts);
  }

  /** Serves until the signal aborts, then closes (open streams are cut). Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    if (!this.server) return;
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await this.close();
  }

  /** Stops listening and cuts open connections. Never rejects. */
  async close(): Promise<void> {
    const s = this.server;
    if (!s) return;
    this.server = undefined;
    for (const c of this.connections) c.destroy();
    this.connections.clear();
    for (const u of this.upgraded) u.destroy();
    this.upgraded.clear();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}
