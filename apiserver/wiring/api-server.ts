import { createServer, type Server } from 'node:https';
import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { ApiError } from '../api/errors';
import type { AdmissionChain } from '../admission/admission';
import type { UserInfo } from '../api/user';
import type { AuthorizerChain } from '../authz/chain';
import type { Auditor } from '../filters/audit/auditor';
import { servingTlsOptions } from './serving-tls';
import { mergeAggregated, mergeGroupList } from '../aggregator/discovery-merge';
import { mergeOpenApiV2, mergeOpenApiV3Index, remoteOpenApiV3 } from '../aggregator/remote-openapi';
import { proxyToRemote, type Aggregator } from '../aggregator/aggregator';
import type { RequestAudit } from '../filters/audit/request-audit';
import { CBOR_GATE } from '../config/flags';
import { gateOn } from '../config/feature-gates';
import type { ApiMetrics } from '../metrics/registry';
import type { ResourceRegistry } from '../registry/builtin';
import { deprecationWarning, type ResourceType } from '../registry/resource-type';
import type { ObjectStore } from '../store/object-store';
import type { WatchCache } from '../store/watch-cache';
import { handleCreate } from '../handlers/create';
import { warnOnError, type ResourceRequest } from '../handlers/context';
import { handleDelete, handleDeleteCollection } from '../handlers/delete';
import { handleGet } from '../handlers/get';
import { handleList } from '../handlers/list';
import { handleScale } from '../handlers/scale';
import { handlePatch } from '../handlers/patch';
import { handleUpdate } from '../handlers/update';
import { handleWatch } from '../handlers/watch';
import { aggregatedDiscovery } from '../server/aggregated-discovery';
import { Discovery, type SubresourceDoc } from '../server/discovery';
import { GroupAliases, servedError } from '../server/group-alias';
import { runChecks, type HealthCheck } from '../server/health';
import { openApiV2, openApiV3, openApiV3Index } from '../server/openapi';
import { OPENAPI_V2_PROTOBUF, openApiV2MediaType } from '../server/openapi-protobuf';
import { OpenApiV2Answers } from '../server/openapi-v2-answer';
import { parseRequestInfo, queryBool, reviewAlias, type RequestInfo } from '../server/request-info';
import { versionDocument, type ServerVersion } from '../server/version';
import { requestAttributes } from '../authz/attributes';
import { send, sendError } from '../server/respond';

export interface ApiServerOptions {
  /** Request metrics (recorded for every request) and GET /metrics. */
  metrics?: ApiMetrics;
  /** The aggregator (issue 22): remote group versions proxied to their servers; absent: none. */
  aggregator?: Aggregator;
  /** The audit pipeline (--audit-policy-file with a backend); absent: nothing is audited. */
  audit?: Auditor;
  host: string;
  port: number;
  tls: { certPem: string; keyPem: string };
  registry: ResourceRegistry;
  store: ObjectStore;
  cache: WatchCache;
  /** Resolves the request's user (after impersonation); rejects with 401. */
  authn: { authenticate(req: IncomingMessage): Promise<UserInfo> };
  authz: AuthorizerChain;
  admission: AdmissionChain;
  log: Logger;
  now: () => Date;
  /** Checks beyond ping, e.g. the store's. */
  checks: readonly HealthCheck[];
  /** Checks of /readyz only (a failing one must not make the process look dead), e.g. store-write. */
  readyChecks?: readonly HealthCheck[];
  /** --livez-grace-period: livez ignores failing checks (other than ping) this long after start. */
  livezGraceMs: number;
  /** --shutdown-delay-duration: readyz fails this long before the listener closes. */
  shutdownDelayMs: number;
  /** How long in-flight requests and open responses get to finish after that (default SHUTDOWN_DRAIN_MS). */
  shutdownDrainMs?: number;
  version: ServerVersion;
  /** Feature gates switched on (--feature-gates), e.g. AllowUnsafeMalformedObjectDeletion. */
  gates?: ReadonlySet<string>;
  /** Extra handlers for sub-resources, keyed "group/resource/subresource" (e.g. certificatesigningrequests approval). */
  subresources?: ReadonlyMap<string, (r: ResourceRequest) => Promise<void>>;
  /** Sub-resources discovery lists besides status, keyed "group/version/resource" of their parent (pods/eviction). */
  subresourceDocs?: ReadonlyMap<string, readonly SubresourceDoc[]>;
  /** Types that are created, never stored (the authorization reviews), keyed "group/version/resource": every verb goes to the handler. */
  virtual?: ReadonlyMap<string, (r: ResourceRequest) => Promise<void>>;
  /** --serve-k8s-io-groups: serve every svc.io group under its k8s.io name too (default true). */
  serveK8sIoGroups?: boolean;
}

