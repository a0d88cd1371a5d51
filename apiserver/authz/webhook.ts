import type { Agent } from 'undici';
import { undici } from '../api/lazy-undici';
import type { Logger } from 'pino';
import { fieldSelectorOf, labelSelectorOf } from './attributes';
import type { Attributes, Authorizer, Decision } from './authorizer';
import type { CompiledCondition } from './cel-conditions';
import type { WebhookEndpoint } from './webhook-kubeconfig';

export type FailurePolicy = 'NoOpinion' | 'Deny';

export interface WebhookOptions {
  /** Name used in reasons and logs (the configuration's authorizer name, or "webhook"). */
  name: string;
  endpoint: WebhookEndpoint;
  /** SubjectAccessReview version sent: v1 or v1beta1 (which names the groups field `group`). */
  version: 'v1' | 'v1beta1';
  timeoutMs: number;
  authorizedTtlMs: number;
  unauthorizedTtlMs: number;
  cacheAuthorized: boolean;
  cacheUnauthorized: boolean;
  failurePolicy: FailurePolicy;
  matchConditions: readonly CompiledCondition[];
  now: () => number;
  log: Logger;
}

type Result = { decision: Decision; reason?: string };

/** Upstream's default cap on cached decisions. */
const MAX_CACHE_ENTRIES = 10_000;

/**
 * The Webhook mode (A.3, A.4): POSTs a SubjectAccessReview to a remote service. status.allowed →
 * allow; allowed=false with denied=true → deny (ends evaluation); otherwise no opinion. Decisions
 * are cached (authorized and unauthorized TTLs, defaults 5m and 30s). matchConditions (CEL over
 * the SubjectAccessReview spec) decide whether the webhook is asked at all. A webhook that fails,
 * hangs past its timeout or answers garbage follows failurePolicy.
 */
export class WebhookAuthorizer implements Authorizer {
  readonly name: string;
  private readonly cache = new Map<string, { result: Result; expires: number }>();
  private readonly agent: Agent;

  constructor(private readonly o: WebhookOptions) {
    this.name = o.name;
    const e = o.endpoint;
    this.agent = new (undici().Agent)({ connect: { ca: e.caPem, cert: e.certPem, key: e.keyPem, rejectUnauthorized: !e.insecureSkipTlsVerify } });
  }

  async authorize(a: Attributes): Promise<Result> {
    const spec = reviewSpec(a);
    for (const c of this.o.matchConditions) {
      let ok: boolean;
      try {
        ok = c.eval(spec);
      } catch (err) {
        const reason = `${this.name}: matchCondition ${JSON.stringify(c.expression)} failed: ${(err as Error).message}`;
        return this.o.failurePolicy === 'Deny' ? { decision: 'deny', reason } : { decision: 'no-opinion', reason };
      }
      if (!ok) return { decision: 'no-opinion' };
    }
    const key = JSON.stringify(spec);
    const now = this.o.now();
    const hit = this.cache.get(key);
    if (hit && hit.expires > now) return hit.result;
    let result: Result;
    try {
      result = await this.call(spec);
    } catch (err) {
      this.o.log.warn({ err, webhook: this.name }, 'authorization webhook failed');
      const reason = `${this.name}: ${(err as Error).message}`;
      return this.o.failurePolicy === 'Deny' ? { decision: 'deny', reason } : { decision: 'no-opinion', reason };
    }
    const allowed = result.decision === 'allow';
    if ((allowed && this.o.cacheAuthorized) || (!allowed && this.o.cacheUnauthorized)) {
      if (this.cache.size >= MAX_CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(key, { result, expires: now + (allowed ? this.o.authorizedTtlMs : this.o.unauthorizedTtlMs) });
    }
    return result;
  }

  /** Releases the connection pool. */
  async close(): Promise<void> {
    await this.agent.close();
  }

  private async call(spec: Record<string, unknown>): Promise<Result> {
    const wire: Record<string, unknown> = { ...spec };
    if (this.o.version === 'v1beta1' && wire.groups) {
      wire.group = wire.groups;
      delete wire.groups;
    }
    const body = JSON.stringify({ apiVersion: `authorization.svc.io/${this.o.version}`, kind: 'SubjectAccessReview', spec: wire });
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.o.endpoint.token) headers.authorization = `Bearer ${this.o.endpoint.token}`;
    const signal = AbortSignal.timeout(this.o.timeoutMs);
    let text: string;
    let status: number;
    try {
      const res = await undici().request(this.o.endpoint.url, { method: 'POST', body, headers, dispatcher: this.agent, signal, headersTimeout: this.o.timeoutMs, bodyTimeout: this.o.timeoutMs });
      status = res.statusCode;
      text = await res.body.text();
    } catch (err) {
      if (signal.aborted) throw new Error(`timed out after ${this.o.timeoutMs} ms`, { cause: err });
      throw err;
    }
    if (status < 200 || status >= 300) throw new Error(`answered HTTP ${status}`);
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      throw new Error('answered something that is not JSON');
    }
    const st = typeof doc === 'object' && doc !== null ? (doc as Record<string, unknown>).status : undefined;
    if (typeof st !== 'object' || st === null) throw new Error('answer has no status');
    const s = st as Record<string, unknown>;
    if (s.allowed !== undefined && typeof s.allowed !== 'boolean') throw new Error('status.allowed is not a boolean');
    const reason = typeof s.reason === 'string' && s.reason ? s.reason : undefined;
    if (s.allowed === true) return { decision: 'allow', reason };
    if (s.denied === true) return { decision: 'deny', reason };
    return { decision: 'no-opinion', reason };
  }
}

/** The SubjectAccessReview v1 spec of a request (also what matchConditions see as `request`). */
export function reviewSpec(a: Attributes): Record<string, unknown> {
  const i = a.info;
  const spec: Record<string, unknown> = {};
  if (i.isResourceRequest) {
    const ra: Record<string, unknown> = { namespace: i.namespace, verb: i.verb, group: i.apiGroup, version: i.apiVersion, resource: i.resource, subresource: i.subresource, name: i.name };
    const fs = fieldSelectorOf(a);
    const ls = labelSelectorOf(a);
    if (fs.length) ra.fieldSelector = { requirements: fs };
    if (ls.length) ra.labelSelector = { requirements: ls };
    spec.resourceAttributes = ra;
  } else {
    spec.nonResourceAttributes = { path: i.path, verb: i.verb };
  }
  spec.user = a.user.username;
  spec.groups = [...a.user.groups];
  if (a.user.extra && Object.keys(a.user.extra).length) spec.extra = a.user.extra;
  if (a.user.uid) spec.uid = a.user.uid;
  return spec;
}
