import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import { errors } from '../api/errors';
import type { KObject } from '../api/types';
import { bearerToken, type BearerTokenMethod } from './authenticator';
import type { UserInfo } from '../api/user';

/** Where bootstrap token Secrets live and how they are named and typed (spec 2.7). */
export const BOOTSTRAP_TOKEN_NAMESPACE = 'svc-system';
export const BOOTSTRAP_TOKEN_SECRET_PREFIX = 'bootstrap-token-';
export const BOOTSTRAP_TOKEN_SECRET_TYPE = 'bootstrap.svc.io/token';
export const BOOTSTRAPPERS_GROUP = 'system:bootstrappers';

/** Token form of spec 5.1: a public six-character id, a dot, a sixteen-character secret. */
const TOKEN_PATTERN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
/** auth-extra-groups entries upstream accepts (bootstrapapi.BootstrapGroupPattern). */
const EXTRA_GROUP_PATTERN = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;

/** Reads a Secret; null when it does not exist; rejects only on store failure. */
export interface SecretGetter {
  get(kind: 'Secret', namespace: string, name: string): Promise<KObject | null>;
}

export interface BootstrapTokenOptions {
  now: () => Date;
  log: Logger;
}

/**
 * Bootstrap token authentication (--enable-bootstrap-token-auth, spec 5.1 and 2.7), as upstream's
 * plugin/pkg/auth/authenticator/token/bootstrap: a bearer token "<id>.<secret>" is checked
 * against Secret svc-system/bootstrap-token-<id> of type bootstrap.svc.io/token. A token of that
 * form is always decided here: accepted as system:bootstrap:<id>, or rejected with 401 (never
 * passed on to anonymous). Other bearer tokens are "not mine". The secret part is never logged.
 * Upstream reads the Secret from an informer lister of kube-system; authentication.ts hands in
 * the same kind of watch-fed cache (with a live read on a miss), so a deleted token stops
 * working once the watch delivers the deletion (milliseconds), not on the very next request.
 */
export class BootstrapTokenAuthenticator implements BearerTokenMethod {
  readonly name = 'bootstrap-token';

  constructor(
    private readonly secrets: SecretGetter,
    private readonly opts: BootstrapTokenOptions,
  ) {}

  /** Returns the bootstrapper for a valid token, null for a bearer token of another form, and throws 401 otherwise. */
  async authenticate(req: IncomingMessage): Promise<UserInfo | null> {
    const token = bearerToken(req);
    return token === undefined ? null : this.authenticateBearer(token);
  }

  async authenticateBearer(token: string): Promise<UserInfo | null> {
    const m = TOKEN_PATTERN.exec(token);
    if (!m) return null;
    const [, id, secret] = m;
    const reject = (why: string): never => {
      // Upstream's tokenErrorf wording: the Secret's name and what is wrong, never the token itself.
      this.opts.log.info({ tokenId: id }, `Bootstrap secret ${BOOTSTRAP_TOKEN_NAMESPACE}/${BOOTSTRAP_TOKEN_SECRET_PREFIX}${id} ${why}`);
      throw errors.unauthorized();
    };
    const s = await this.secrets.get('Secret', BOOTSTRAP_TOKEN_NAMESPACE, BOOTSTRAP_TOKEN_SECRET_PREFIX + id);
    if (!s) return reject('not found to match the bootstrap bearer token');
    if (s.metadata.deletionTimestamp) return reject('is deleted and awaiting removal');
    if (s.type !== BOOTSTRAP_TOKEN_SECRET_TYPE) return reject(`has invalid type, expected ${BOOTSTRAP_TOKEN_SECRET_TYPE}.`);
    const data = decodedData(s);
    if (!constantTimeEqual(data['token-secret'] ?? '', secret)) return reject('has invalid value for key token-secret.');
    if (data['token-id'] !== id) return reject('has invalid value for key token-id.');
    if (hasExpired(data, this.opts.now())) return reject('has expired.');
    if (data['usage-bootstrap-authentication'] !== 'true') return reject('not marked usage-bootstrap-authentication=true.');
    return { username: `system:bootstrap:${id}`, groups: this.groups(id, data['auth-extra-groups']) };
  }

  /**
   * system:bootstrappers first, then each valid auth-extra-groups entry once. Upstream rejects the
   * whole token when one entry is malformed; here a bad entry is dropped with a log line, so a typo
   * in an extra group does not lock a node out of joining with the base group.
   */
  private groups(id: string, extra: string | undefined): string[] {
    const groups = [BOOTSTRAPPERS_GROUP];
    for (const raw of (extra ?? '').split(',')) {
      const g = raw.trim();
      if (g === '' || groups.includes(g)) continue;
      if (!EXTRA_GROUP_PATTERN.test(g)) {
        this.opts.log.warn({ tokenId: id, group: g }, `bootstrap token auth-extra-groups entry ignored: it must match ${EXTRA_GROUP_PATTERN.source}`);
        continue;
      }
      groups.push(g);
    }
    return groups;
  }
}

/**
 * Decoded data per Secret object. The getter hands out the cache's shared, never-modified
 * objects, so each token Secret is decoded once per version instead of on every request; live
 * reads are fresh objects and their entries go with them.
 */
const decoded = new WeakMap<KObject, Record<string, string>>();

function decodedData(s: KObject): Record<string, string> {
  let d = decoded.get(s);
  if (!d) decoded.set(s, (d = secretData(s)));
  return d;
}

/** Decoded data of a Secret (values are base64 on the wire; stringData is folded in by the Secret type on write). */
export function secretData(s: KObject): Record<string, string> {
  const out: Record<string, string> = {};
  const data = s.data;
  if (typeof data !== 'object' || data === null) return out;
  for (const [k, v] of Object.entries(data as Record<string, unknown>)) {
    if (typeof v === 'string') out[k] = Buffer.from(v, 'base64').toString('utf8');
  }
  return out;
}

/**
 * Whether the token's expiration (RFC 3339) has passed. As upstream's bootstrapsecretutil:
 * no expiration never expires; an unparseable one counts as expired.
 */
export function hasExpired(data: Record<string, string>, now: Date): boolean {
  const exp = data.expiration;
  if (exp === undefined || exp === '') return false;
  const t = parseRfc3339(exp);
  return t === undefined || now.getTime() >= t;
}

/** Milliseconds since the epoch of an RFC 3339 date-time, or undefined when it is not one. */
export function parseRfc3339(s: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(s)) return undefined;
  const t = Date.parse(s);
  return Number.isNaN(t) ? undefined : t;
}

/**
 * Compares in constant time for equal lengths, as upstream's subtle.ConstantTimeCompare: a
 * length mismatch answers at once (the presented secret always has sixteen characters, so only
 * a malformed stored secret's length could show, and that is no secret worth guarding).
 */
function constantTimeEqual(a: string, b: string): boolean {
  const da = Buffer.from(a, 'utf8');
  const db = Buffer.from(b, 'utf8');
  return da.length === db.length && timingSafeEqual(da, db);
}
