import { X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { MAX_CHAIN_DEPTH, peerCertificates } from '../../common/peer-cert';

const CLIENT_AUTH_OID = '1.3.6.1.5.5.7.3.2';
const ANY_EKU_OID = '2.5.29.37.0';

/** A bundle of trusted CA certificates (one PEM file may hold several). */
export class CertPool {
  readonly certs: readonly X509Certificate[];
  constructor(pem: string, source = 'CA bundle') {
    const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
    this.certs = blocks.map((b) => new X509Certificate(b));
    if (this.certs.length === 0) throw new Error(`${source}: no certificates found`);
  }
}

export type ChainResult = { ok: true; leaf: X509Certificate } | { ok: false; reason: string };

function inValidity(c: X509Certificate, now: Date): string | undefined {
  const t = now.getTime();
  if (t < Date.parse(c.validFrom)) return `certificate is not yet valid (valid from ${c.validFrom})`;
  if (t > Date.parse(c.validTo)) return `certificate has expired (valid to ${c.validTo})`;
  return undefined;
}

/**
 * Verifies a client certificate chain against a pool, as Go's x509.Verify with
 * ExtKeyUsageClientAuth does for upstream's x509 and request-header authenticators: every
 * certificate in its validity period, each signed by the next, intermediates marked CA, and the
 * leaf usable for client authentication (no extended key usage at all counts as any).
 */
export function verifyChain(leaf: X509Certificate, intermediates: readonly X509Certificate[], roots: CertPool, now: Date): ChainResult {
  const eku = leaf.keyUsage;
  if (eku && eku.length > 0 && !eku.includes(CLIENT_AUTH_OID) && !eku.includes(ANY_EKU_OID)) return { ok: false, reason: 'certificate specifies an incompatible key usage' };
  let current = leaf;
  for (let depth = 0; depth < MAX_CHAIN_DEPTH; depth++) {
    const bad = inValidity(current, now);
    if (bad) return { ok: false, reason: `x509: ${bad}` };
    for (const root of roots.certs) {
      if (current.checkIssued(root) && current.verify(root.publicKey)) {
        const rootBad = inValidity(root, now);
        if (rootBad) return { ok: false, reason: `x509: CA ${rootBad}` };
        return { ok: true, leaf };
      }
    }
    // A self-signed certificate that is not in the pool ends the search.
    const next = intermediates.find((i) => i !== current && i.ca && current.checkIssued(i) && current.verify(i.publicKey));
    if (!next) return { ok: false, reason: 'x509: certificate signed by unknown authority' };
    current = next;
  }
  return { ok: false, reason: 'x509: certificate chain too long' };
}

/** Chains remembered across connections (a client making a connection per request, as kubectl exec), each for a while: the CAs' validity is checked again after it. */
const MAX_REMEMBERED_CHAINS = 1024;
const REMEMBER_CHAIN_MS = 5 * 60_000;

/**
 * Verifies the request's client certificate against one pool, remembering the chain result per
 * TLS connection and per chain (by the certificates' SHA-256 fingerprints): parsing and signature
 * checks are the expensive part, and a client that opens a connection per request (kubectl exec,
 * every stream) sends the same chain each time. Validity times are rechecked on each request
 * because a connection may outlive its certificate.
 */
export class ClientCertVerifier {
  private readonly bySocket = new WeakMap<object, ChainResult | null>();
  private readonly byChain = new Map<string, { result: ChainResult; until: number }>();
  constructor(
    private readonly pool: CertPool,
    private readonly now: () => Date,
  ) {}

  /** null when the peer sent no certificate; else the chain result. */
  verify(req: IncomingMessage): ChainResult | null {
    const sock = req.socket as object;
    let r = this.bySocket.get(sock);
    if (r === undefined) {
      r = this.verifyPeer(req);
      this.bySocket.set(sock, r);
      return r;
    }
    if (r && r.ok) {
      const bad = inValidity(r.leaf, this.now());
      if (bad) return { ok: false, reason: `x509: ${bad}` };
    }
    return r;
  }

  private verifyPeer(req: IncomingMessage): ChainResult | null {
    const sent = peerCertificates(req.socket);
    if (!sent) return null;
    const [leaf, ...issuers] = sent;
    const key = sent.map((c) => c.fingerprint256).join('/');
    const now = this.now();
    const known = this.byChain.get(key);
    if (known && known.until > now.getTime() && known.result.ok) {
      const bad = inValidity(known.result.leaf, now);
      return bad ? { ok: false, reason: `x509: ${bad}` } : known.result;
    }
    if (known) this.byChain.delete(key);
    const r = verifyChain(leaf, issuers, this.pool, now);
    // Only successes are kept: a failure may be a certificate not yet valid, and must be rechecked.
    if (r.ok) {
      this.byChain.set(key, { result: r, until: now.getTime() + REMEMBER_CHAIN_MS });
      if (this.byChain.size > MAX_REMEMBERED_CHAINS) this.byChain.delete(this.byChain.keys().next().value as string);
    }
    return r;
  }
}
