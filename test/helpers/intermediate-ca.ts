// Chain tests need an intermediate CA; apiserver/pki/certs issues leaves only.
import { createPrivateKey, webcrypto } from 'node:crypto';
import { x509 } from '../../common/x509';
import type { KeyPairPem } from '../../apiserver/pki/certs';

const DAY = 86_400_000;
const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** An intermediate CA signed by `root` (pki/certs issues leaves only). */
export async function intermediate(root: KeyPairPem): Promise<KeyPairPem> {
  const keys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
  const rootCert = new x509.X509Certificate(root.certPem);
  const rootKey = await webcrypto.subtle.importKey('pkcs8', createPrivateKey(root.keyPem).export({ format: 'der', type: 'pkcs8' }), ALG, false, ['sign']);
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: '0a',
    subject: 'CN=intermediate',
    issuer: rootCert.subject,
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + DAY),
    signingKey: rootKey,
    publicKey: keys.publicKey,
    signingAlgorithm: ALG,
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true)],
  });
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  return { certPem: cert.toString('pem') + '\n', keyPem: createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }).export({ format: 'pem', type: 'pkcs8' }).toString() };
}

