import type { IncomingMessage } from 'node:http';
import type { UserInfo } from './user';

/**
 * One authentication method (spec 5.1). Returns the user, or null when the request carries
 * nothing this method understands ("not mine"). Throws a 401 ApiError when the request carries
 * credentials of its kind that are invalid.
 */
export interface Authenticator {
  readonly name: string;
  authenticate(req: IncomingMessage): Promise<UserInfo | null>;
}

/**
 * A method that only reads the bearer token (static token file, bootstrap tokens): the token
 * methods call this directly instead of building a request around a token they already have.
 * Same contract as authenticate for a request carrying `Authorization: Bearer <token>`.
 */
export interface BearerTokenMethod extends Authenticator {
  authenticateBearer(token: string): Promise<UserInfo | null>;
}

/** The bearer token of the Authorization header (5.1), or undefined. */
export function bearerToken(req: IncomingMessage): string | undefined {
  const h = req.headers.authorization;
  if (!h) return undefined;
  const m = /^Bearer\s+(\S.*)$/i.exec(h.trim());
  return m ? m[1].trim() : undefined;
}
