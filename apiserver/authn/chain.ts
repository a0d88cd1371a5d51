import type { IncomingMessage } from 'node:http';
import { errors } from '../api/errors';
import { bearerToken, type Authenticator } from './authenticator';
import { anonymousUser, type UserInfo } from './user';

/**
 * The authenticator chain (5, 5.6): methods in order, the first success decides; every
 * authenticated user also gets system:authenticated. A bearer token nobody accepts is a 401,
 * never anonymous. Without credentials the request is anonymous when that is enabled.
 */
export class AuthenticatorChain {
  constructor(
    private readonly methods: readonly Authenticator[],
    private readonly anonymous: boolean,
  ) {}

  async authenticate(req: IncomingMessage): Promise<UserInfo> {
    for (const m of this.methods) {
      const u = await m.authenticate(req);
      if (u) {
        const groups = u.groups.includes('system:authenticated') ? u.groups : [...u.groups, 'system:authenticated'];
        return { ...u, groups };
      }
    }
    if (bearerToken(req) !== undefined || req.headers.authorization) throw errors.unauthorized();
    if (this.anonymous) return anonymousUser;
    throw errors.unauthorized();
  }
}
