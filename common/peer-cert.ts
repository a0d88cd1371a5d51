/**
 * The certificates a TLS peer sent, as X509Certificate objects wrapping what OpenSSL already
 * parsed during the handshake. Node's legacy getPeerCertificate() converts each certificate into a
 * plain object (every name, extension, the public key, three fingerprints): 90–180 µs a call here
 * (OpenSSL 3.0 decodes the public key again each time), on every new connection of a client that
 * opens one per command, as kubectl exec does; getPeerX509Certificate() costs about 2 µs.
 */
import type { X509Certificate } from 'node:crypto';
import type { TLSSocket } from 'node:tls';

/** Certificates after the leaf followed at most (Go's x509.Verify stops at a similar depth). */
export const MAX_CHAIN_DEPTH = 8;

const sent = new WeakMap<object, X509Certificate[] | null>();

/**
 * The peer's certificates, leaf first then the others in the order sent (at most MAX_CHAIN_DEPTH
 * after it), or undefined when it sent none. Read once per socket and remembered: Node 20 hands
 * the certificates after the leaf to the first getPeerX509Certificate() only (it moves them out of
 * the connection's chain), so a second reader of the same socket would see the leaf alone.
 */
export function peerCertificates(socket: unknown): readonly X509Certificate[] | undefined {
  const sock = socket as Partial<TLSSocket> | null;
  if (!sock || typeof sock.getPeerX509Certificate !== 'function') return undefined;
  let certs = sent.get(sock);
  if (certs === undefined) {
    const leaf = sock.getPeerX509Certificate();
    certs = leaf ? [leaf] : null;
    for (let c = leaf?.issuerCertificate; certs && c && certs.length <= MAX_CHAIN_DEPTH && !certs.includes(c); c = c.issuerCertificate) certs.push(c);
    sent.set(sock, certs);
  }
  return certs ?? undefined;
}

/** Subject CN and each O of a certificate (Node lists the RFC 4514 parts one per line). */
export function subjectNames(c: X509Certificate): { cn: string; orgs: string[] } {
  const parts = c.subject.split('\n');
  return {
    cn: parts.find((p) => p.startsWith('CN='))?.slice(3) ?? '',
    orgs: parts.filter((p) => p.startsWith('O=')).map((p) => p.slice(2)),
  };
}
