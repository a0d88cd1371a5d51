import { intersect, type TokenAuthenticator } from './token-authenticator';
import type { UserInfo } from '../api/user';

export const AUTHENTICATED_GROUP = 'system:authenticated';

/** The status of a TokenReview (spec 2.7). */
export interface TokenReviewStatus {
  authenticated: boolean;
  user?: UserInfo;
  audiences?: string[];
  error?: string;
}

/**
 * Users a method hands out again and again (a verified service account token's) are frozen; their
 * copy with system:authenticated is made once, not on every request.
 */
const withGroupOfShared = new WeakMap<UserInfo, UserInfo>();

/** Adds system:authenticated once, as the authenticator chain does for every authenticated user (5). */
export function withAuthenticatedGroup(u: UserInfo): UserInfo {
  if (u.groups.includes(AUTHENTICATED_GROUP)) return u;
  if (!Object.isFrozen(u)) return { ...u, groups: [...u.groups, AUTHENTICATED_GROUP] };
  let w = withGroupOfShared.get(u);
  if (!w) withGroupOfShared.set(u, (w = Object.freeze({ ...u, groups: Object.freeze([...u.groups, AUTHENTICATED_GROUP]) as string[] })));
  return w;
}

/**
 * Runs the token methods on a TokenReview's token, as upstream's tokenreview REST: spec.audiences
 * (or, when empty, the API audiences) are the audiences asked for; an accepted token must be
 * valid for at least one of them. Errors become status.error, never a failed request.
 */
export class TokenReviewer {
  constructor(
    private readonly tokens: TokenAuthenticator,
    private readonly apiAudiences: readonly string[],
  ) {}

  /** Never rejects: every outcome is a status. */
  async review(token: string, audiences: readonly string[] = []): Promise<TokenReviewStatus> {
    const auds = audiences.length > 0 ? audiences : this.apiAudiences;
    try {
      const r = await this.tokens.authenticateToken(token, auds);
      if (!r) return { authenticated: false };
      const valid = r.audiences.length === 0 ? [...auds] : intersect(r.audiences, auds);
      if (valid.length === 0) return { authenticated: false, error: 'token audiences do not match the requested audiences' };
      return { authenticated: true, user: withAuthenticatedGroup(r.user), audiences: valid };
    } catch (err) {
      return { authenticated: false, error: (err as Error).message };
    }
  }
}
