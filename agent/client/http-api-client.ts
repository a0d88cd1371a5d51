/**
 * ApiClient over HTTP(S): one keep-alive connection pool per client (connection-pool.ts), TLS from
 * the RestConfig, short per-request deadlines, and redial() to throw the whole pool away. The
 * kubelet does the same for its heartbeat client (closeAllConns on repeated heartbeat failure),
 * so a half-open connection cannot swallow heartbeats past the node-monitor grace period.
 *
 * With an exec credential plugin (RestConfig.exec, spec 5.8) every request first asks the plugin
 * source for the current credential (cached there until expiry); a new client certificate from it
 * replaces the pool (new handshakes), a token goes into the Authorization header. A 401 drops that
 * credential and the request is sent once more with a fresh one, as client-go's exec round
 * tripper does; a second 401 is the caller's.
 */
import type { IncomingMessage } from 'node:http';
import type { KList, KObject } from '../../apiserver/api/types';
import { isObject } from '../../apiserver/api/types';
import {
  patchContentTypes,
  type ApiClient,
  type CredentialSwappable,
  type GetOptions,
  type ListOptions,
  type PatchType,
  type RequestOptions,
  type WatchEvent,
  type WatchOptions,
  type WriteOptions,
} from './api-client';
import { abortError, ClientError, errorFromStatus, isAbort, transportError } from './client-error';
import { ConnectionPool, readText } from './connection-pool';
import type { ExecCredentialResult } from './exec-credential';
import { JsonDocumentSplitter } from './json-stream';
import type { RequestLimiter } from './request-limiter';
import { apiVersionOf, resourcePath, type ResourceRef } from './resources';
import type { RestConfig } from './rest-config';

export interface HttpClientOptions {
  /** Deadline for one whole request (connect, headers and body) in ms. Default 10 s. */
  timeoutMs?: number;
  /** Deadline for a watch's response headers in ms. Default: timeoutMs. */
  watchHeadersTimeoutMs?: number;
  /** User-Agent header (the server derives the default fieldManager from it). */
  userAgent?: string;
  /** Maximum sockets to the server. Default 4. */
  connections?: number;
  /** Paces every request and watch start (kubeAPIQPS / kubeAPIBurst); none for the heartbeat client, as upstream. */
  limiter?: RequestLimiter;
}

/** At most this many watches at once (one connection each); more wait for one to end. */
const WATCH_CONNECTIONS = 32;

export class HttpApiClient implements ApiClient, CredentialSwappable {
  private pool: ConnectionPool;
  /**
   * Watches have their own connections: over HTTP/1.1 each holds one for its whole life (upstream's
   * client-go multiplexes them on one HTTP/2 connection), and in the request pool the agent's
   * informers (pods, nodes, services, slices, policies, ...) would take every socket and starve
   * its requests. Bounded by the number of informers the agent runs.
   */
  private watchPool: ConnectionPool;
  private config: RestConfig;
  private readonly timeoutMs: number;

  constructor(
    config: RestConfig,
    private readonly opts: HttpClientOptions = {},
  ) {
    this.config = { ...config };
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.pool = this.makePool();
    this.watchPool = this.makePool(WATCH_CONNECTIONS);
  }

  /** The server URL this client talks to. */
  get server(): string {
    return this.config.server;
  }

  private makePool(connections = this.opts.connections ?? 4): ConnectionPool {
    const c = this.config;
    return new ConnectionPool(
      c.server,
      { caPem: c.caPem, certPem: c.certPem, keyPem: c.keyPem, rejectUnauthorized: !c.insecureSkipTLSVerify, servername: c.tlsServerName },
      // Idle sockets are dropped well before any intermediary would silently drop them.
      { connections, idleMs: 30_000 },
    );
  }

  useClientCertificate(certPem: string, keyPem: string): void {
    this.config = { ...this.config, certPem, keyPem };
    const old = [this.pool, this.watchPool];
    this.pool = this.makePool();
    this.watchPool = this.makePool(WATCH_CONNECTIONS);
    // Requests already running (watches) finish on the old pools; they close when those are done.
    for (const p of old) p.retire();
  }