/**
 * After the shutdown delay, how long requests in flight and responses still being sent get before
 * their connections are cut: 5 s. Watches end at once (the server's signal), so this bounds only
 * ordinary requests and peers that stopped reading. Upstream bounds the same phase by its
 * --request-timeout (60 s) for requests and --shutdown-watch-termination-grace-period (default 0)
 * for watches; ordinary requests here take well under a second, and a cut one is retried.
 */
export const SHUTDOWN_DRAIN_MS = 5_000;

/**
 * The HTTPS API server: TLS, then for every request authentication → authorization → (for
 * writes) admission inside the store → handler, with all errors rendered as Status objects.
 * run(signal) listens until the signal aborts, then shuts down gracefully (4.8).
 */
export class ApiServer {
  private server?: Server;
  private readonly discovery: Discovery;
  private readonly aliases: GroupAliases;
  private startedAt = 0;
  private shuttingDown = false;
  private readonly requests = new AbortController();
  private readonly openApiV2: OpenApiV2Answers;
  private inFlight = 0;
  private idle?: () => void;

  constructor(private readonly o: ApiServerOptions) {
    this.aliases = new GroupAliases(o.registry.groups().map((g) => g.name), o.serveK8sIoGroups ?? true);
    this.openApiV2 = new OpenApiV2Answers(o.now);
    this.discovery = new Discovery(
      () => this.documentTypes(),
      (t) => o.virtual?.has(`${this.aliases.canonicalOf(t.group) ?? t.group}/${t.version}/${t.resource}`) ?? false,
      (t) => this.aliases.isSecondName(t.group),
      (t) => o.subresourceDocs?.get(`${this.aliases.canonicalOf(t.group) ?? t.group}/${t.version}/${t.resource}`) ?? [],
    );
  }

  /** The types discovery and OpenAPI list: the registry's, plus their k8s.io views when served. */
  private documentTypes(): readonly ResourceType[] {
    return this.aliases.documentTypes(this.o.registry.served());
  }

  /** The bound port (after run has started listening). */
  get port(): number {
    return (this.server?.address() as AddressInfo | null)?.port ?? 0;
  }

