/**
 * Keys and certificate signing requests for the agent's client identity, as the kubelet makes
 * them for TLS bootstrap: an ECDSA P-256 key, a PKCS#10 request for CN=system:node:<name>,
 * O=system:nodes, and a CertificateSigningRequest (certificates.svc.io/v1) for the signer
 * svc.io/kube-apiserver-client-kubelet with usages digital signature and client auth (no key
 * encipherment: that usage only applies to RSA keys).
 */
import { generateKeyPairSync } from 'node:crypto';
import type { KObject } from '../../apiserver/api/types';
import { NODE_USER_PREFIX, NODES_GROUP } from '../../apiserver/api/well-known';
import { nodeCsrInChild } from '../platform/x509-process';

export const kubeletClientSigner = 'svc.io/kube-apiserver-client-kubelet';
export const clientUsages = ['digital signature', 'client auth'] as const;

/** A fresh ECDSA P-256 private key as SEC1 PEM ("EC PRIVATE KEY"), the form the kubelet writes. */
export function generateClientKey(): string {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return privateKey.export({ format: 'pem', type: 'sec1' }).toString();
}

/**
 * A PEM PKCS#10 request for the node's client identity, signed with keyPem (ECDSA P-256). Made
 * in a child process: the certificate library would otherwise stay in the agent's memory.
 */
export async function nodeCertificateRequest(keyPem: string, nodeName: string): Promise<string> {
  return (await nodeCsrInChild({ keyPem, commonName: NODE_USER_PREFIX + nodeName, organization: NODES_GROUP })).csrPem;
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
