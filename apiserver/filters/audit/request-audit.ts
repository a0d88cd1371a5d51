/**
 * One request's audit record (upstream's audit filter): created when the request arrives, given
 * its user and RequestInfo once authentication has run, and emitting an audit.k8s.io/v1 Event at
 * each stage the policy keeps (RequestReceived, ResponseStarted for long-running requests,
 * ResponseComplete, or Panic for an unexpected failure). Request and response bodies are read
 * through taps (server/audit-taps.ts) only at the levels that log them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import type { UserInfo } from '../../api/user';
import { requestBodyTaps, responseTaps } from '../../server/audit-taps';
import type { RequestInfo } from '../../server/request-info';
import type { AuditDecision, AuditLevel, Stage } from './policy';

export interface AuditEvent {
  kind: 'Event';
  apiVersion: 'audit.k8s.io/v1';
  level: AuditLevel;
  auditID: string;
  stage: Stage;
  requestURI: string;
  verb: string;
  user: UserInfo | Record<string, never>;
  impersonatedUser?: UserInfo;
  sourceIPs: string[];
  userAgent?: string;
  objectRef?: Record<string, string>;
  responseStatus?: { metadata: Record<string, never>; code: number; status?: string; message?: string; reason?: string };
  requestObject?: unknown;
  responseObject?: unknown;
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations?: Record<string, string>;
}

/** Where finished stages go; must not block (backends buffer). */
export interface AuditSink {
  emit(event: AuditEvent): void;
}

const order: readonly AuditLevel[] = ['None', 'Metadata', 'Request', 'RequestResponse'];
const atLeast = (l: AuditLevel, min: AuditLevel) => order.indexOf(l) >= order.indexOf(min);

/** Removes metadata.managedFields from an object and from each item of a list (omitManagedFields). */
function withoutManagedFields(v: unknown): unknown {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return v;
  const o = v as Record<string, unknown>;
  const meta = o.metadata as Record<string, unknown> | undefined;
  let out = o;
  if (meta && typeof meta === 'object' && 'managedFields' in meta) {
    const { managedFields: _dropped, ...rest } = meta;
    out = { ...o, metadata: rest };
  }
  if (Array.isArray(o.items)) out = { ...out, items: o.items.map(withoutManagedFields) };
  return out;
}

/** A Secret's values never reach the log below RequestResponse (the rule; upstream leaves it to the policy). */
function redactSecret(v: unknown): unknown {
  if (!v || typeof v !== 'object') return v;
  const { data: _d, stringData: _s, ...rest } = v as Record<string, unknown>;
  return rest;
}

/** Decodes a request body the client sent in a binary encoding (protobuf, CBOR) for the log; undefined when it cannot. */
export type BinaryBodyDecoder = (body: Buffer, contentType: string, info: RequestInfo) => unknown;

/** The request body as the log shows it: JSON whatever the client sent (upstream logs the decoded object). */
function parseBody(body: Buffer, contentType: string | undefined, info: RequestInfo, binary?: BinaryBodyDecoder): unknown {
  const ct = contentType ?? '';
  try {
    if (/json/.test(ct)) return JSON.parse(body.toString('utf8'));
    if (/yaml/.test(ct)) return parseYaml(body.toString('utf8'));
    return binary?.(body, ct, info);
  } catch {
    return undefined;
  }
}

