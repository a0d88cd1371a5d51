/** Test helper: plays the CSR signer with a real CA, so issued certificates match the agent's keys. */
import { signPublicKey, type KeyPairPem } from '../../../../apiserver/pki/certs';
import { x509 } from '../../../../common/x509';
import type { KObject } from '../../../../apiserver/api/types';

/** Signs the PKCS#10 request inside a CertificateSigningRequest object; returns the certificate PEM. */
export async function signCsrObject(ca: KeyPairPem, csr: KObject, o: { validityMs: number; now?: Date }): Promise<string> {
  const spec = csr['spec'] as { request: string };
  const req = new x509.Pkcs10CertificateRequest(Buffer.from(spec.request, 'base64').toString('utf8'));
  const cn = /CN=([^,]+)/.exec(req.subject)?.[1] ?? '';
  const orgs = [...req.subject.matchAll(/O=([^,]+)/g)].map((m) => m[1]);
  const key = await req.publicKey.export();
  return signPublicKey(ca, key as Parameters<typeof signPublicKey>[1], { commonName: cn, organizations: orgs, usage: 'client', validityMs: o.validityMs, now: o.now });
}

/** Waits (real time, bounded) until cond holds; throws when it does not within the bound. */
export async function waitFor(cond: () => boolean, what: string, boundMs = 5000): Promise<void> {
  const end = Date.now() + boundMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