  /** Listens; resolves `listening` once bound; the returned promise ends after graceful shutdown. */
  async run(signal: AbortSignal, listening?: () => void): Promise<void> {
    const o = this.o;
    const server = createServer(servingTlsOptions(o.tls), (req, res) => void this.handle(req, res));
    // Upgrade requests (exec, attach, port-forward, proxied WebSockets) take the same path, with a
    // response bound to their socket for errors; a handler that accepts the upgrade takes the socket.
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      socket.on('error', () => socket.destroy());
      const res = new ServerResponse(req);
      res.shouldKeepAlive = false;
      res.assignSocket(socket as Socket);
      res.on('finish', () => socket.end());
      void this.handle(req, res, { socket, head });
    });
    server.keepAliveTimeout = 65_000;
    server.headersTimeout = 70_000;
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(o.port, o.host, () => resolve());
    });
    this.startedAt = Date.now();
    o.log.info({ address: o.host, port: this.port }, 'serving securely');
    listening?.();
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
    });
    // Graceful shutdown: readyz fails first so load balancers drain, then stop accepting,
    // end long-running watches, and let in-flight requests finish, for at most SHUTDOWN_DRAIN_MS:
    // then every connection still open is cut (a peer that stopped reading would otherwise hold
    // its connection, and the server's close, forever).
    this.shuttingDown = true;
    o.log.info({ delayMs: o.shutdownDelayMs }, 'shutting down: readyz now fails');
    if (o.shutdownDelayMs > 0) await new Promise((r) => setTimeout(r, o.shutdownDelayMs));
    const closed = new Promise<void>((r) => server.close(() => r()));
    this.requests.abort();
    const drainMs = o.shutdownDrainMs ?? SHUTDOWN_DRAIN_MS;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), drainMs)));
    const idle = this.inFlight > 0 ? new Promise<boolean>((r) => (this.idle = () => r(true))) : Promise.resolve(true);
    let inTime = await Promise.race([idle, late]);
    if (inTime) {
      server.closeIdleConnections();
      inTime = await Promise.race([closed.then(() => true), late]);
    }
    clearTimeout(timer);
    if (!inTime) o.log.warn({ inFlight: this.inFlight, drainMs }, 'shutdown: cutting the connections still open');
    server.closeAllConnections();
    await closed;
    // Every event of the requests served is written (or sent) before the process may exit.
    await o.audit?.flush();
    o.log.info('server stopped');
  }

  private async handle(req: IncomingMessage, res: ServerResponse, upgrade?: ResourceRequest['upgrade']): Promise<void> {
    this.inFlight++;
    const o = this.o;
    const started = performance.now();
    let info: RequestInfo | undefined;
    const audit = o.audit?.begin(req, res);
    let panicked = false;
    try {
      const url = new URL(req.url ?? '/', 'https://localhost');
      // k8s.io group names are handled as their svc.io group and answered in the client's
      // (GroupAliases); without them, stock kubectl's review APIs under authorization.k8s.io still are.
      info = reviewAlias(this.aliases.apply(parseRequestInfo(req.method ?? 'GET', url.pathname, url.searchParams)));
      const user = await this.authenticate(req, info, audit);
      await this.authorize(requestAttributes(user, info, url.searchParams, gateOn(o.gates, 'AuthorizeWithSelectors')), audit);
      const remote = o.aggregator?.remote.lookupPath(url.pathname);
      if (remote) await proxyToRemote(req, res, remote, user, o.aggregator!, this.requests.signal);
      else if (info.isResourceRequest) await this.serveResource(req, res, info, url.searchParams, user, audit, upgrade);
      else await this.serveNonResource(req, res, info, url.searchParams);
    } catch (err) {
      sendError(
        req,
        res,
        servedError(info, err),
        (e) => {
          panicked = true;
          o.log.error({ err: e, method: req.method, url: req.url }, 'request failed');
        },
        { cbor: o.gates?.has(CBOR_GATE) },
      );
    } finally {
      audit?.complete(panicked);
      // Upstream reports server-side apply as its own verb; res.statusCode is what was sent (a watch records on its end).
      const verb = info?.verb === 'patch' && /^application\/apply-patch/.test(req.headers['content-type'] ?? '') ? 'apply' : (info?.verb ?? (req.method ?? '').toLowerCase());
      o.metrics?.recordRequest(verb, info?.isResourceRequest ? info.resource : '', res.statusCode, (performance.now() - started) / 1000);
      this.inFlight--;
      if (this.inFlight === 0) this.idle?.();
    }
  }

  /**
   * The signals of a deprecated API (spec 6.2), built-in or custom: a Warning, the audit
   * annotations and the metric. The Warning is set on the response before the handler runs, so
   * errors and watches carry it too, as upstream's.
   */
  private deprecated(r: ResourceRequest, type: ResourceType): void {
    const group = r.info.servedGroup ?? type.group;
    r.res.setHeader('Warning', `299 - ${JSON.stringify(deprecationWarning(type, group))}`);
    const removed = type.deprecation!.removedIn ?? '';
    // The spec's annotation, and upstream's (audit tools look for k8s.io/deprecated).
    Object.assign((r.auditAnnotations ??= {}), { 'svc.io/deprecated': 'true', 'k8s.io/deprecated': 'true', ...(removed ? { 'k8s.io/removed-release': removed } : {}) });
    this.o.metrics?.deprecatedApiRequested(group, type.version, type.resource, r.info.subresource, removed);
  }

  /** Authenticates; the audit policy is applied to the user, or to no user when authentication fails (upstream audits failed authentication too). */
  private async authenticate(req: IncomingMessage, info: RequestInfo, audit: RequestAudit | undefined): Promise<UserInfo> {
    let user: UserInfo;
    try {
      user = await this.o.authn.authenticate(req);
    } catch (err) {
      if (audit) this.o.audit!.decide(audit, req, undefined, info);
      throw err;
    }
    if (audit) this.o.audit!.decide(audit, req, user, info);
    return user;
  }

  /** Authorizes, noting the decision in the audit event's annotations as upstream. */
  private async authorize(attrs: Parameters<AuthorizerChain['authorize']>[0], audit: RequestAudit | undefined): Promise<void> {
    try {
      await this.o.authz.authorize(attrs);
    } catch (err) {
      if (audit && err instanceof ApiError && err.code === 403) audit.annotations['authorization.k8s.io/decision'] = 'forbid';
      throw err;
    }
    if (audit) audit.annotations['authorization.k8s.io/decision'] = 'allow';
  }

  private async serveResource(
    req: IncomingMessage,
    res: ServerResponse,
    info: RequestInfo,
    query: URLSearchParams,
    user: ResourceRequest['user'],
    audit?: RequestAudit,
    upgrade?: ResourceRequest['upgrade'],
  ): Promise<void> {
    const o = this.o;
    const type = o.registry.lookup(info.apiGroup, info.apiVersion, info.resource);
    if (!type || !o.registry.isServed(type)) throw notFound();
    // A namespaced collection or item needs its namespace in the path; cluster-scoped ones must not have one.
    if (type.resource !== 'namespaces' && !type.namespaced && info.namespace) throw notFound();
    if (type.namespaced && !info.namespace && (info.name || info.verb === 'create' || info.verb === 'deletecollection')) throw notFound();
    const r: ResourceRequest = { req, res, info, query, user, type, store: o.store, cache: o.cache, log: o.log, signal: this.requests.signal, now: o.now, gates: o.gates, ...(upgrade ? { upgrade } : {}) };
    r.authorizeVerb = (verb) => o.authz.authorize({ user, info: { ...r.info, verb } });
    if (audit) r.auditAnnotations = audit.annotations;
    if (type.deprecation) this.deprecated(r, type);
    if (type.resource === 'namespaces') r.info = { ...info, namespace: '' };
    try {
      return await this.dispatchResource(r);
    } catch (err) {
      warnOnError(r);
      throw err;
    }
  }

  /** The handler of a resource request: virtual, sub-resource or verb. */
  private dispatchResource(r: ResourceRequest): Promise<void> {
    const { req, info, type } = r;
    const o = this.o;
    const virtual = o.virtual?.get(`${type.group}/${type.version}/${type.resource}`);
    if (virtual) return virtual(r);
    if (info.subresource) {
      const extra = o.subresources?.get(`${type.group}/${type.resource}/${info.subresource}`);
      if (extra) return extra(r);
      if (info.subresource === 'scale' && type.scale) return handleScale(r, type.scale);
      if (info.subresource !== 'status' || !type.hasStatus) throw notFound();
      switch (info.verb) {
        case 'get':
          return handleGet(r);
        case 'update':
          return handleUpdate(r);
        case 'patch':
          return handlePatch(r);
      }
      throw methodNotAllowed(req.method);
    }
    switch (info.verb) {
      case 'get':
        return handleGet(r);
      case 'list':
        return handleList(r);
      case 'watch':
        // The legacy /watch/ paths make any method a watch (upstream serves them for GET only).
        if (req.method !== 'GET') throw methodNotAllowed(req.method);
        return handleWatch(r);
      case 'create':
        if (info.name) throw methodNotAllowed(req.method);
        return handleCreate(r);
      case 'update':
        return handleUpdate(r);
      case 'patch':
        return handlePatch(r);
      case 'delete':
        return handleDelete(r);
      case 'deletecollection':
        return handleDeleteCollection(r);
    }
    throw methodNotAllowed(req.method);
  }

  private async serveNonResource(req: IncomingMessage, res: ServerResponse, info: RequestInfo, query: URLSearchParams): Promise<void> {
    const path = info.path.replace(/\/+$/, '') || '/';
    if (req.method !== 'GET' && req.method !== 'HEAD') throw methodNotAllowed(req.method);
    const parts = path.split('/').filter(Boolean);
    const pretty = queryBool(query, 'pretty');
    const json = (body: unknown) => send(req, res, 200, body, { pretty });
    if (path === '/metrics' && this.o.metrics) {
      const text = await this.o.metrics.metricsText();
      res.writeHead(200, { 'Content-Type': this.o.metrics.contentType, 'Cache-Control': 'no-cache, private' });
      res.end(text);
      return;
    }
    if (path === '/api' || path === '/apis') {
      // Aggregated discovery for the clients that ask for it; the same URL answers differently by Accept.
      const aggregated = aggregatedDiscovery(req.headers.accept);
      const headers = { Vary: 'Accept', ...(aggregated ? { 'Content-Type': aggregated.contentType } : {}) };
      let body = aggregated ? this.discovery.aggregated(path === '/api', aggregated.apiVersion) : path === '/api' ? this.discovery.versions() : this.discovery.groups();
      const remote = this.o.aggregator?.remote;
      if (remote && path === '/apis') body = aggregated ? mergeAggregated(body, remote) : mergeGroupList(body, remote);
      return send(req, res, 200, body, { pretty, headers, compress: aggregated !== undefined && gateOn(this.o.gates, 'APIResponseCompression') });
    }
    if (parts[0] === 'api' && parts.length === 2) {
      const doc = this.discovery.resources('', parts[1]);
      if (doc) return json(doc);
    }
    if (parts[0] === 'apis' && parts.length === 2) {
      const doc = this.discovery.group(parts[1]);
      if (doc) return json(doc);
      const remote = this.o.aggregator?.remote.group(parts[1]);
      if (remote) return json(remote);
    }
    if (parts[0] === 'apis' && parts.length === 3) {
      const doc = this.discovery.resources(parts[1], parts[2]);
      if (doc) return json(doc);
    }
    if (path === '/version') {
      const v = this.o.version;
      return json(versionDocument(v));
    }
    if (path === '/openapi/v2') {
      // JSON, or gnostic's protobuf Document (kubectl up to 1.28 reads only that), as upstream's handler.
      const as = openApiV2MediaType(req.headers.accept);
      if (!as) throw new ApiError('NotAcceptable', `only application/json and ${OPENAPI_V2_PROTOBUF} are served for /openapi/v2`);
      // With the available aggregated servers' paths and definitions (upstream's aggregator merges their specs).
      const doc = mergeOpenApiV2(openApiV2(this.documentTypes(), this.o.version.gitVersion), this.o.aggregator?.remote);
      if (as === 'json' && pretty) return send(req, res, 200, doc, { pretty, headers: { Vary: 'Accept' } });
      // ETag, If-None-Match / If-Modified-Since 304s and gzip, as upstream's kube-openapi handler.
      const answer = this.openApiV2.answer(doc, as, req.headers);
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body);
      return;
    }
    if (path === '/openapi/v3') return json(mergeOpenApiV3Index(openApiV3Index(this.documentTypes()), this.o.aggregator?.remote));
    if (parts[0] === 'openapi' && parts[1] === 'v3') {
      const key = parts.slice(2).join('/');
      const doc = openApiV3(this.documentTypes(), key, this.o.version.gitVersion) ?? remoteOpenApiV3(this.o.aggregator?.remote, key);
      if (doc) return json(doc);
    }
    if (parts[0] === 'livez' || parts[0] === 'readyz' || parts[0] === 'healthz') {
      const endpoint = parts[0];
      const result = await runChecks(endpoint, this.checksFor(endpoint), query, parts[1]);
      if (!result) throw notFound();
      res.writeHead(result.status, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-cache, private' });
      res.end(result.body);
      return;
    }
    throw notFound();
  }

  private checksFor(endpoint: string): HealthCheck[] {
    const ping: HealthCheck = { name: 'ping', check: () => undefined };
    const base = this.o.checks;
    if (endpoint === 'readyz') {
      return [
        ping,
        ...base,
        ...(this.o.readyChecks ?? []),
        { name: 'informer-sync', check: () => (this.o.cache.isReady() ? undefined : 'watch cache not started') },
        { name: 'shutdown', check: () => (this.shuttingDown ? 'process is shutting down' : undefined) },
      ];
    }
    if (endpoint === 'livez') {
      const inGrace = Date.now() - this.startedAt < this.o.livezGraceMs;
      // During --livez-grace-period slow start-up checks do not make the process look dead.
      return [ping, ...(inGrace ? base.map((c) => ({ name: c.name, check: () => undefined })) : base)];
    }
    return [ping, ...base];
  }
}

function notFound(): ApiError {
  return new ApiError('NotFound', 'the server could not find the requested resource', { causes: [{ reason: 'UnexpectedServerResponse', message: '404 page not found' }] });
}

function methodNotAllowed(method: string | undefined): ApiError {
  return new ApiError('MethodNotAllowed', `the server does not allow this method on the requested resource (${method ?? ''})`);
}