  redial(): Promise<void> {
    const old = [this.pool, this.watchPool];
    this.pool = this.makePool();
    this.watchPool = this.makePool(WATCH_CONNECTIONS);
    for (const p of old) p.destroy();
    return Promise.resolve();
  }

  /** Closes the pool for good (shutdown). In-flight requests fail. */
  close(): Promise<void> {
    this.pool.destroy();
    this.watchPool.destroy();
    return Promise.resolve();
  }

  /**
   * The exec plugin's current credential (undefined without a plugin), with the pool switched to
   * its client certificate when that changed. Plugin failures become a ClientError with code 0
   * (retriable: the plugin may work next time) and reason CredentialPluginFailed.
   */
  private async credential(what: string): Promise<ExecCredentialResult | undefined> {
    const source = this.config.exec;
    if (!source) return undefined;
    let c: ExecCredentialResult;
    try {
      c = await source.get();
    } catch (e) {
      throw new ClientError(0, 'CredentialPluginFailed', `${what}: getting credentials: ${(e as Error).message}`, undefined, { cause: e });
    }
    if (c.certPem && c.keyPem && (c.certPem !== this.config.certPem || c.keyPem !== this.config.keyPem)) {
      this.useClientCertificate(c.certPem, c.keyPem);
    }
    return c;
  }

  /** Whether an answer calls for one retry with fresh plugin credentials. */
  private staleCredential(cred: ExecCredentialResult | undefined, e: unknown): cred is ExecCredentialResult {
    return cred !== undefined && e instanceof ClientError && e.status === 401;
  }

  private headers(extra: Record<string, string> = {}, cred?: ExecCredentialResult): Record<string, string> {
    const h: Record<string, string> = { accept: 'application/json', ...extra };
    const token = cred ? cred.token : this.config.token;
    if (token) h['authorization'] = `Bearer ${token}`;
    if (this.opts.userAgent) h['user-agent'] = this.opts.userAgent;
    return h;
  }

  /** Path and query of a request (the pool adds the server). */
  private url(path: string, query: Record<string, string | number | boolean | undefined> = {}): string {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') q.set(k, String(v));
    const qs = q.toString();
    return path + (qs ? `?${qs}` : '');
  }

  /** One request with a JSON answer; maps every failure to ClientError (or AbortError when the caller aborted). */
  private async call<T>(method: string, url: string, o: RequestOptions, body?: unknown, contentType?: string): Promise<T> {
    const what = `${method} ${url}`;
    if (o.signal?.aborted) throw abortError();
    await this.opts.limiter?.wait(o.signal);
    const cred = await this.credential(what);
    try {
      return await this.callOnce<T>(what, method, url, o, cred, body, contentType);
    } catch (e) {
      if (!this.staleCredential(cred, e)) throw e;
      this.config.exec!.invalidate(cred);
      const fresh = await this.credential(what);
      await this.opts.limiter?.wait(o.signal);
      return this.callOnce<T>(what, method, url, o, fresh, body, contentType);
    }
  }

  private async callOnce<T>(
    what: string,
    method: string,
    url: string,
    o: RequestOptions,
    cred: ExecCredentialResult | undefined,
    body?: unknown,
    contentType?: string,
  ): Promise<T> {
    if (o.signal?.aborted) throw abortError();
    const timeoutMs = o.timeoutMs ?? this.timeoutMs;
    const d = new Deadline(timeoutMs, o.signal);
    let res: IncomingMessage;
    let text: string;
    try {
      res = await this.pool.send(url, {
        method,
        headers: this.headers(body !== undefined ? { 'content-type': contentType ?? 'application/json' } : {}, cred),
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: d.signal,
      });
      text = await readText(res);
    } catch (e) {
      if (o.signal?.aborted) throw abortError();
      if (d.expired) throw new ClientError(0, 'Timeout', `${what}: no answer within ${timeoutMs} ms`, undefined, { cause: e });
      throw transportError(e, what);
    } finally {
      d.end();
    }
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const status = res.statusCode ?? 0;
    if (status < 200 || status > 299) throw errorFromStatus(status, parsed, text.slice(0, 300));
    if (parsed === undefined && method !== 'DELETE') throw new ClientError(status, 'InvalidResponse', `${what}: the answer is not JSON`);
    return parsed as T;
  }

