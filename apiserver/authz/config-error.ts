/** A malformed authorization flag, policy file or configuration: the server refuses to start with this message. */
export class AuthorizationConfigError extends Error {
  override readonly name = 'AuthorizationConfigError';
}
