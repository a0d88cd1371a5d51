import type { IncomingMessage } from 'node:http';
import type { UserInfo } from '../api/user';

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

/**
 * The bearer token of the Authorization header (5.1), or undefined: the scheme "Bearer" in any
 * case, whitespace, then the token (surrounding whitespace trimmed). Parsed by hand because it
 * runs on every request: a regular expression over a kilobyte-long JWT cost more than the rest
 * of looking the token up.
 */
export function bearerToken(req: IncomingMessage): string | undefined {
  const h = req.headers.authorization;
  if (!h || h.length < 8) return undefined;
  const s = h.trim();
  if (s.length < 8 || !isSpace(s.charCodeAt(6)) || s.slice(0, 6).toLowerCase() !== 'bearer') return undefined;
  const token = s.slice(7).trim();
  return token === '' ? undefined : token;
}

/** The characters String.prototype.trim and \s treat as whitespace in an HTTP header value (space and tab; others cannot appear there). */
function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09;
}
