import { hash } from 'node:crypto';
import type { Logger } from 'pino';
import { errors } from '../api/errors';
import { CelEvalError, type CelResultValue } from '../cel/program';
import type { CompiledJwtAuthenticator, Mapping } from './authentication-config';
import { jwtVerify, type JWTPayload } from './jose';
import type { OidcKeySource } from './oidc-keys';
import { peekClaims } from './service-account-token';
import { intersect, type TokenAuthenticator, type TokenResponse } from './token-authenticator';
import { TokenDecisionCache } from './token-cache';
import type { UserInfo } from '../api/user';

/** go-oidc's allowance for a not-before time slightly in the future; expiry has none. */
const NBF_LEEWAY_SECONDS = 300;
/** Accepted tokens are remembered this long (never past their expiry), as upstream's 10 s token success cache. */
const SUCCESS_TTL_MS = 10_000;

class ClaimError extends Error {}

export interface JwtAuthenticatorOptions {
  keys: OidcKeySource;
  /** API audiences: OIDC tokens are valid for these only (upstream wraps OIDC audience-agnostically). */
  apiAudiences: readonly string[];
  now: () => Date;
  log: Logger;
}

/**
 * One JWT issuer of 5.2/5.3, as upstream's oidc authenticator with the structured configuration:
 * signature by the provider's keys with an allowed algorithm, iss equal to the issuer URL, aud
 * matching one configured audience, exp required and not passed; then claim validation rules,
 * claim mappings (username, groups, uid, extra) and user validation rules. Any failure is a 401.
 */
export class JwtAuthenticator implements TokenAuthenticator {
  readonly name = 'jwt';
  readonly issuer: string;
  private readonly accepted: TokenDecisionCache<UserInfo>;

  constructor(
    readonly spec: CompiledJwtAuthenticator,
    private readonly o: JwtAuthenticatorOptions,
  ) {
    this.issuer = spec.config.issuer.url;
    this.accepted = new TokenDecisionCache(() => o.now().getTime());
  }

  /** Fetches the issuer's keys ahead of the first token; never rejects. */
  async warm(): Promise<void> {
    await this.o.keys.getKeys().catch(() => undefined);
  }

  /** Returns the mapped user for a valid token of this issuer; throws 401 otherwise; null when its audiences are not the API's. */
  async authenticateToken(token: string, audiences: readonly string[]): Promise<TokenResponse | null> {
    const auds = audiences.length === 0 ? [...this.o.apiAudiences] : intersect(audiences, this.o.apiAudiences);
    const key = hash('sha256', token, 'base64url');
    const user = await this.accepted.get(key, async () => {
      const claims = await this.verify(token);
      let u: UserInfo;
      try {
        u = this.map(claims);
      } catch (err) {
        if (err instanceof ClaimError) return this.reject(err.message);
        if (err instanceof CelEvalError) return this.reject(`oidc: error evaluating expression: ${err.message}`);
        throw err;
      }
      const untilExpiry = (claims.exp ?? 0) * 1000 - this.o.now().getTime();
      return { value: u, ttlMs: Math.max(0, Math.min(SUCCESS_TTL_MS, untilExpiry)) };
    });
    if (auds.length === 0) return null;
    return { user, audiences: auds };
  }

  private async verify(token: string): Promise<JWTPayload> {
    let keys;
    try {
      keys = await this.o.keys.getKeys();
    } catch (err) {
      return this.reject(`oidc: authenticator for issuer ${JSON.stringify(this.issuer)} is not initialized: ${(err as Error).message}`);
    }
    const kid = kidOf(token);
    if (kid !== undefined && !this.o.keys.hasKid(kid)) {
      // Key rotation: a new key id makes us look at the provider again (rate-limited).
      await this.o.keys.refresh(`unknown key id ${kid}`);
      keys = await this.o.keys.getKeys();
    }
    const now = this.o.now();
    try {
      const { payload } = await jwtVerify(token, keys, {
        algorithms: [...this.spec.signingAlgorithms],
        issuer: this.issuer,
        audience: this.spec.config.issuer.audiences,
        currentDate: now,
        clockTolerance: NBF_LEEWAY_SECONDS,
        requiredClaims: ['exp'],
      });
      if (typeof payload.exp !== 'number' || payload.exp * 1000 <= now.getTime()) return this.reject('oidc: verify token: token is expired');
      return payload;
    } catch (err) {
      return this.reject(`oidc: verify token: ${(err as Error).message}`);
    }
  }

