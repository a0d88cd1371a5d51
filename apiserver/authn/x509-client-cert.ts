import type { IncomingMessage } from 'node:http';
import { errors } from '../api/errors';
import type { Authenticator } from './authenticator';
import { ClientCertVerifier, type CertPool } from './cert-chain';
import { subjectNames } from '../../common/peer-cert';
import type { UserInfo } from '../api/user';

export const EXTRA_CREDENTIAL_ID = 'authentication.svc.io/credential-id';

/**
 * Client certificates (5.1, --client-ca-file) verified here against the client CA pool rather
 * than trusting the TLS layer's verdict: the TLS layer must also accept the authenticating
 * proxy's CA (5.5) so that clients send their certificates, and a proxy certificate must not
 * authenticate as its own CN. As upstream's x509 authenticator: CN is the user, each O a group;
 * a certificate from an unknown CA or outside its validity is a 401 (unless another method
 * accepts the request); no certificate is "not mine". extra carries the certificate's SHA-256
 * fingerprint as credential id, as upstream does.
 */
export class X509ClientCertAuthenticator implements Authenticator {
  readonly name = 'x509';
  private readonly verifier: ClientCertVerifier;

  constructor(pool: CertPool, now: () => Date = () => new Date()) {
    this.verifier = new ClientCertVerifier(pool, now);
  }

  /** Returns the certificate's user, null without a certificate (or without a CN), and throws 401 for one that does not verify. */
  // eslint-disable-next-line @typescript-eslint/require-await -- async on purpose: its 401s (and any failure of the certificate checks) reach callers as rejections, as the Authenticator contract has it
  async authenticate(req: IncomingMessage): Promise<UserInfo | null> {
    const r = this.verifier.verify(req);
    if (r === null) return null;
    if (!r.ok) throw errors.unauthorized(`Unauthorized: ${r.reason}`);
    const { cn, orgs } = subjectNames(r.leaf);
    if (!cn) return null;
    return {
      username: cn,
      groups: orgs,
      extra: { [EXTRA_CREDENTIAL_ID]: [`X509SHA256=${r.leaf.fingerprint256.replace(/:/g, '').toLowerCase()}`] },
    };
  }
}