export class RequestAudit {
  private decision?: AuditDecision;
  private user?: UserInfo;
  private impersonatedUser?: UserInfo;
  private info?: RequestInfo;
  private requestBody?: Buffer;
  private responseObject?: unknown;
  private status?: { status?: string; message?: string; reason?: string };
  /** A create's object name, known from its answer (upstream fills objectRef from the decoded object). */
  private createdName?: string;
  private started = false;
  /** Annotations for every later stage: authorization's decision and admission's (handlers add to it). */
  readonly annotations: Record<string, string> = {};

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly auditID: string,
    private readonly received: Date,
    private readonly now: () => Date,
    private readonly sink: AuditSink,
    private readonly binary?: BinaryBodyDecoder,
  ) {}

  /** Decoded once, on the first event that logs it. */
  private requestObjectCache?: { value: unknown };
  private get requestObject(): unknown {
    if (!this.requestBody || !this.info) return undefined;
    this.requestObjectCache ??= { value: parseBody(this.requestBody, this.req.headers['content-type'], this.info, this.binary) };
    return this.requestObjectCache.value;
  }

  /** Applies the policy's decision once the user is known; `actual` is the authenticated user when impersonating. */
  decide(decision: AuditDecision, user: UserInfo | undefined, info: RequestInfo, actual?: UserInfo): void {
    this.decision = decision;
    this.info = info;
    this.user = actual ?? user;
    if (actual && user) this.impersonatedUser = user;
    if (decision.level === 'None') return;
    if (atLeast(decision.level, 'Request')) requestBodyTaps.set(this.req, (b) => (this.requestBody = b));
    responseTaps.set(this.res, (status, body) => {
      const b = body as { kind?: string; status?: string; message?: string; reason?: string } | undefined;
      if (b?.kind === 'Status' && status >= 300) this.status = { status: b.status, message: b.message, reason: b.reason };
      const name = (body as { metadata?: { name?: unknown } } | undefined)?.metadata?.name;
      if (!info.name && status < 300 && typeof name === 'string') this.createdName = name;
      if (decision.level === 'RequestResponse') this.responseObject = body;
    });
    if (info.verb === 'watch' || this.longRunning()) this.onHeaders(() => this.stage('ResponseStarted'));
    this.stage('RequestReceived');
  }

  /** The request ended: ResponseComplete, or Panic when an unexpected error ended it (upstream: a handler panic). */
  complete(panicked: boolean): void {
    if (!this.decision) {
      // Authentication failed before any decision: upstream audits it at Metadata with no user.
      return;
    }
    this.stage(panicked ? 'Panic' : 'ResponseComplete');
  }

  private longRunning(): boolean {
    const i = this.info;
    return !!i && (['exec', 'attach', 'portforward', 'proxy'].includes(i.subresource) || (i.subresource === 'log' && /[?&]follow=(true|1)/.test(this.req.url ?? '')));
  }

  private onHeaders(fn: () => void): void {
    const res = this.res;
    const original = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
    (res as { writeHead: (...args: unknown[]) => ServerResponse }).writeHead = (...args: unknown[]) => {
      if (!this.started) {
        this.started = true;
        fn();
      }
      return original(...args);
    };
  }

  private stage(stage: Stage): void {
    const d = this.decision;
    if (!d || d.level === 'None' || d.omitStages.has(stage)) return;
    this.sink.emit(this.event(stage, d));
  }

  private event(stage: Stage, d: AuditDecision): AuditEvent {
    const info = this.info!;
    const req = this.req;
    const ev: AuditEvent = {
      kind: 'Event',
      apiVersion: 'audit.k8s.io/v1',
      level: d.level,
      auditID: this.auditID,
      stage,
      requestURI: req.url ?? '/',
      verb: info.verb,
      user: this.user ?? {},
      sourceIPs: sourceIPs(req),
      requestReceivedTimestamp: this.received.toISOString(),
      stageTimestamp: this.now().toISOString(),
    };
    if (this.impersonatedUser) ev.impersonatedUser = this.impersonatedUser;
    const ua = req.headers['user-agent'];
    if (ua) ev.userAgent = ua;
    if (info.isResourceRequest) ev.objectRef = objectRef(info, this.createdName);
    if (stage !== 'RequestReceived') {
      const code = stage === 'Panic' ? 500 : this.res.statusCode;
      ev.responseStatus = { metadata: {}, code, ...(this.status ?? {}) };
    }
    if (atLeast(d.level, 'Request') && this.requestObject !== undefined) {
      let obj = d.omitManagedFields ? withoutManagedFields(this.requestObject) : this.requestObject;
      if (d.level === 'Request' && info.resource === 'secrets' && info.apiGroup === '') obj = redactSecret(obj);
      ev.requestObject = obj;
    }
    if (d.level === 'RequestResponse' && this.responseObject !== undefined && stage !== 'RequestReceived') {
      ev.responseObject = d.omitManagedFields ? withoutManagedFields(this.responseObject) : this.responseObject;
    }
    if (Object.keys(this.annotations).length) ev.annotations = { ...this.annotations };
    return ev;
  }
}

function objectRef(info: RequestInfo, createdName: string | undefined): Record<string, string> {
  const ref: Record<string, string> = { resource: info.resource };
  if (info.namespace) ref.namespace = info.namespace;
  const name = info.name || (info.verb === 'create' ? createdName : undefined);
  if (name) ref.name = name;
  ref.apiGroup = info.servedGroup ?? info.apiGroup;
  ref.apiVersion = info.apiVersion;
  if (info.subresource) ref.subresource = info.subresource;
  return ref;
}

/** X-Forwarded-For's addresses then the peer's, as upstream's SourceIPs. */
function sourceIPs(req: IncomingMessage): string[] {
  const out: string[] = [];
  const fwd = req.headers['x-forwarded-for'];
  if (typeof fwd === 'string') for (const ip of fwd.split(',')) if (ip.trim()) out.push(ip.trim());
  const peer = req.socket.remoteAddress?.replace(/^::ffff:/, '');
  if (peer && !out.includes(peer)) out.push(peer);
  return out;
}
