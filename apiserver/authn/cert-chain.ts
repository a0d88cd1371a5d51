import { X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { MAX_CHAIN_DEPTH, peerCertificates, peerLeaf } from '../../common/peer-cert';

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

/** A verified chain names its leaf and how many intermediates linked it to the pool (0: a root signed the leaf). */
export type ChainResult = { ok: true; leaf: X509Certificate; intermediates: number } | { ok: false; reason: string };

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
        return { ok: true, leaf, intermediates: depth };
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
 * TLS connection and across connections: parsing and signature checks are the expensive part, and
 * a client that opens a connection per request (kubectl exec, every stream) sends the same chain
 * each time. A leaf a root of the pool signed is remembered by its own fingerprint (whatever else
 * a peer sends with it, the chain found is the same), so a known one costs no read of the chain;
 * one linked through intermediates by the fingerprints of all the certificates sent. Validity
 * times are rechecked on each request because a connection may outlive its certificate.
 */
export class ClientCertVerifier {
  private readonly bySocket = new WeakMap<object, ChainResult | null>();
  private readonly byChain = new Map<string, { result: ChainResult & { ok: true }; until: number }>();
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
    const leaf = peerLeaf(req.socket);
    if (!leaf) return null;
    const now = this.now();
    const signedByRoot = this.remembered(leaf.fingerprint256, now);
    if (signedByRoot) return signedByRoot;
    const sent = peerCertificates(req.socket);
    if (!sent) return null;
    const key = sent.map((c) => c.fingerprint256).join('/');
    const known = this.remembered(key, now);
    if (known) return known;
    const r = verifyChain(sent[0], sent.slice(1), this.pool, now);
    // Only successes are kept: a failure may be a certificate not yet valid, and must be rechecked.
    if (r.ok) {
      this.byChain.set(r.intermediates === 0 ? leaf.fingerprint256 : key, { result: r, until: now.getTime() + REMEMBER_CHAIN_MS });
      if (this.byChain.size > MAX_REMEMBERED_CHAINS) this.byChain.delete(this.byChain.keys().next().value as string);
    }
    return r;
  }

  /** The remembered success under key, its leaf's validity checked now; undefined when none or past its time (then forgotten). */
  private remembered(key: string, now: Date): ChainResult | undefined {
    const known = this.byChain.get(key);
    if (!known) return undefined;
    if (known.until <= now.getTime()) {
      this.byChain.delete(key);
      return undefined;
    }
    const bad = inValidity(known.result.leaf, now);
    return bad ? { ok: false, reason: `x509: ${bad}` } : known.result;
  }
}
