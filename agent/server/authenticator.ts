/**
 * Authentication of callers of the agent's server, in upstream's kubelet order: a client
 * certificate verified against the client CA (x509), else a bearer token checked by the token
 * reviewer (when webhook authentication is enabled), else anonymous when enabled. As upstream,
 * presented but invalid credentials (an unverified certificate, a rejected token) fail the request
 * even when anonymous access is on: anonymous only stands in for "no credentials".
 */
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { peerLeaf } from '../../common/peer-cert';
import type { TokenReviewer } from './token-reviewer';
import { ANONYMOUS_USER, AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP, type UserInfo } from './user-info';

export type AuthnResult = { ok: true; user: UserInfo } | { ok: false; reason: string };

/** Decides who sent a request. */
export interface Authenticator {
  /** The caller, or why it is not authenticated (answered 401). Never rejects. */
  authenticate(req: IncomingMessage): Promise<AuthnResult>;
}

/** What the TLS layer learnt about the peer certificate. */
export interface PeerCert {
  /** The peer sent a certificate. */
  presented: boolean;
  /** It chains to the configured client CA. */
  verified: boolean;
  cn: string;
  orgs: string[];
}

/** Reads the peer certificate of a TLS request (the server asks for one but does not require it). */
export function peerCert(req: IncomingMessage): PeerCert {
  const leaf = peerLeaf(req.socket);
  if (!leaf) return { presented: false, verified: false, cn: '', orgs: [] };
  return { presented: true, verified: (req.socket as Partial<TLSSocket>).authorized === true, cn: leaf.cn, orgs: leaf.orgs };
}

export interface RequestAuthenticatorOptions {
  /** Whether client certificates are accepted (a client CA is configured). */
  x509: boolean;
  /** Token reviewer; undefined when webhook authentication is disabled. */
  tokens?: TokenReviewer;
  anonymous: boolean;
  /** Seam for tests; defaults to peerCert. */
  peer?: (req: IncomingMessage) => PeerCert;
}

function bearerToken(req: IncomingMessage): string | undefined {
  const h = req.headers.authorization;
  if (typeof h !== 'string') return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : undefined;
}

export class RequestAuthenticator implements Authenticator {
  constructor(private readonly o: RequestAuthenticatorOptions) {}

  async authenticate(req: IncomingMessage): Promise<AuthnResult> {
    const cert = (this.o.peer ?? peerCert)(req);
    if (this.o.x509 && cert.presented) {
      if (!cert.verified || cert.cn === '') return { ok: false, reason: 'client certificate is not signed by the client CA' };
      return { ok: true, user: { username: cert.cn, groups: [...cert.orgs, AUTHENTICATED_GROUP] } };
    }
    const token = bearerToken(req);
    if (token !== undefined && this.o.tokens) {
      let user: UserInfo | undefined;
      try {
        user = await this.o.tokens.review(token);
      } catch (e) {
        return { ok: false, reason: `token review failed: ${(e as Error).message}` };
      }
      if (!user) return { ok: false, reason: 'invalid bearer token' };
      return { ok: true, user: user.groups.includes(AUTHENTICATED_GROUP) ? user : { ...user, groups: [...user.groups, AUTHENTICATED_GROUP] } };
    }
    if (req.headers.authorization !== undefined && this.o.tokens) return { ok: false, reason: 'malformed Authorization header' };
    if (this.o.anonymous) return { ok: true, user: { username: ANONYMOUS_USER, groups: [UNAUTHENTICATED_GROUP] } };
    return { ok: false, reason: 'no credentials' };
  }
}