  private map(claims: JWTPayload): UserInfo {
    const s = this.spec;
    const vars = { claims };
    for (const r of s.claimValidation) {
      if (r.kind === 'claim') {
        const v = claims[r.claim];
        if (v === undefined) throw new ClaimError(`oidc: required claim ${r.claim} not present in ID token`);
        if (v !== r.requiredValue) throw new ClaimError(`oidc: required claim ${r.claim} value does not match. Got = ${JSON.stringify(v)}, want = ${r.requiredValue}`);
      } else {
        const v = r.program.evaluate(vars);
        if (typeof v !== 'boolean') throw new ClaimError(`oidc: claim validation expression must return bool, got ${typeName(v)}`);
        if (!v) throw new ClaimError(`oidc: error evaluating claim validation expression: ${r.message || `expression '${r.program.source}' resulted in error`}`);
      }
    }
    const username = this.username(s.username, claims);
    const user: UserInfo = { username, groups: s.groups ? this.groups(s.groups, claims) : [] };
    if (s.uid) {
      const uid = s.uid.kind === 'claim' ? claimString(claims, s.uid.claim, 'uid') : asString(s.uid.program.evaluate(vars), 'uid');
      if (uid) user.uid = uid;
    }
    const extra: Record<string, string[]> = {};
    for (const e of s.extra) {
      const vals = stringList(e.program.evaluate(vars), `extra[${e.key}]`).filter((v) => v !== '');
      if (vals.length > 0) extra[e.key] = vals;
    }
    if (Object.keys(extra).length > 0) user.extra = extra;
    if (s.userValidation.length > 0) {
      const u = { user: { username: user.username, uid: user.uid ?? '', groups: user.groups, extra: user.extra ?? {} } };
      for (const r of s.userValidation) {
        const v = r.program.evaluate(u);
        if (typeof v !== 'boolean') throw new ClaimError(`oidc: user validation expression must return bool, got ${typeName(v)}`);
        if (!v) throw new ClaimError(`oidc: error evaluating user info validation rule: ${r.message || `validation expression '${r.program.source}' failed`}`);
      }
    }
    return user;
  }

  private username(m: Mapping, claims: JWTPayload): string {
    if (m.kind === 'claim') {
      const v = claimString(claims, m.claim, 'username');
      if (!v) throw new ClaimError(`oidc: parse username claims ${JSON.stringify(m.claim)}: claim not present`);
      // Upstream: a username taken from the email claim needs email_verified true when that claim is present.
      if (m.claim === 'email' && claims.email_verified !== undefined && claims.email_verified !== true) throw new ClaimError('oidc: email not verified');
      return m.prefix + v;
    }
    const v = asString(m.program.evaluate({ claims }), 'username');
    if (v === '') throw new ClaimError('oidc: claim mapping for username evaluated to an empty string');
    return v;
  }

  private groups(m: Mapping, claims: JWTPayload): string[] {
    if (m.kind === 'claim') {
      const v = claims[m.claim];
      if (v === undefined || v === null) return [];
      return stringList(v as CelResultValue, `groups claim ${m.claim}`).map((g) => m.prefix + g);
    }
    return stringList(m.program.evaluate({ claims }), 'groups');
  }

  private reject(why: string): never {
    this.o.log.debug({ authn: this.name, issuer: this.issuer, reason: why }, 'JWT rejected');
    throw errors.unauthorized(why);
  }
}

function kidOf(token: string): string | undefined {
  try {
    const h = JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString('utf8')) as { kid?: unknown };
    return typeof h.kid === 'string' ? h.kid : undefined;
  } catch {
    return undefined;
  }
}

function typeName(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'list' : typeof v;
}

function claimString(claims: JWTPayload, claim: string, what: string): string {
  const v = claims[claim];
  if (v === undefined) return '';
  if (typeof v !== 'string') throw new ClaimError(`oidc: parse ${what} claim ${JSON.stringify(claim)}: claim is not a string`);
  return v;
}

function asString(v: CelResultValue, what: string): string {
  if (typeof v !== 'string') throw new ClaimError(`oidc: ${what} expression must return a string, got ${typeName(v)}`);
  return v;
}

/** A string or list of strings, as groups and extra values may be. */
function stringList(v: CelResultValue, what: string): string[] {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v;
  throw new ClaimError(`oidc: ${what} must be a string or a list of strings, got ${typeName(v)}`);
}

/**
 * The JWT authenticators of the configuration, chosen by the token's (unverified) iss: a token
 * of an issuer nobody configured is "not mine". replace() swaps them on configuration reload.
 */
export class JwtAuthenticatorSet implements TokenAuthenticator {
  readonly name = 'jwt';
  private byIssuer = new Map<string, JwtAuthenticator>();

  /** Installs a new set of authenticators (atomically for requests that start afterwards). */
  replace(authenticators: readonly JwtAuthenticator[]): void {
    this.byIssuer = new Map(authenticators.map((a) => [a.issuer, a]));
  }

  /** The installed authenticators. */
  get authenticators(): JwtAuthenticator[] {
    return [...this.byIssuer.values()];
  }

  /** Returns null for tokens that are not JWTs of a configured issuer; else the issuer's decision. */
  async authenticateToken(token: string, audiences: readonly string[]): Promise<TokenResponse | null> {
    if (this.byIssuer.size === 0) return null;
    const iss = peekClaims(token)?.iss;
    if (typeof iss !== 'string') return null;
    const a = this.byIssuer.get(iss);
    return a ? a.authenticateToken(token, audiences) : null;
  }
}
