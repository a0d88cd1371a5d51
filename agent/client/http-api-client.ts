/**
 * ApiClient over HTTP(S) with undici: one connection pool (an undici Agent) per client, TLS from
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
import { Agent, request, type Dispatcher } from 'undici';
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
import { ClientError, errorFromStatus, transportError } from './client-error';
import type { ExecCredentialResult } from './exec-credential';
import { JsonDocumentSplitter } from './json-stream';
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
}

function abortError(): Error {
  const e = new Error('The operation was aborted');
  e.name = 'AbortError';
  return e;
}

export class HttpApiClient implements ApiClient, CredentialSwappable {
  private dispatcher: Agent;
  private config: RestConfig;
  private readonly timeoutMs: number;

  constructor(
    config: RestConfig,
    private readonly opts: HttpClientOptions = {},
  ) {
    this.config = { ...config };
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.dispatcher = this.makeDispatcher();
  }

  /** The server URL this client talks to. */
  get server(): string {
    return this.config.server;
  }

  private makeDispatcher(): Agent {
    const c = this.config;
    return new Agent({
      connections: this.opts.connections ?? 4,
      // Idle sockets are dropped well before any intermediary would silently drop them.
      keepAliveTimeout: 30_000,
      connectTimeout: Math.min(this.timeoutMs, 10_000),
      connect: {
        ca: c.caPem,
        cert: c.certPem,
        key: c.keyPem,
        rejectUnauthorized: !c.insecureSkipTLSVerify,
        servername: c.tlsServerName,
      },
    });
  }

  useClientCertificate(certPem: string, keyPem: string): void {
    this.config = { ...this.config, certPem, keyPem };
    const old = this.dispatcher;
    this.dispatcher = this.makeDispatcher();
    // Requests already running (watches) finish on the old pool; it closes when they are done.
    old.close().catch(() => undefined);
  }

  async redial(): Promise<void> {
    const old = this.dispatcher;
    this.dispatcher = this.makeDispatcher();
    try {
      await old.destroy();
    } catch {
      // already closed
    }
  }

  /** Closes the pool for good (shutdown). In-flight requests fail. */
  async close(): Promise<void> {
    try {
      await this.dispatcher.destroy();
    } catch {
      // already closed
    }
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
    return cred !== undefined && e instanceof ClientError && e.code === 401;
  }

  private headers(extra: Record<string, string> = {}, cred?: ExecCredentialResult): Record<string, string> {
    const h: Record<string, string> = { accept: 'application/json', ...extra };
    const token = cred ? cred.token : this.config.token;
    if (token) h['authorization'] = `Bearer ${token}`;
    if (this.opts.userAgent) h['user-agent'] = this.opts.userAgent;
    return h;
  }

  private url(path: string, query: Record<string, string | number | boolean | undefined> = {}): string {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') q.set(k, String(v));
    const qs = q.toString();
    return this.config.server + path + (qs ? `?${qs}` : '');
  }

  /** One request with a JSON answer; maps every failure to ClientError (or AbortError when the caller aborted). */
  private async call<T>(method: Dispatcher.HttpMethod, url: string, o: RequestOptions, body?: unknown, contentType?: string): Promise<T> {
    const what = `${method} ${url.replace(this.config.server, '')}`;
    if (o.signal?.aborted) throw abortError();
    const cred = await this.credential(what);
    try {
      return await this.callOnce<T>(what, method, url, o, cred, body, contentType);
    } catch (e) {
      if (!this.staleCredential(cred, e)) throw e;
      this.config.exec!.invalidate(cred);
      const fresh = await this.credential(what);
      return this.callOnce<T>(what, method, url, o, fresh, body, contentType);
    }
  }

  private async callOnce<T>(
    what: string,
    method: Dispatcher.HttpMethod,
    url: string,
    o: RequestOptions,
    cred: ExecCredentialResult | undefined,
    body?: unknown,
    contentType?: string,
  ): Promise<T> {
    if (o.signal?.aborted) throw abortError();
    // One controller per request, linked to the caller's signal and a deadline, and unlinked
    // afterwards, so long-lived loop signals do not collect listeners.
    const timeoutMs = o.timeoutMs ?? this.timeoutMs;
    const ac = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      ac.abort();
    }, timeoutMs);
    const onAbort = () => ac.abort();
    o.signal?.addEventListener('abort', onAbort, { once: true });
    let res: Dispatcher.ResponseData;
    let text: string;
    try {
      res = await request(url, {
        method,
        dispatcher: this.dispatcher,
        headers: this.headers(body !== undefined ? { 'content-type': contentType ?? 'application/json' } : {}, cred),
        body: body !== undefined ? JSON.stringify(body) : undefined,
        signal: ac.signal,
      });
      text = await res.body.text();
    } catch (e) {
      if (o.signal?.aborted) throw abortError();
      if (timedOut) throw new ClientError(0, 'Timeout', `${what}: no answer within ${timeoutMs} ms`, undefined, { cause: e });
      throw transportError(e, what);
    } finally {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
    }
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (res.statusCode < 200 || res.statusCode > 299) throw errorFromStatus(res.statusCode, parsed, text.slice(0, 300));
    if (parsed === undefined && method !== 'DELETE') throw new ClientError(res.statusCode, 'InvalidResponse', `${what}: the answer is not JSON`);
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
    const what = `watch ${url.replace(this.config.server, '')}`;
    if (opts.signal?.aborted) return;
    let cred = await this.credential(what);
    let res = await this.openWatch(url, opts, cred, what);
    if (res && res.statusCode === 401 && cred) {
      await res.body.text().catch(() => undefined);
      this.config.exec!.invalidate(cred);
      cred = await this.credential(what);
      res = await this.openWatch(url, opts, cred, what);
    }
    if (!res) return;
    yield* this.readWatch<T>(res, opts, what);
  }

  /** Sends a watch request; undefined when the caller aborted. */
  private async openWatch(url: string, opts: WatchOptions, cred: ExecCredentialResult | undefined, what: string): Promise<Dispatcher.ResponseData | undefined> {
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, {
        method: 'GET',
        dispatcher: this.dispatcher,
        headers: this.headers({}, cred),
        signal: opts.signal,
        headersTimeout: opts.timeoutMs ?? this.opts.watchHeadersTimeoutMs ?? this.timeoutMs,
        // The stream may be idle for as long as the server keeps it; with timeoutSeconds that is bounded.
        bodyTimeout: opts.timeoutSeconds ? opts.timeoutSeconds * 1000 + 30_000 : 0,
      });
    } catch (e) {
      if (opts.signal?.aborted) return undefined;
      throw transportError(e, what);
    }
    return res;
  }

  private async *readWatch<T extends KObject>(res: Dispatcher.ResponseData, opts: WatchOptions, what: string): AsyncGenerator<WatchEvent<T>> {
    if (res.statusCode !== 200) {
      let text = '';
      try {
        text = await res.body.text();
      } catch {
        // the error code is enough
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      throw errorFromStatus(res.statusCode, parsed, text.slice(0, 300));
    }
    const splitter = new JsonDocumentSplitter();
    try {
      for await (const chunk of res.body) {
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
      res.body.destroy();
    }
    if (splitter.pending && !opts.signal?.aborted) throw new ClientError(0, 'ConnectionFailed', `${what}: the stream ended in the middle of an event`);
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
