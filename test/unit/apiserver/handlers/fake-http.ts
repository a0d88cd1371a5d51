/**
 * Drives a resource handler without a socket: a fake request (a readable body with method, url
 * and headers) and a fake response that records status, headers and body, built into the
 * ResourceRequest the router would build. Errors a handler throws become a Status reply through
 * the same sendError the router uses, so tests assert what a client would receive.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable, Writable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import pino from 'pino';
import type { ResourceRequest } from '../../../../apiserver/handlers/context';
import { GroupAliases, servedError } from '../../../../apiserver/server/group-alias';
import { parseRequestInfo } from '../../../../apiserver/server/request-info';
import { sendError } from '../../../../apiserver/server/respond';
import type { StoreFixture } from '../store/fixture';

export class FakeResponse extends Writable {
  statusCode = 0;
  headers: Record<string, string | string[]> = {};
  headersSent = false;
  private readonly chunks: Buffer[] = [];

  writeHead(status: number, headers: Record<string, string | string[]> = {}): this {
    this.statusCode = status;
    for (const [k, v] of Object.entries(headers)) this.headers[k.toLowerCase()] = v;
    this.headersSent = true;
    return this;
  }

  flushHeaders(): void {}

  override _write(chunk: Buffer | string, _enc: BufferEncoding, cb: () => void): void {
    this.chunks.push(Buffer.from(chunk));
    this.emit('chunk');
    cb();
  }

  /** The body bytes (gunzipped when the handler compressed them). */
  get bytes(): Buffer {
    const raw = Buffer.concat(this.chunks);
    return this.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
  }

  /** The body as text (gunzipped when the handler compressed it). */
  get text(): string {
    return this.bytes.toString('utf8');
  }

  /** Resolves once the body holds at least n bytes (a protobuf watch stream). */
  async waitForBytes(n: number): Promise<void> {
    while (Buffer.concat(this.chunks).length < n) {
      if (this.writableFinished) throw new Error(`the stream ended after ${Buffer.concat(this.chunks).length} of ${n} bytes`);
      await new Promise<void>((resolve) => {
        const done = () => {
          this.off('chunk', done);
          this.off('finish', done);
          resolve();
        };
        this.on('chunk', done);
        this.on('finish', done);
      });
    }
  }

  /** The body parsed as JSON (any: tests read arbitrary documents, which eslint.config.mjs allows in test/). */
  get body(): any {
    return JSON.parse(this.text);
  }

  /** The newline-separated JSON documents written so far (a watch stream). */
  lines(): any[] {
    return this.text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l));
  }

  /** Resolves once at least n documents have been written (no sleeping: it waits for writes). */
  async waitForLines(n: number): Promise<void> {
    while (this.lines().length < n) {
      if (this.writableFinished) throw new Error(`the stream ended after ${this.lines().length} of ${n} documents: ${this.text}`);
      await new Promise<void>((resolve) => {
        const done = () => {
          this.off('chunk', done);
          this.off('finish', done);
          resolve();
        };
        this.on('chunk', done);
        this.on('finish', done);
      });
    }
  }
}

export interface CallOptions {
  body?: unknown;
  /** Raw body text (sent as is); body is JSON-encoded otherwise. */
  raw?: string | Buffer;
  headers?: Record<string, string>;
  /** Ends with the "server" (a watch stops). */
  signal?: AbortSignal;
  gates?: ReadonlySet<string>;
  /** The authenticated caller; an administrator by default. */
  user?: ResourceRequest['user'];
  authorizeVerb?: (verb: string) => Promise<void>;
  /** The response to write to (e.g. one whose peer stops reading); a fresh FakeResponse by default. */
  res?: FakeResponse;
  /** One-shot timers of the handler (watch timeouts, write deadlines). */
  after?: ResourceRequest['after'];
}

export interface Call {
  res: FakeResponse;
  req: IncomingMessage;
  /** Settles when the handler has finished (for a watch, when the stream ends). */
  done: Promise<void>;
}

/** Starts handler on a request for method and path (with its query string) against the fixture's store. */
export function start(f: StoreFixture, handler: (r: ResourceRequest) => Promise<void>, method: string, path: string, o: CallOptions = {}): Call {
  const url = new URL(path, 'https://apiserver.test');
  const query = url.searchParams;
  const text = o.raw ?? (o.body === undefined ? '' : JSON.stringify(o.body));
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text);
  const headers: Record<string, string> = { ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}), ...o.headers };
  const req = Object.assign(Readable.from(bytes.length ? [bytes] : []), { method, url: path, headers }) as unknown as IncomingMessage;
  const res = o.res ?? new FakeResponse();
  // As the router (with --serve-k8s-io-groups, its default): a k8s.io group name is handled as its svc.io group.
  let info = new GroupAliases(f.registry.groups().map((g) => g.name), true).apply(parseRequestInfo(method, url.pathname, query));
  const type = f.registry.lookup(info.apiGroup, info.apiVersion, info.resource);
  if (!type) throw new Error(`no type for ${path}`);
  // As the router: a namespace's own name is not its namespace.
  if (type.resource === 'namespaces') info = { ...info, namespace: '' };
  const r: ResourceRequest = {
    req,
    res: res as unknown as ServerResponse,
    info,
    query,
    user: o.user ?? { username: 'svc-admin', groups: ['system:masters', 'system:authenticated'] },
    type,
    store: f.store,
    cache: f.cache,
    log: pino({ level: 'silent' }),
    signal: o.signal ?? new AbortController().signal,
    now: () => new Date(f.clock.now()),
    gates: o.gates,
    authorizeVerb: o.authorizeVerb,
    ...(o.after ? { after: o.after } : {}),
  };
  const done = handler(r).catch((err: unknown) => sendError(req, r.res, servedError(r.info, err), undefined, { cbor: o.gates?.has('CBORServingAndStorage') }));
  return { res, req, done };
}

/** Runs handler to completion and answers the response. */
export async function call(f: StoreFixture, handler: (r: ResourceRequest) => Promise<void>, method: string, path: string, o: CallOptions = {}): Promise<FakeResponse> {
  const c = start(f, handler, method, path, o);
  await c.done;
  return c.res;
}
