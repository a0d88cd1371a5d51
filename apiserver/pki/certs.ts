import { createPrivateKey, randomBytes, webcrypto, X509Certificate } from 'node:crypto';
import { x509 } from '../../common/x509';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

/** ECDSA P-256 with SHA-256: small, fast, and accepted by kubectl, Go's TLS and OpenSSL. */
const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

export interface KeyPairPem {
  certPem: string;
  keyPem: string;
}

export interface IssueOptions {
  commonName: string;
  organizations?: readonly string[];
  dnsNames?: readonly string[];
  ips?: readonly string[];
  usage: 'server' | 'client' | 'server+client';
  validityMs: number;
  now?: Date;
}

async function newKeys(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']));
}

async function keyToPem(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key));
  // Re-encode as SEC1 "EC PRIVATE KEY", the form kubeconfig consumers and OpenSSL expect most often.
  return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }).export({ format: 'pem', type: 'sec1' }).toString();
}

function subject(cn: string, orgs: readonly string[] = []): string {
  const esc = (v: string) => v.replace(/([,+"\\<>;=])/g, '\\$1');
  return [...orgs.map((o) => `O=${esc(o)}`), `CN=${esc(cn)}`].join(', ');
}

function serial(): string {
  const b = randomBytes(16);
  b[0] &= 0x7f; // positive
  return b.toString('hex');
}

/** A self-signed CA certificate (10 years, as kubeadm's CA). */
export async function createCA(commonName: string, now = new Date()): Promise<KeyPairPem> {
  const keys = await newKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: subject(commonName),
    notBefore: new Date(now.getTime() - 60_000),
    notAfter: new Date(now.getTime() + 10 * 365 * 24 * 3600_000),
    keys,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString('pem') + '\n', keyPem: await keyToPem(keys.privateKey) };
}

async function importCA(ca: KeyPairPem): Promise<{ cert: x509.X509Certificate; key: CryptoKey }> {
  const cert = new x509.X509Certificate(ca.certPem);
  const pkcs8 = createPrivateKey(ca.keyPem).export({ format: 'der', type: 'pkcs8' });
  const key = await webcrypto.subtle.importKey('pkcs8', pkcs8, ALG, false, ['sign']);
  return { cert, key: key };
}

function extensionsFor(o: Pick<IssueOptions, 'usage' | 'dnsNames' | 'ips'>): x509.Extension[] {
  const eku: string[] = [];
  if (o.usage !== 'client') eku.push(x509.ExtendedKeyUsage.serverAuth);
  if (o.usage !== 'server') eku.push(x509.ExtendedKeyUsage.clientAuth);
  const ext: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
    new x509.ExtendedKeyUsageExtension(eku, false),
  ];
  const names = [...(o.dnsNames ?? []).map((d) => ({ type: 'dns' as const, value: d })), ...(o.ips ?? []).map((i) => ({ type: 'ip' as const, value: i }))];
  if (names.length > 0) ext.push(new x509.SubjectAlternativeNameExtension(names, false));
  return ext;
}

/** Issues a new key and certificate signed by the CA. */
export async function issue(ca: KeyPairPem, o: IssueOptions): Promise<KeyPairPem> {
  const keys = await newKeys();
  const certPem = await signPublicKey(ca, keys.publicKey, o);
  return { certPem, keyPem: await keyToPem(keys.privateKey) };
}

/** Signs a certificate for a given public key (used by the CSR signer). */
export async function signPublicKey(ca: KeyPairPem, publicKey: CryptoKey, o: IssueOptions): Promise<string> {
  const { cert: caCert, key: caKey } = await importCA(ca);
  const now = o.now ?? new Date();
  const caNotAfter = caCert.notAfter.getTime();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: subject(o.commonName, o.organizations),
    issuer: caCert.subject,
    notBefore: new Date(now.getTime() - 60_000),
    // Never outlive the CA.
    notAfter: new Date(Math.min(now.getTime() + o.validityMs, caNotAfter)),
    signingKey: caKey,
    publicKey,
    signingAlgorithm: ALG,
    extensions: [...extensionsFor(o), await x509.AuthorityKeyIdentifierExtension.create(caCert)],
  });
  return cert.toString('pem') + '\n';
}

/** Subject common name and organizations of a PEM certificate. */
export function certIdentity(pem: string): { cn: string; orgs: string[]; notAfter: Date } {
  const c = new X509Certificate(pem);
  const parts = c.subject.split('\n');
  return {
    cn: parts.find((p) => p.startsWith('CN='))?.slice(3) ?? '',
    orgs: parts.filter((p) => p.startsWith('O=')).map((p) => p.slice(2)),
    notAfter: new Date(c.validTo),
  };
}
