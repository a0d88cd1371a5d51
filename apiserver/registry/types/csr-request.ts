import { createPublicKey, verify, X509Certificate, type KeyObject } from 'node:crypto';

/**
 * Just enough PEM and DER to do what upstream's certificate validation does with Go's x509:
 * parse a PKCS#10 certificate request, check its self-signature, read its subject, and check that
 * a PEM bundle holds only CERTIFICATE blocks. Also useful to the CSR signing controller.
 */

export interface PemBlock {
  type: string;
  headers: Record<string, string>;
  der: Buffer;
}

/** All PEM blocks in text, in order (junk between blocks is skipped, as Go's pem.Decode does). */
export function decodePem(text: string): PemBlock[] {
  const out: PemBlock[] = [];
  const re = /-----BEGIN ([^-\r\n]+)-----\r?\n([\s\S]*?)-----END \1-----/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text))) {
    const headers: Record<string, string> = {};
    const lines = m[2].split(/\r?\n/);
    let i = 0;
    for (; i < lines.length && lines[i].includes(':'); i++) {
      const [k, ...rest] = lines[i].split(':');
      headers[k.trim()] = rest.join(':').trim();
    }
    const body = lines.slice(i).join('').replace(/\s+/g, '');
    out.push({ type: m[1], headers, der: Buffer.from(body, 'base64') });
  }
  return out;
}

interface Tlv {
  tag: number;
  start: number; // first byte of the header
  contentStart: number;
  end: number; // one past the last content byte
}

function readTlv(buf: Buffer, off: number, limit = buf.length): Tlv {
  if (off + 2 > limit) throw new Error('x509: malformed certificate request');
  const tag = buf[off];
  let len = buf[off + 1];
  let p = off + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4 || p + n > limit) throw new Error('x509: malformed certificate request');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[p + i];
    p += n;
  }
  if (p + len > limit) throw new Error('x509: malformed certificate request');
  return { tag, start: off, contentStart: p, end: p + len };
}

function children(buf: Buffer, t: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let p = t.contentStart; p < t.end; ) {
    const c = readTlv(buf, p, t.end);
    out.push(c);
    p = c.end;
  }
  return out;
}

function oid(buf: Buffer, t: Tlv): string {
  const b = buf.subarray(t.contentStart, t.end);
  if (b.length === 0) return '';
  const parts = [Math.floor(b[0] / 40), b[0] % 40];
  let v = 0;
  for (let i = 1; i < b.length; i++) {
    v = v * 128 + (b[i] & 0x7f);
    if (!(b[i] & 0x80)) {
      parts.push(v);
      v = 0;
    }
  }
  return parts.join('.');
}

const SIGNATURE_HASHES: Record<string, string | null> = {
  '1.2.840.113549.1.1.5': 'sha1',
  '1.2.840.113549.1.1.11': 'sha256',
  '1.2.840.113549.1.1.12': 'sha384',
  '1.2.840.113549.1.1.13': 'sha512',
  '1.2.840.10045.4.1': 'sha1',
  '1.2.840.10045.4.3.2': 'sha256',
  '1.2.840.10045.4.3.3': 'sha384',
  '1.2.840.10045.4.3.4': 'sha512',
  '1.3.101.112': null, // Ed25519 signs the message itself
};

export interface CertificateRequest {
  /** Subject common name ('' when absent). */
  commonName: string;
  /** Subject organizations, in order. */
  organizations: string[];
  publicKey: KeyObject;
  /** DER of the SubjectPublicKeyInfo. */
  publicKeyDer: Buffer;
}

function subjectOf(buf: Buffer, name: Tlv): { commonName: string; organizations: string[] } {
  let commonName = '';
  const organizations: string[] = [];
  for (const rdn of children(buf, name)) {
    for (const atv of children(buf, rdn)) {
      const [type, value] = children(buf, atv);
      if (!type || !value) continue;
      const text = buf.subarray(value.contentStart, value.end).toString('utf8');
      const id = oid(buf, type);
      if (id === '2.5.4.3') commonName = text;
      else if (id === '2.5.4.10') organizations.push(text);
    }
  }
  return { commonName, organizations };
}

/** Parses and verifies a PEM certificate request as upstream's ParseCSR + CheckSignature; throws with Go-like messages. */
export function parseCertificateRequest(pem: string): CertificateRequest {
  const block = decodePem(pem)[0];
  if (!block || block.type !== 'CERTIFICATE REQUEST') throw new Error('PEM block type must be CERTIFICATE REQUEST');
  const buf = block.der;
  const top = readTlv(buf, 0);
  if (top.tag !== 0x30 || top.end !== buf.length) throw new Error('x509: malformed certificate request');
  const [info, algId, sig] = children(buf, top);
  if (!info || !algId || !sig || info.tag !== 0x30 || algId.tag !== 0x30 || sig.tag !== 0x03) throw new Error('x509: malformed certificate request');
  const infoParts = children(buf, info);
  if (infoParts.length < 3 || infoParts[0].tag !== 0x02 || infoParts[1].tag !== 0x30 || infoParts[2].tag !== 0x30) {
    throw new Error('x509: malformed certificate request');
  }
  const spki = infoParts[2];
  const publicKeyDer = buf.subarray(spki.start, spki.end);
  let publicKey: KeyObject;
  try {
    publicKey = createPublicKey({ key: publicKeyDer, format: 'der', type: 'spki' });
  } catch {
    throw new Error('x509: unsupported public key');
  }
  const alg = children(buf, algId)[0];
  const algOid = alg && alg.tag === 0x06 ? oid(buf, alg) : '';
  if (!(algOid in SIGNATURE_HASHES)) throw new Error('x509: cannot verify signature: algorithm unimplemented');
  const signature = buf.subarray(sig.contentStart + 1, sig.end);
  const tbs = buf.subarray(info.start, info.end);
  let ok: boolean;
  try {
    ok = verify(SIGNATURE_HASHES[algOid], tbs, publicKey, signature);
  } catch {
    ok = false;
  }
  if (!ok) throw new Error('x509: invalid signature: the certificate request is not signed by its own key');
  return { ...subjectOf(buf, infoParts[1]), publicKey, publicKeyDer };
}

/** Upstream validateCertificate for status.certificate: '' when valid, else the reason. Empty input is valid. */
export function certificateBundleError(pem: string): string {
  if (pem === '') return '';
  const blocks = decodePem(pem);
  if (blocks.length === 0) return 'must contain at least one CERTIFICATE PEM block';
  for (const b of blocks) {
    if (b.type !== 'CERTIFICATE') return `only CERTIFICATE PEM blocks are allowed, found "${b.type}"`;
    if (Object.keys(b.headers).length) return 'no PEM block headers are permitted';
    try {
      new X509Certificate(b.der);
    } catch (err) {
      return `x509: malformed certificate: ${(err as Error).message}`;
    }
  }
  return '';
}
