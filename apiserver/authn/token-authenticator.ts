import type { IncomingMessage } from 'node:http';
import { ApiError, errors } from '../api/errors';
import { bearerToken, type Authenticator, type BearerTokenMethod } from './authenticator';
import type { UserInfo } from '../api/user';

/** What a token method answers: the user and the audiences the token is valid for (upstream authenticator.Response). */
export interface TokenResponse {
  user: UserInfo;
  audiences: string[];
}

/**
 * A bearer token method (5.1: service account JWTs, OIDC, webhook, static and bootstrap tokens),
 * usable both for requests and for TokenReview. `audiences` are the audiences the caller wants
 * the token to be valid for: the API audiences for a request, spec.audiences for a TokenReview.
 */
export interface TokenAuthenticator {
  readonly name: string;
  /** Returns the user for a token this method accepts, null for a token it does not recognise, and throws a 401 ApiError for a token of its kind that is invalid. */
  authenticateToken(token: string, audiences: readonly string[]): Promise<TokenResponse | null>;
}

/** The audiences in both lists (upstream authenticator.Audiences.Intersect). */
export function intersect(a: readonly string[], b: readonly string[]): string[] {
  // Audience lists hold one or a few entries: a linear scan beats building a Set per request.
  return a.filter((x) => b.includes(x));
}

/**
 * Tries token methods in order; the first acceptance decides. As upstream's union
 * authenticator, an error from one method does not stop the others: a token only fails when no
 * method accepts it, and then with the first error seen (or a plain 401).
 */
export class TokenAuthenticatorUnion implements TokenAuthenticator {
  readonly name = 'tokens';
  constructor(private readonly methods: () => readonly TokenAuthenticator[]) {}

  /** Returns the first acceptance, null when no method recognises the token, or throws the first method error. */
  async authenticateToken(token: string, audiences: readonly string[]): Promise<TokenResponse | null> {
    let first: unknown;
    for (const m of this.methods()) {
      try {
        const r = await m.authenticateToken(token, audiences);
        if (r) return r;
      } catch (err) {
        first ??= err;
      }
    }
    // Rethrows what the method threw, whatever its type.
    if (first !== undefined) throw first as unknown;
    return null;
  }
}

/**
 * The request-side adapter: the Authorization bearer token checked against the API audiences.
 * A bearer token no method accepts is a 401 here, never anonymous (5.6).
 */
export class BearerTokenAuthenticator implements Authenticator {
  readonly name = 'bearer-token';
  constructor(
    private readonly tokens: TokenAuthenticator,
    private readonly apiAudiences: readonly string[],
    /** Told why a token failed (the client only sees a plain 401, as upstream). */
    private readonly onReject: (err: unknown) => void = () => undefined,
  ) {}

  /** Returns the token's user, null without a bearer token, and throws 401 for a token nobody accepts. */
  async authenticate(req: IncomingMessage): Promise<UserInfo | null> {
    const token = bearerToken(req);
    if (token === undefined || token === '') return null;
    let r: TokenResponse | null;
    try {
      r = await this.tokens.authenticateToken(token, this.apiAudiences);
    } catch (err) {
      // Store or webhook failures are 401s too: the request could not be authenticated.
      this.onReject(err);
      throw errors.unauthorized();
    }
    if (!r) throw errors.unauthorized();
    return r.user;
  }
}

/**
 * Wraps a request authenticator that only looks at the bearer token (static token file,
 * bootstrap tokens) as a token method. Such tokens carry no audience: as upstream's
 * WrapAudienceAgnosticToken, they are valid for the API audiences only, so a TokenReview asking
 * for other audiences does not accept them.
 */
export class AudienceAgnosticToken implements TokenAuthenticator {
  readonly name: string;
  constructor(
    private readonly inner: Authenticator,
    private readonly apiAudiences: readonly string[],
  ) {
    this.name = inner.name;
  }

  /** Returns the inner method's user with the API audiences the caller asked for; null when it does not accept the token or the audiences do not overlap. */
  async authenticateToken(token: string, audiences: readonly string[]): Promise<TokenResponse | null> {
    // A request asks for exactly the API audiences (the same array): nothing to intersect, and
    // no list built for the many tokens this method does not know.
    const auds = audiences === this.apiAudiences ? undefined : audiences.length === 0 ? [...this.apiAudiences] : intersect(audiences, this.apiAudiences);
    if (auds?.length === 0) return null;
    const user = isBearerTokenMethod(this.inner) ? await this.inner.authenticateBearer(token) : await this.inner.authenticate(syntheticBearerRequest(token));
    return user ? { user, audiences: auds ?? [...this.apiAudiences] } : null;
  }
}

function isBearerTokenMethod(a: Authenticator): a is BearerTokenMethod {
  return typeof (a as Partial<BearerTokenMethod>).authenticateBearer === 'function';
}

/** A stand-in request carrying only the bearer token, for request authenticators that read nothing else. */
export function syntheticBearerRequest(token: string): IncomingMessage {
  return { headers: { authorization: `Bearer ${token}` }, socket: {}, url: '/', method: 'POST' } as unknown as IncomingMessage;
}

/** True for the 401 errors token methods throw (other errors are internal failures). */
export function isUnauthorized(err: unknown): err is ApiError {
  return err instanceof ApiError && err.code === 401;
}
