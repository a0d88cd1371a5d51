/**
 * The serving certificate of the agent's HTTPS server. With tlsCertFile/tlsPrivateKeyFile set
 * those are used; otherwise, as upstream's kubelet without a serving certificate, a self-signed
 * one (ECDSA P-256, one year by default, the node name, "localhost" and the node's IPs as names)
 * is made in the cert dir as svc-node-server.crt/.key and reused until 80% of its life has passed
 * (rotationDeadline); the agent server's rotator then makes a new one and swaps it in.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { servingCertInChild } from '../platform/x509-process';

export interface ServingCert {
  certPem: string;
  keyPem: string;
  certFile: string;
  keyFile: string;
  /** True when it was generated now. */
  generated: boolean;
}

export interface ServingCertOptions {
  certDir: string;
  nodeName: string;
  ips: readonly string[];
  /** Configured files; both set means "use these". */
  certFile?: string;
  keyFile?: string;
  now?: Date;
  /** Make a new certificate even when the stored one is still good (rotation). */
  force?: boolean;
  /** Lifetime of a generated certificate (default one year). */
  validityMs?: number;
}

/** When a certificate valid from notBefore to notAfter (ms) is due for rotation: at 80% of its life. */
export function rotationDeadline(notBefore: number, notAfter: number): number {
  return notBefore + 0.8 * (notAfter - notBefore);
}

/** notBefore and notAfter (ms) of a PEM certificate. Throws on an unreadable one. */
export function certValidity(certPem: string): { notBefore: number; notAfter: number } {
  const c = new X509Certificate(certPem);
  return { notBefore: new Date(c.validFrom).getTime(), notAfter: new Date(c.validTo).getTime() };
}

const DAY = 24 * 3600_000;

async function writeAtomic(file: string, data: string, mode: number): Promise<void> {
  const tmp = `${file}.tmp-${process.pid}`;
  await writeFile(tmp, data, { mode });
  await rename(tmp, file);
}

/** Loads or creates the serving certificate. Rejects with the fs or crypto error. */
export async function ensureServingCert(o: ServingCertOptions): Promise<ServingCert> {
  if (o.certFile && o.keyFile) {
    return { certPem: await readFile(o.certFile, 'utf8'), keyPem: await readFile(o.keyFile, 'utf8'), certFile: o.certFile, keyFile: o.keyFile, generated: false };
  }
  const now = o.now ?? new Date();
  const certFile = path.join(o.certDir, 'svc-node-server.crt');
  const keyFile = path.join(o.certDir, 'svc-node-server.key');
  if (!o.force) {
    try {
      const certPem = await readFile(certFile, 'utf8');
      const keyPem = await readFile(keyFile, 'utf8');
      const v = certValidity(certPem);
      // A crash between writing the key and the certificate leaves a pair that does not match.
      const matches = new X509Certificate(certPem).checkPrivateKey(createPrivateKey(keyPem));
      if (matches && now.getTime() < rotationDeadline(v.notBefore, v.notAfter)) return { certPem, keyPem, certFile, keyFile, generated: false };
    } catch {
      // absent or unreadable: make a new one
    }
  }
  // Made in a child process: the certificate library would otherwise stay in the agent's memory.
  const { certPem, keyPem } = await servingCertInChild({ nodeName: o.nodeName, ips: o.ips, now: now.getTime(), validityMs: o.validityMs ?? 365 * DAY });
  await mkdir(o.certDir, { recursive: true, mode: 0o700 });
  await writeAtomic(keyFile, keyPem, 0o600);
  await writeAtomic(certFile, certPem, 0o644);
  return { certPem, keyPem, certFile, keyFile, generated: true };
}
