import type { ProxyClientIdentity } from '../aggregator/proxy';
import { readFileSync } from 'node:fs';
import type { ApiServerFlags } from '../config/flags';
import type { KeyPairPem } from '../pki/certs';
import { ensureServerPki, type ServerPki } from '../pki/bootstrap';

/** The TLS phase's result: the server's PKI, the certificate it serves, and the CAs its client certificates may chain to. */
export interface ServingTls {
  pki: ServerPki;
  /** --tls-cert-file/--tls-private-key-file, or the generated serving certificate. */
  serving: { certPem: string; keyPem: string };
  /** The server's CA plus --client-ca-file. */
  clientCaPem: string;
}

/** Creates (or loads) the PKI under --data-dir and reads the serving and client CA files the flags name. */
export async function loadServingTls(flags: ApiServerFlags): Promise<ServingTls> {
  const pki = await ensureServerPki(flags.dataDir, { extraNames: [flags.bindAddress], port: flags.securePort });
  const serving = flags.tlsCertFile
    ? { certPem: readFileSync(flags.tlsCertFile, 'utf8'), keyPem: readFileSync(flags.tlsPrivateKeyFile!, 'utf8') }
    : pki.serving;
  const clientCaPem = pki.ca.certPem + (flags.clientCaFile ? readFileSync(flags.clientCaFile, 'utf8') : '');
  return { pki, serving, clientCaPem };
}

/** The identity and trust used towards node agents (kube-apiserver's --kubelet-* flags). */
export function kubeletClientTls(flags: ApiServerFlags, pki: ServerPki): { client: KeyPairPem; caPem?: string } {
  const client =
    flags.kubeletClientCertificate && flags.kubeletClientKey
      ? { certPem: readFileSync(flags.kubeletClientCertificate, 'utf8'), keyPem: readFileSync(flags.kubeletClientKey, 'utf8') }
      : pki.kubeletClient;
  const caPem = flags.kubeletCertificateAuthority ? readFileSync(flags.kubeletCertificateAuthority, 'utf8') : undefined;
  return { client, ...(caPem ? { caPem } : {}) };
}

/**
 * The client identity presented to aggregated API servers (--proxy-client-cert-file and -key-file,
 * upstream's front-proxy client). Without the flags none is presented, and aggregated servers that
 * authenticate by request header will refuse the proxied requests (upstream requires the flags
 * for aggregation).
 */
export function proxyClientIdentity(flags: Pick<ApiServerFlags, 'proxyClientCertFile' | 'proxyClientKeyFile'>): ProxyClientIdentity {
  if (!flags.proxyClientCertFile || !flags.proxyClientKeyFile) return {};
  return { certPem: readFileSync(flags.proxyClientCertFile, 'utf8'), keyPem: readFileSync(flags.proxyClientKeyFile, 'utf8') };
}