  get<T extends KObject = KObject>(r: ResourceRef, name: string, opts: GetOptions = {}): Promise<T> {
    return this.call<T>('GET', this.url(resourcePath(r, { namespace: opts.namespace, name }), { resourceVersion: opts.resourceVersion }), opts);
  }

  create<T extends KObject = KObject>(r: ResourceRef, obj: T, opts: WriteOptions = {}): Promise<T> {
    const namespace = opts.namespace ?? obj.metadata.namespace;
    const body = { apiVersion: apiVersionOf(r), kind: r.kind, ...obj };
    const path = opts.subresource
      ? resourcePath(r, { namespace, name: obj.metadata.name, subresource: opts.subresource })
      : resourcePath(r, { namespace });
    return this.call<T>('POST', this.url(path, { fieldManager: opts.fieldManager }), opts, body);
  }

  update<T extends KObject = KObject>(r: ResourceRef, obj: T, opts: WriteOptions = {}): Promise<T> {
    const namespace = opts.namespace ?? obj.metadata.namespace;
    const name = obj.metadata.name ?? '';
    const body = { apiVersion: apiVersionOf(r), kind: r.kind, ...obj };
    return this.call<T>('PUT', this.url(resourcePath(r, { namespace, name, subresource: opts.subresource }), { fieldManager: opts.fieldManager }), opts, body);
  }

  patch<T extends KObject = KObject>(r: ResourceRef, name: string, type: PatchType, patch: unknown, opts: WriteOptions = {}): Promise<T> {
    const url = this.url(resourcePath(r, { namespace: opts.namespace, name, subresource: opts.subresource }), { fieldManager: opts.fieldManager });
    return this.call<T>('PATCH', url, opts, patch, patchContentTypes[type]);
  }

  async delete(r: ResourceRef, name: string, opts: RequestOptions = {}): Promise<void> {
    await this.call<unknown>('DELETE', this.url(resourcePath(r, { namespace: opts.namespace, name })), opts);
  }

  list<T extends KObject = KObject>(r: ResourceRef, opts: ListOptions = {}): Promise<KList<T>> {
    const url = this.url(resourcePath(r, { namespace: opts.namespace }), {
      labelSelector: opts.labelSelector,
      fieldSelector: opts.fieldSelector,
      limit: opts.limit,
      continue: opts.continue,
      resourceVersion: opts.resourceVersion,
    });
    return this.call<KList<T>>('GET', url, opts);
  }

  watch<T extends KObject = KObject>(r: ResourceRef, opts: WatchOptions = {}): AsyncIterable<WatchEvent<T>> {
    const url = this.url(resourcePath(r, { namespace: opts.namespace }), {
      watch: 1,
      labelSelector: opts.labelSelector,
      fieldSelector: opts.fieldSelector,
      resourceVersion: opts.resourceVersion,
      allowWatchBookmarks: opts.allowWatchBookmarks ? 'true' : undefined,
      timeoutSeconds: opts.timeoutSeconds,
    });
    return this.watchStream<T>(url, opts);
  }

  private async *watchStream<T extends KObject>(url: string, opts: WatchOptions): AsyncGenerator<WatchEvent<T>> {
    const what = `watch ${url}`;
    if (opts.signal?.aborted) return;
    try {
      await this.opts.limiter?.wait(opts.signal);
    } catch (e) {
      if (isAbort(e)) return;
      throw e;
    }
    let cred = await this.credential(what);
    let res = await this.openWatch(url, opts, cred, what);
    if (res && res.statusCode === 401 && cred) {
      await readText(res).catch(() => undefined);
      this.config.exec!.invalidate(cred);
      cred = await this.credential(what);
      res = await this.openWatch(url, opts, cred, what);
    }
    if (!res) return;
    yield* this.readWatch<T>(res, opts, what);
  }

