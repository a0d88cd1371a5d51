import { hash } from 'node:crypto';
import type { Logger } from 'pino';
import { errors } from '../api/errors';
import { isObject } from '../api/types';
import { intersect, type TokenAuthenticator, type TokenResponse } from './token-authenticator';
import { TokenDecisionCache } from './token-cache';
import type { UserInfo } from '../api/user';
import { WebhookClient, type WebhookClientConfig } from './webhook-client-config';

export type TokenReviewVersion = 'authentication.svc.io/v1' | 'authentication.svc.io/v1beta1';

/** Spec 5.4 and section 8: decisions are cached 2 minutes by default. */
export const DEFAULT_WEBHOOK_CACHE_TTL_MS = 120_000;
/** Bound on one webhook call: a hanging webhook turns into a 401 after this long, never a stuck request. */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000;

export interface WebhookTokenOptions {
  client: WebhookClientConfig;
  /** --authentication-token-webhook-version; default v1beta1 (spec 5.4). */
  version?: TokenReviewVersion;
  /** --authentication-token-webhook-cache-ttl. */
  cacheTtlMs?: number;
  timeoutMs?: number;
  /** Audiences a token is valid for when the webhook names none (the API server's). */
  apiAudiences: readonly string[];
  now?: () => number;
  log: Logger;
}

type Decision = { ok: true; response: TokenResponse } | { ok: false };

/**
 * Webhook token authentication (5.4, 4.12), as upstream's webhook token authenticator: POSTs a
 * TokenReview of the configured version with spec.token and spec.audiences and believes the
 * status of an answer of the same version. Accepted and refused decisions are cached for the
 * TTL (keyed by a digest of token and audiences, never the token itself); failures (timeouts,
 * bad answers, status.error) are not cached and answer 401.
 */
export class WebhookTokenAuthenticator implements TokenAuthenticator {
  readonly name = 'webhook';
  private readonly client: WebhookClient;
  private readonly cache: TokenDecisionCache<Decision>;
  private readonly version: TokenReviewVersion;
  private readonly ttl: number;

  constructor(private readonly o: WebhookTokenOptions) {
    this.version = o.version ?? 'authentication.svc.io/v1beta1';
    this.ttl = o.cacheTtlMs ?? DEFAULT_WEBHOOK_CACHE_TTL_MS;
    this.client = new WebhookClient(o.client, o.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS);
    this.cache = new TokenDecisionCache(o.now ?? Date.now);
  }

  /** Returns the webhook's user, null when it says the token is unknown, throws 401 on failure or a reported error. */
  async authenticateToken(token: string, audiences: readonly string[]): Promise<TokenResponse | null> {
    // One-shot hashing (no Hash object per request); a header value cannot hold NUL, so the joined text is unambiguous.
    const key = hash('sha256', `${token}\0${audiences.join('\0')}`, 'base64url');
    const d = await this.cache.get(key, async () => ({ value: await this.ask(token, audiences), ttlMs: this.ttl }));
    return d.ok ? d.response : null;
  }

  private async ask(token: string, audiences: readonly string[]): Promise<Decision> {
    const review = { apiVersion: this.version, kind: 'TokenReview', metadata: { creationTimestamp: null }, spec: { token, ...(audiences.length > 0 ? { audiences } : {}) }, status: {} };
    let answer: { status: number; body: unknown };
    try {
      answer = await this.client.post(review);
    } catch (err) {
      return this.fail((err as Error).message);
    }
    if (answer.status < 200 || answer.status > 299) return this.fail(`webhook answered HTTP ${answer.status}`);
    const b = answer.body;
    if (!isObject(b)) return this.fail('webhook answer is not an object');
    if (b.apiVersion !== this.version) return this.fail(`webhook answered apiVersion ${JSON.stringify(b.apiVersion)}, expected ${this.version}`);
    if (b.kind !== 'TokenReview') return this.fail(`webhook answered kind ${JSON.stringify(b.kind)}, expected TokenReview`);
    const st = isObject(b.status) ? b.status : {};
    if (st.authenticated !== true) {
      // status.error is only a reason, reported but not cached (upstream caches only clean refusals).
      if (typeof st.error === 'string' && st.error !== '') return this.fail(st.error);
      return { ok: false };
    }
    const user = userOf(st.user);
    if (!user) return this.fail('webhook accepted the token but named no user');
    const given = Array.isArray(st.audiences) ? st.audiences.filter((a): a is string => typeof a === 'string') : [];
    // No audiences in the answer: valid for the API server only (5.4).
    const auds = given.length > 0 ? intersect(audiences, given) : intersect(audiences, this.o.apiAudiences);
    if (auds.length === 0) return { ok: false };
    return { ok: true, response: { user, audiences: auds } };
  }

  private fail(why: string): never {
    this.o.log.warn({ authn: this.name, reason: why }, 'webhook token authentication failed');
    throw errors.unauthorized(why);
  }

  /** Closes the webhook connection pool. */
  async close(): Promise<void> {
    await this.client.close();
  }
}

function userOf(v: unknown): UserInfo | undefined {
  if (!isObject(v) || typeof v.username !== 'string' || v.username === '') return undefined;
  const u: UserInfo = { username: v.username, groups: Array.isArray(v.groups) ? v.groups.filter((g): g is string => typeof g === 'string') : [] };
  if (typeof v.uid === 'string' && v.uid !== '') u.uid = v.uid;
  if (isObject(v.extra)) {
    const extra: Record<string, string[]> = {};
    for (const [k, vals] of Object.entries(v.extra)) {
      if (Array.isArray(vals)) extra[k] = vals.filter((x): x is string => typeof x === 'string');
    }
    if (Object.keys(extra).length > 0) u.extra = extra;
  }
  return u;
}
