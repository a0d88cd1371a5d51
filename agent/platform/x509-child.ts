/**
 * The certificate work of the agent, run in a short-lived child process (x509-process.ts):
 * @peculiar/x509 with its ASN.1 stack, plus the key generation around it, left about 16 MB in
 * the agent's memory for good after making one certificate, and the agent needs it only at the
 * first start and at rotations. Reads one JSON request on stdin, writes one JSON answer on stdout.
 */
import { createPrivateKey, createPublicKey, randomBytes, webcrypto } from 'node:crypto';
import { x509 } from '../../common/x509';

export interface ServingCertRequest {
  nodeName: string;
  ips: readonly string[];
  /** ms since the epoch */
  now: number;
  validityMs: number;
}

export interface NodeCsrRequest {
  /** ECDSA P-256 private key (PEM) that signs the request. */
  keyPem: string;
  commonName: string;
  organization: string;
}

export type X509Work = { op: 'servingCert'; args: ServingCertRequest } | { op: 'nodeCsr'; args: NodeCsrRequest };

const P256 = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGNING = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/**
 * A self-signed ECDSA P-256 serving certificate, as the kubelet makes without one configured:
 * CN <node>@<unix time>, the node name, localhost and the IPs as names, server auth.
 */
export async function servingCert(r: ServingCertRequest): Promise<{ certPem: string; keyPem: string }> {
  const keys = (await webcrypto.subtle.generateKey(SIGNING, true, ['sign', 'verify']));
  const serial = randomBytes(16);
  serial[0] &= 0x7f;
  const names = [
    { type: 'dns' as const, value: r.nodeName },
    { type: 'dns' as const, value: 'localhost' },
    ...[...new Set(['127.0.0.1', ...r.ips])].map((ip) => ({ type: 'ip' as const, value: ip })),
  ];
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial.toString('hex'),
    name: `CN=${r.nodeName.replace(/([,+"\\<>;=])/g, '\\$1')}@${Math.floor(r.now / 1000)}`,
    notBefore: new Date(r.now - 60_000),
    notAfter: new Date(r.now + r.validityMs),
    keys: keys,
    signingAlgorithm: SIGNING,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], false),
      new x509.SubjectAlternativeNameExtension(names, false),
    ],
  });
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const keyPem = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }).export({ format: 'pem', type: 'sec1' }).toString();
  return { certPem: cert.toString('pem') + '\n', keyPem };
}

/** A PEM PKCS#10 request for CN=commonName, O=organization, signed with the key. */
export async function nodeCsr(r: NodeCsrRequest): Promise<{ csrPem: string }> {
  const priv = createPrivateKey(r.keyPem);
  const pub = createPublicKey(priv);
  const privateKey = await webcrypto.subtle.importKey('pkcs8', priv.export({ format: 'der', type: 'pkcs8' }), P256, false, ['sign']);
  const publicKey = await webcrypto.subtle.importKey('spki', pub.export({ format: 'der', type: 'spki' }), P256, true, ['verify']);
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: [{ O: [r.organization] }, { CN: [r.commonName] }],
    keys: { privateKey, publicKey },
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
  });
  return { csrPem: csr.toString('pem') + '\n' };
}

async function work(w: X509Work): Promise<unknown> {
  switch (w.op) {
    case 'servingCert':
      return servingCert(w.args);
    case 'nodeCsr':
      return nodeCsr(w.args);
  }
}

async function main(): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  let answer: unknown;
  try {
    answer = { ok: await work(JSON.parse(Buffer.concat(chunks).toString('utf8')) as X509Work) };
  } catch (e) {
    answer = { error: (e as Error).message };
  }
  process.stdout.write(JSON.stringify(answer));
}

if (require.main === module) void main();
