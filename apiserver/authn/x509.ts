import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Authenticator } from './authenticator';
import type { UserInfo } from './user';

/**
 * Client certificates (5.1): the TLS layer verified the chain against --client-ca-file; the
 * subject CN is the user and each O a group.
 */
export class X509Authenticator implements Authenticator {
  readonly name = 'x509';

  async authenticate(req: IncomingMessage): Promise<UserInfo | null> {
    const sock = req.socket as TLSSocket;
    if (typeof sock.getPeerCertificate !== 'function' || !sock.authorized) return null;
    const cert = sock.getPeerCertificate();
    if (!cert || !cert.subject) return null;
    const cn = asList(cert.subject.CN)[0];
    if (!cn) return null;
    return { username: cn, groups: asList(cert.subject.O) };
  }
}

function asList(v: string | string[] | undefined): string[] {
  if (v === undefined) return [];
  return Array.isArray(v) ? v : [v];
}
