import { hash, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { errors } from '../api/errors';
import type { KObject } from '../api/types';
import { decodeJwt, jwtVerify, SignJWT, type JWTPayload } from './jose';
import type { SaSigningKey, SaVerificationKey } from './service-account-keys';
import { intersect, type TokenAuthenticator, type TokenResponse } from './token-authenticator';
import { TokenDecisionCache } from './token-cache';
import type { UserInfo } from '../api/user';

/** The private claim holding the binding (upstream "kubernetes.io"). */
export const SA_PRIVATE_CLAIM = 'svc.io';
/** Extra keys describing the token's binding (upstream authentication.kubernetes.io/...). */
export const EXTRA_POD_NAME = 'authentication.svc.io/pod-name';
export const EXTRA_POD_UID = 'authentication.svc.io/pod-uid';
export const EXTRA_NODE_NAME = 'authentication.svc.io/node-name';
export const EXTRA_NODE_UID = 'authentication.svc.io/node-uid';
export const EXTRA_CREDENTIAL_ID = 'authentication.svc.io/credential-id';

const SA_PREFIX = 'system:serviceaccount:';
/** Clock skew accepted on exp and nbf, as go-jose's default leeway upstream uses. */
const LEEWAY_SECONDS = 60;
/** How long a verified signature is remembered (never past the token's expiry); lookups still run on every use. */
const VERIFIED_TTL_MS = 5 * 60_000;

export interface ObjectRef {
  name: string;
  uid: string;
}

/** The private claim's shape (upstream serviceaccount.privateClaims' kubernetes.io part). */
export interface SaPrivateClaim {
  namespace: string;
  serviceaccount: ObjectRef;
  pod?: ObjectRef;
  secret?: ObjectRef;
  node?: ObjectRef;
}

/** The username of a service account (5.1). */
export function serviceAccountUsername(namespace: string, name: string): string {
  return `${SA_PREFIX}${namespace}:${name}`;
}

/** Namespace and name of a service account username, or undefined when it is not one. */
export function splitServiceAccountUsername(username: string): { namespace: string; name: string } | undefined {
  if (!username.startsWith(SA_PREFIX)) return undefined;
  const parts = username.slice(SA_PREFIX.length).split(':');
  if (parts.length !== 2 || !parts[0] || !parts[1]) return undefined;
  return { namespace: parts[0], name: parts[1] };
}

/** Groups of every service account and of those in one namespace (5.1). */
export function serviceAccountGroups(namespace: string): string[] {
  return ['system:serviceaccounts', `system:serviceaccounts:${namespace}`];
}

/** The user a token with this binding authenticates as, with the binding in extra (upstream ServiceAccountInfo.UserInfo). */
export function serviceAccountUser(c: SaPrivateClaim, jti?: string): UserInfo {
  const extra: Record<string, string[]> = {};
  if (c.pod) {
    extra[EXTRA_POD_NAME] = [c.pod.name];
    extra[EXTRA_POD_UID] = [c.pod.uid];
  }
  if (c.node) {
    extra[EXTRA_NODE_NAME] = [c.node.name];
    if (c.node.uid) extra[EXTRA_NODE_UID] = [c.node.uid];
  }
  if (jti) extra[EXTRA_CREDENTIAL_ID] = [`JTI=${jti}`];
  return {
    username: serviceAccountUsername(c.namespace, c.serviceaccount.name),
    uid: c.serviceaccount.uid,
    groups: serviceAccountGroups(c.namespace),
    ...(Object.keys(extra).length > 0 ? { extra } : {}),
  };
}

export interface IssueRequest {
  binding: SaPrivateClaim;
  audiences: readonly string[];
  expirationSeconds: number;
}

/** Signs bound service account tokens (the TokenRequest API, serviceaccounts/{name}/token). */
export class ServiceAccountTokenIssuer {
  constructor(
    private readonly key: SaSigningKey,
    /** The first --service-account-issuer: the iss of every token made here. */
    readonly issuer: string,
    private readonly now: () => Date,
  ) {}

  /** Returns a signed JWT and its expiry; never fails for valid input. */
  async issue(r: IssueRequest): Promise<{ token: string; expirationTimestamp: Date }> {
    const nowS = Math.floor(this.now().getTime() / 1000);
    const exp = nowS + r.expirationSeconds;
    const token = await new SignJWT({ [SA_PRIVATE_CLAIM]: r.binding as unknown as Record<string, unknown> })
      .setProtectedHeader({ alg: this.key.alg, kid: this.key.kid })
      .setIssuer(this.issuer)
      .setSubject(serviceAccountUsername(r.binding.namespace, r.binding.serviceaccount.name))
      .setAudience([...r.audiences])
      .setIssuedAt(nowS)
      .setNotBefore(nowS)
      .setExpirationTime(exp)
      .setJti(randomUUID())
      .sign(this.key.privateKey);
    return { token, expirationTimestamp: new Date(exp * 1000) };
  }
}

/** Reads the objects a token is bound to; null when absent. */
export interface BoundObjectGetter {
  /** Resolves the object or null; rejects only on store failure. */
  get(kind: 'ServiceAccount' | 'Pod' | 'Secret' | 'Node', namespace: string, name: string): Promise<KObject | null>;
}

export interface ServiceAccountAuthenticatorOptions {
  /** --service-account-issuer values: tokens with another iss are not this method's. */
  issuers: readonly string[];
  keys: readonly SaVerificationKey[];
  /** --service-account-lookup: check the account and bound objects still exist with the token's uids. */
  lookup?: BoundObjectGetter;
  now: () => Date;
  log: Logger;
}

/**
 * Service account JWTs (5.1), as upstream's serviceaccount.JWTTokenAuthenticator for bound
 * tokens. A JWT whose iss is not one of ours is "not mine" (OIDC may own it). Only the algorithm
 * each configured key dictates is accepted: alg "none", HMAC with a public key as secret and
 * any other algorithm confusion are refused. With lookup, a token of a deleted account, or bound
 * to a Pod/Secret/Node that is gone or has another uid, is refused (revocation).
 */
export class ServiceAccountTokenAuthenticator implements TokenAuthenticator {
  readonly name = 'service-account';
  private readonly issuers: ReadonlySet<string>;
  /**
   * Signature checks are the expensive part (RSA/ECDSA verify); their result depends only on the
   * token and the clock. What a verified token means (its binding and user) is worked out once
   * here too, so a cached token costs a hash, the audience check and the lookups.
   */
  private readonly verified: TokenDecisionCache<VerifiedToken>;

  constructor(private readonly o: ServiceAccountAuthenticatorOptions) {
    this.issuers = new Set(o.issuers);
    this.verified = new TokenDecisionCache(() => o.now().getTime());
  }

  /** Returns the account's user for a valid token of ours, null for other tokens, throws 401 otherwise. */
  async authenticateToken(token: string, audiences: readonly string[]): Promise<TokenResponse | null> {
    if (!looksLikeJwt(token)) return null;
    // The cache is keyed by a digest, never the token, as upstream's token cache (no secret kept
    // in memory, no variable-time comparison of secrets). Only the signature, the part that makes
    // the token a secret, is hashed: for an RS256 token that is a third of the text, and hashing
    // all of it cost more than the rest of this method. A hit must then carry the very same
    // signed part, compared in full; a forged signed part with a known signature is verified on
    // its own (and fails).
    const dot = token.lastIndexOf('.');
    const signed = token.slice(0, dot);
    const key = hash('sha256', token.slice(dot + 1), 'base64url');
    let v = this.verified.peek(key);
    if (v?.signed !== signed) {
      // A token verified before was ours (its iss was checked then): a hit skips decoding it again.
      const unverified = peekClaims(token);
      if (!unverified || typeof unverified.iss !== 'string' || !this.issuers.has(unverified.iss)) return null;
      let mine = false;
      const check = async () => {
        mine = true;
        const p = await this.verify(token);
        const untilExpiry = ((p.exp ?? 0) + LEEWAY_SECONDS) * 1000 - this.o.now().getTime();
        return { value: prepare(detached(signed), p), ttlMs: Math.max(0, Math.min(VERIFIED_TTL_MS, untilExpiry)) };
      };
      // Concurrent requests with one signature share one check. A request whose signed part
      // differs from the one checked gets its own check, also when that shared check failed (it
      // may have been another token's).
      const shared = this.verified.get(key, check);
      if (mine) v = await shared;
      else v = await shared.catch(() => undefined);
      if (v?.signed !== signed) v = (await check()).value;
    }
    // Requests ask with the same API audiences array every time: the answer for it is kept.
    let answer = v.answerFor === audiences ? v.answer : undefined;
    if (!answer) {
      const auds = intersect(audiences, v.audiences);
      if (auds.length === 0) return this.reject('token audiences do not match the requested audiences');
      if (typeof v.binding === 'string') return this.reject(v.binding);
      answer = { user: v.user!, audiences: auds };
      v.answerFor = audiences;
      v.answer = answer;
    }
    if (this.o.lookup) await this.validateBinding(v.binding as SaPrivateClaim);
    return answer;
  }

  private async verify(token: string): Promise<JWTPayload> {
    const header = peekHeader(token);
    const candidates = header?.kid ? this.o.keys.filter((k) => k.kid === header.kid) : [];
    // Upstream tries every key when the kid is unknown or absent; a kid is a hint, not a trust decision.
    const keys = candidates.length > 0 ? candidates : this.o.keys;
    let why = 'no service account verification keys configured';
    for (const k of keys) {
      try {
        const { payload } = await jwtVerify(token, k.key, {
          algorithms: [k.alg],
          currentDate: this.o.now(),
          clockTolerance: LEEWAY_SECONDS,
          requiredClaims: ['exp', 'iat', 'sub'],
        });
        return payload;
      } catch (err) {
        why = (err as Error).message;
        // Claim failures (expired, not yet valid) are decided by the first key whose signature matched.
        if ((err as { code?: string }).code === 'ERR_JWT_EXPIRED' || (err as { code?: string }).code === 'ERR_JWT_CLAIM_VALIDATION_FAILED') break;
      }
    }
    return this.reject(why);
  }

  private async validateBinding(b: SaPrivateClaim): Promise<void> {
    const lookup = this.o.lookup!;
    const sa = await lookup.get('ServiceAccount', b.namespace, b.serviceaccount.name);
    if (!sa) return this.reject(`service account ${b.namespace}/${b.serviceaccount.name} has been deleted`);
    if (sa.metadata.uid !== b.serviceaccount.uid) return this.reject(`service account UID (${sa.metadata.uid}) does not match claim (${b.serviceaccount.uid})`);
    if (sa.metadata.deletionTimestamp) return this.reject(`service account ${b.namespace}/${b.serviceaccount.name} is being deleted`);
    if (b.pod) await this.validateBound(lookup, 'Pod', b.namespace, b.pod);
    if (b.secret) await this.validateBound(lookup, 'Secret', b.namespace, b.secret);
    // A pod-bound token names its node for information; only a token bound to the node itself is revoked with it.
    if (b.node && !b.pod) await this.validateBound(lookup, 'Node', '', b.node);
  }

  private async validateBound(lookup: BoundObjectGetter, kind: 'Pod' | 'Secret' | 'Node', ns: string, ref: ObjectRef): Promise<void> {
    const o = await lookup.get(kind, ns, ref.name);
    if (!o) return this.reject(`${kind.toLowerCase()} ${ns ? ns + '/' : ''}${ref.name} referenced by the token has been deleted`);
    if (o.metadata.uid !== ref.uid) return this.reject(`${kind} UID (${o.metadata.uid}) does not match claim (${ref.uid})`);
    if (o.metadata.deletionTimestamp) return this.reject(`${kind.toLowerCase()} ${ns ? ns + '/' : ''}${ref.name} referenced by the token is being deleted`);
  }

  private reject(why: string): never {
    this.o.log.debug({ authn: this.name, reason: why }, 'service account token rejected');
    throw errors.unauthorized(`invalid bearer token, ${why}`);
  }
}

/** A verified token's meaning: its audiences, and its binding and user, or why its claims are unusable. */
interface VerifiedToken {
  /** The token without its signature: header and payload as presented. */
  signed: string;
  audiences: readonly string[];
  /** The binding, or the reason the token cannot be used (kept so the audience check still answers first, as before caching). */
  binding: SaPrivateClaim | string;
  /** Shared by every request with this token, so frozen. */
  user?: UserInfo;
  /** The last accepted answer and the audiences array it was for (callers must not modify it). */
  answerFor?: readonly string[];
  answer?: TokenResponse;
}

function prepare(signed: string, p: JWTPayload): VerifiedToken {
  const audiences = typeof p.aud === 'string' ? [p.aud] : (p.aud ?? []);
  const binding = bindingOf(p);
  if (!binding) return { signed, audiences, binding: 'token lacks a valid service account claim' };
  if (p.sub !== serviceAccountUsername(binding.namespace, binding.serviceaccount.name)) return { signed, audiences, binding: 'token subject does not match its service account claim' };
  return { signed, audiences, binding, user: deepFreeze(serviceAccountUser(binding, typeof p.jti === 'string' ? p.jti : undefined)) };
}

/**
 * A copy of a substring that does not keep its parent alive: V8 may represent a slice as a view
 * of the whole string, which here is the token with its signature, and the cache must not hold it.
 */
function detached(s: string): string {
  return Buffer.from(s, 'latin1').toString('latin1');
}

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null) {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

/** Whether the text has the three dot-separated parts of a compact JWT (cheap; bootstrap and static tokens do not). */
function looksLikeJwt(token: string): boolean {
  const first = token.indexOf('.');
  if (first <= 0) return false;
  const second = token.indexOf('.', first + 1);
  return second > first + 1 && token.indexOf('.', second + 1) === -1;
}

/** The payload of a compact JWT without verifying it, or undefined when the text is not one. */
export function peekClaims(token: string): JWTPayload | undefined {
  if (token.split('.').length !== 3) return undefined;
  try {
    return decodeJwt(token);
  } catch {
    return undefined;
  }
}

function peekHeader(token: string): { alg?: string; kid?: string } | undefined {
  try {
    const h = JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString('utf8')) as unknown;
    return typeof h === 'object' && h !== null ? (h) : undefined;
  } catch {
    return undefined;
  }
}

function ref(v: unknown): ObjectRef | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const r = v as Record<string, unknown>;
  return typeof r.name === 'string' && r.name !== '' ? { name: r.name, uid: typeof r.uid === 'string' ? r.uid : '' } : undefined;
}

function bindingOf(p: JWTPayload): SaPrivateClaim | undefined {
  const c = p[SA_PRIVATE_CLAIM];
  if (typeof c !== 'object' || c === null) return undefined;
  const r = c as Record<string, unknown>;
  const sa = ref(r.serviceaccount);
  if (typeof r.namespace !== 'string' || r.namespace === '' || !sa) return undefined;
  const out: SaPrivateClaim = { namespace: r.namespace, serviceaccount: sa };
  const pod = ref(r.pod);
  const secret = ref(r.secret);
  const node = ref(r.node);
  if (pod) out.pod = pod;
  if (secret) out.secret = secret;
  if (node) out.node = node;
  return out;
}
