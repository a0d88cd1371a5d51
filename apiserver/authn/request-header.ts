import type { IncomingMessage } from 'node:http';
import { errors } from '../api/errors';
import type { Authenticator } from './authenticator';
import { ClientCertVerifier, type CertPool } from './cert-chain';
import { subjectNames } from '../../common/peer-cert';
import type { UserInfo } from '../api/user';

/** The --requestheader-* settings of 5.5. */
export interface RequestHeaderOptions {
  /** Case-insensitive, in order; the first with a value names the user. Required. */
  usernameHeaders: readonly string[];
  /** Every value of every one of these headers is a group. */
  groupHeaders: readonly string[];
  /** Headers starting with one of these become extra keys (prefix removed, lower-cased, percent-decoded). */
  extraHeaderPrefixes: readonly string[];
  /** Optional uid headers (upstream --requestheader-uid-headers). */
  uidHeaders?: readonly string[];
  /** --requestheader-allowed-names: Common Names the proxy certificate may have; empty allows any. */
  allowedNames: readonly string[];
  /** --requestheader-client-ca-file. */
  clientCa: CertPool;
  now?: () => Date;
}

/**
 * The authenticating proxy (5.5), as upstream's requestheader authenticator behind its x509
 * verifier: the identity headers are believed only from a client that presents a certificate
 * valid under the request-header CA with an allowed CN. A request without a username header is
 * "not mine"; with one but without a trusted proxy certificate it is a 401 (unless another
 * method, e.g. the client's own certificate, accepts it). Must run before the x509 method.
 */
export class RequestHeaderAuthenticator implements Authenticator {
  readonly name = 'requestheader';
  private readonly verifier: ClientCertVerifier;
  private readonly prefixes: readonly string[];

  constructor(private readonly o: RequestHeaderOptions) {
    if (o.usernameHeaders.length === 0) throw new Error('--requestheader-username-headers must name at least one header');
    this.verifier = new ClientCertVerifier(o.clientCa, o.now ?? (() => new Date()));
    this.prefixes = o.extraHeaderPrefixes.map((p) => p.toLowerCase());
  }

  /** Returns the proxied user, null without a username header, throws 401 for an untrusted proxy. */
  // eslint-disable-next-line @typescript-eslint/require-await -- async on purpose: its 401s (and any failure of the certificate checks) reach callers as rejections, as the Authenticator contract has it
  async authenticate(req: IncomingMessage): Promise<UserInfo | null> {
    const headers = req.headersDistinct;
    const first = (names: readonly string[]) => {
      for (const n of names) {
        const v = headers[n.toLowerCase()]?.find((x) => x !== '');
        if (v !== undefined) return v;
      }
      return undefined;
    };
    const username = first(this.o.usernameHeaders);
    if (username === undefined) return null;
    const r = this.verifier.verify(req);
    if (r === null) throw errors.unauthorized('Unauthorized: the request names a user in proxy headers but presents no client certificate');
    if (!r.ok) throw errors.unauthorized(`Unauthorized: ${r.reason}`);
    if (this.o.allowedNames.length > 0) {
      const { cn } = subjectNames(r.leaf);
      if (!this.o.allowedNames.includes(cn)) throw errors.unauthorized(`Unauthorized: x509: subject with cn=${cn} is not in the allowed list`);
    }
    const groups: string[] = [];
    for (const h of this.o.groupHeaders) groups.push(...(headers[h.toLowerCase()] ?? []));
    const extra: Record<string, string[]> = {};
    for (const [name, values] of Object.entries(headers)) {
      const prefix = this.prefixes.find((p) => name.startsWith(p));
      if (!prefix || !values) continue;
      // Node has lower-cased header names already; decoding comes after, as upstream.
      const key = unescapeKey(name.slice(prefix.length));
      if (key === '') continue;
      (extra[key] ??= []).push(...values);
    }
    const uid = this.o.uidHeaders ? first(this.o.uidHeaders) : undefined;
    return { username, ...(uid ? { uid } : {}), groups, ...(Object.keys(extra).length > 0 ? { extra } : {}) };
  }
}

/** Percent-decodes an extra key (upstream url.PathUnescape); a malformed escape leaves it as sent. */
function unescapeKey(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