  /** Sends a watch request; undefined when the caller aborted. */
  private async openWatch(url: string, opts: WatchOptions, cred: ExecCredentialResult | undefined, what: string): Promise<IncomingMessage | undefined> {
    // The response headers must come within the deadline; the stream after them may be idle for
    // as long as the server keeps it (with timeoutSeconds that is bounded).
    const headersMs = opts.timeoutMs ?? this.opts.watchHeadersTimeoutMs ?? this.timeoutMs;
    const d = new Deadline(headersMs, opts.signal);
    try {
      return await this.watchPool.send(url, {
        method: 'GET',
        headers: this.headers({}, cred),
        signal: d.signal,
        idleTimeoutMs: opts.timeoutSeconds ? opts.timeoutSeconds * 1000 + 30_000 : 0,
      });
    } catch (e) {
      if (opts.signal?.aborted) return undefined;
      if (d.expired) throw new ClientError(0, 'Timeout', `${what}: no answer within ${headersMs} ms`, undefined, { cause: e });
      throw transportError(e, what);
    } finally {
      // The caller's signal still ends the stream: readWatch destroys it on abort.
      d.end();
    }
  }

  private async *readWatch<T extends KObject>(res: IncomingMessage, opts: WatchOptions, what: string): AsyncGenerator<WatchEvent<T>> {
    if (res.statusCode !== 200) {
      let text = '';
      try {
        text = await readText(res);
      } catch {
        // the error code is enough
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      throw errorFromStatus(res.statusCode ?? 0, parsed, text.slice(0, 300));
    }
    const splitter = new JsonDocumentSplitter();
    const onAbort = () => res.destroy();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for await (const chunk of res) {
        let docs: string[];
        try {
          docs = splitter.push(chunk as Buffer);
        } catch (e) {
          throw new ClientError(200, 'InvalidResponse', `${what}: ${(e as Error).message}`);
        }
        for (const doc of docs) yield decodeEvent<T>(doc, what);
      }
    } catch (e) {
      if (opts.signal?.aborted) return;
      if (e instanceof ClientError) throw e;
      throw transportError(e, what);
    } finally {
      opts.signal?.removeEventListener('abort', onAbort);
      res.destroy();
    }
    if (splitter.pending && !opts.signal?.aborted) throw new ClientError(0, 'ConnectionFailed', `${what}: the stream ended in the middle of an event`);
  }
}

/**
 * A signal that aborts when the caller's signal does or when ms pass, whichever is first. One per
 * request, unlinked by end(), so long-lived loop signals do not collect listeners.
 */
class Deadline {
  private readonly ac = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly onAbort = () => this.ac.abort();
  expired = false;

  constructor(
    ms: number,
    private readonly caller?: AbortSignal,
  ) {
    this.timer = setTimeout(() => {
      this.expired = true;
      this.ac.abort();
    }, ms);
    caller?.addEventListener('abort', this.onAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.ac.signal;
  }

  end(): void {
    clearTimeout(this.timer);
    this.caller?.removeEventListener('abort', this.onAbort);
  }
}

/** One watch document into an event; ERROR events become the error they carry (GoneError for 410). */
export function decodeEvent<T extends KObject>(doc: string, what: string): WatchEvent<T> {
  let ev: unknown;
  try {
    ev = JSON.parse(doc);
  } catch {
    throw new ClientError(200, 'InvalidResponse', `${what}: an event is not valid JSON`);
  }
  if (!isObject(ev) || typeof ev['type'] !== 'string' || !isObject(ev['object'])) {
    throw new ClientError(200, 'InvalidResponse', `${what}: an event lacks type or object`);
  }
  if (ev['type'] === 'ERROR') {
    const status = ev['object'];
    const code = typeof status['code'] === 'number' ? status['code'] : 500;
    throw errorFromStatus(code, status);
  }
  return { type: ev['type'] as WatchEvent<T>['type'], object: ev['object'] as T };
}
