/** PEM helpers for the agent's client identity: split bundles, read validity, check a key matches. */
import { createPrivateKey, X509Certificate } from 'node:crypto';

export interface PemBlock {
  type: string;
  text: string;
}

/** Every PEM block of a bundle, in order, each with its BEGIN/END lines. */
export function pemBlocks(bundle: string): PemBlock[] {
  const out: PemBlock[] = [];
  const re = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;
  for (let m = re.exec(bundle); m; m = re.exec(bundle)) out.push({ type: m[1], text: m[0] + '\n' });
  return out;
}

export interface CertificateInfo {
  notBefore: number;
  notAfter: number;
  subject: string;
}

/** Validity and subject of the first certificate in a PEM bundle; throws when there is none or it is malformed. */
export function certificateInfo(certPem: string): CertificateInfo {
  const first = pemBlocks(certPem).find((b) => b.type === 'CERTIFICATE');
  if (!first) throw new Error('no CERTIFICATE block');
  const c = new X509Certificate(first.text);
  return { notBefore: Date.parse(c.validFrom), notAfter: Date.parse(c.validTo), subject: c.subject };
}

/** True when the first certificate in certPem was issued for keyPem's public key. */
export function keyMatchesCertificate(certPem: string, keyPem: string): boolean {
  try {
    const first = pemBlocks(certPem).find((b) => b.type === 'CERTIFICATE');
    if (!first) return false;
    return new X509Certificate(first.text).checkPrivateKey(createPrivateKey(keyPem));
  } catch {
    return false;
  }
}

/** Splits a combined cert+key file (the -current.pem) into its certificate chain and its key. */
export function splitCertAndKey(bundle: string): { certPem: string; keyPem: string } | undefined {
  const blocks = pemBlocks(bundle);
  const certs = blocks.filter((b) => b.type === 'CERTIFICATE');
  const key = blocks.find((b) => b.type.endsWith('PRIVATE KEY'));
  if (certs.length === 0 || !key) return undefined;
  return { certPem: certs.map((b) => b.text).join(''), keyPem: key.text };
}
