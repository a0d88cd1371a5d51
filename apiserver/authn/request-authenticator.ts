import type { IncomingMessage } from 'node:http';
import { ApiError, errors } from '../api/errors';
import { anonymousAllowed, type AnonymousPolicy } from './anonymous';
import { bearerToken, type Authenticator } from './authenticator';
import { withAuthenticatedGroup } from './token-reviewer';
import { anonymousUser, type UserInfo } from '../api/user';

/**
 * The request authenticator of section 5 with 5.6: methods in order, the first success decides
 * and gains system:authenticated. As upstream's union, a method's error does not stop the
 * others (a normal client certificate is not refused because the proxy method could not verify
 * it); a request fails with the first error only when no method accepts it. A request that
 * carries credentials nobody accepts (any Authorization header) is 401, never anonymous; without
 * credentials it is anonymous where the anonymous policy allows that path, else 401.
 * methods and anonymous are getters so a reloaded configuration (5.3) takes effect at once.
 */
export class RequestAuthenticator {
  constructor(
    private readonly methods: () => readonly Authenticator[],
    private readonly anonymous: () => AnonymousPolicy,
    /** Told about non-401 failures of a method (store down, webhook broken): they still answer 401. */
    private readonly onError: (method: string, err: unknown) => void = () => undefined,
  ) {}

  /** Resolves with the user (never null); rejects with a 401 ApiError. */
  async authenticate(req: IncomingMessage): Promise<UserInfo> {
    let first: unknown;
    for (const m of this.methods()) {
      try {
        const u = await m.authenticate(req);
        if (u) return withAuthenticatedGroup(u);
      } catch (err) {
        if (!(err instanceof ApiError && err.code === 401)) this.onError(m.name, err);
        first ??= err;
      }
    }
    if (first !== undefined) throw first instanceof ApiError && first.code === 401 ? first : errors.unauthorized();
    if (bearerToken(req) !== undefined || req.headers.authorization) throw errors.unauthorized();
    if (anonymousAllowed(this.anonymous(), req)) return anonymousUser;
    throw errors.unauthorized();
  }
}
