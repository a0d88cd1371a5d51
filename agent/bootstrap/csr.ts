/**
 * Keys and certificate signing requests for the agent's client identity, as the kubelet makes
 * them for TLS bootstrap: an ECDSA P-256 key, a PKCS#10 request for CN=system:node:<name>,
 * O=system:nodes, and a CertificateSigningRequest (certificates.svc.io/v1) for the signer
 * svc.io/kube-apiserver-client-kubelet with usages digital signature and client auth (no key
 * encipherment: that usage only applies to RSA keys).
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, webcrypto } from 'node:crypto';
import type { KObject } from '../../apiserver/api/types';

/**
 * @peculiar/x509 (with reflect-metadata and its ASN.1 stack) costs about 8 MB of RSS; an agent
 * with a valid certificate never needs it, so it is loaded on the first request only.
 */
function x509lib(): typeof import('../../apiserver/pki/x509').x509 {
  return (require('../../apiserver/pki/x509') as typeof import('../../apiserver/pki/x509')).x509;
}

export const kubeletClientSigner = 'svc.io/kube-apiserver-client-kubelet';
export const clientUsages = ['digital signature', 'client auth'] as const;
export const nodeUserPrefix = 'system:node:';
export const nodesGroup = 'system:nodes';

/** A fresh ECDSA P-256 private key as SEC1 PEM ("EC PRIVATE KEY"), the form the kubelet writes. */
export function generateClientKey(): string {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return privateKey.export({ format: 'pem', type: 'sec1' }).toString();
}

const ecdsa = { name: 'ECDSA', namedCurve: 'P-256' } as const;

/** A PEM PKCS#10 request for the node's client identity, signed with keyPem (ECDSA P-256). */
export async function nodeCertificateRequest(keyPem: string, nodeName: string): Promise<string> {
  const priv = createPrivateKey(keyPem);
  const pub = createPublicKey(priv);
  const privateKey = await webcrypto.subtle.importKey('pkcs8', priv.export({ format: 'der', type: 'pkcs8' }), ecdsa, false, ['sign']);
  const publicKey = await webcrypto.subtle.importKey('spki', pub.export({ format: 'der', type: 'spki' }), ecdsa, true, ['verify']);
  const x509 = x509lib();
  const keys = { privateKey, publicKey } as unknown as Parameters<typeof x509.Pkcs10CertificateRequestGenerator.create>[0]['keys'];
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: [{ O: [nodesGroup] }, { CN: [nodeUserPrefix + nodeName] }],
    keys,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
  });
  return csr.toString('pem') + '\n';
}

export interface CsrObjectOptions {
  /** Requested lifetime (spec.expirationSeconds); the signer may shorten it. */
  expirationSeconds?: number;
}

/** The CertificateSigningRequest object for a PEM request (spec.request is base64 of the PEM). */
export function csrObject(csrPem: string, o: CsrObjectOptions = {}): KObject {
  const spec: Record<string, unknown> = {
    request: Buffer.from(csrPem).toString('base64'),
    signerName: kubeletClientSigner,
    usages: [...clientUsages],
  };
  if (o.expirationSeconds !== undefined) spec['expirationSeconds'] = o.expirationSeconds;
  return {
    apiVersion: 'certificates.svc.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { generateName: 'node-csr-' },
    spec,
  };
}
