/**
 * The agent's client identity at start-up, as the kubelet's bootstrap.LoadClientCert:
 *  1. --kubeconfig exists and its client certificate is valid now: use it.
 *  2. No --bootstrap-kubeconfig: use --kubeconfig as it is (it may hold a token), or fail clearly.
 *  3. The cert store already holds a valid pair (svc-node-client-current.pem): write a kubeconfig
 *     pointing at it and use that.
 *  4. Otherwise TLS bootstrap with the bootstrap token: key (reused from svc-node-client.key.tmp
 *     when a request was pending), CSR, wait for the certificate, store the pair, write
 *     --kubeconfig pointing at the -current file.
 */
import { promises as fsp } from 'node:fs';
import { dirname } from 'node:path';
import type { ApiClient } from '../client/api-client';
import { KubeconfigError, loadKubeconfig } from '../client/kubeconfig';
import { renderKubeconfig } from '../client/kubeconfig-writer';
import type { RestConfig } from '../client/rest-config';
import type { Log } from '../platform/logger';
import type { Clock } from '../platform/clock';
import { CertStore, writeAtomic } from './cert-store';
import { csrObject, generateClientKey, nodeCertificateRequest } from './csr';
import { certificateInfo, keyMatchesCertificate } from './pem';
import { requestCertificate, type CsrRequestDeps } from './request-certificate';
import { UnauthorizedError } from '../errors';

export class BootstrapError extends UnauthorizedError {
  override readonly name = 'BootstrapError';
  override readonly code = 'SVC_NODE_ERR_BOOTSTRAP';
}

export interface BootstrapDeps {
  kubeconfigPath: string;
  /** '' when --bootstrap-kubeconfig was not given. */
  bootstrapKubeconfigPath: string;
  store: CertStore;
  nodeName: string;
  clock: Clock;
  log: Log;
  /** Builds a client for the bootstrap credentials; closed after use when it has close(). */
  makeClient: (config: RestConfig) => ApiClient & { close?: () => Promise<void> };
  /** Requested certificate lifetime (spec.expirationSeconds); the signer's default when unset. */
  expirationSeconds?: number;
  /** Bounds of the CSR wait (see CsrRequestDeps). */
  request?: Pick<CsrRequestDeps, 'waitTimeoutMs' | 'maxAttempts' | 'initialBackoffMs' | 'maxBackoffMs'>;
}

export interface ClientIdentity {
  config: RestConfig;
  /** How it was obtained, for logs. */
  origin: 'kubeconfig' | 'cert-store' | 'bootstrap';
}

/** Whether a loaded kubeconfig's client certificate (if any) is usable at `now`; a reason when not. */
export function clientCertProblem(config: RestConfig, now: number): string | undefined {
  // An exec plugin's credential is only known at the first request; the server judges it then.
  if (!config.certPem || !config.keyPem) return config.token || config.exec ? undefined : 'it holds no client certificate, token or exec plugin';
  let info;
  try {
    info = certificateInfo(config.certPem);
  } catch (e) {
    return `its client certificate cannot be parsed: ${(e as Error).message}`;
  }
  if (now >= info.notAfter) return `its client certificate expired at ${new Date(info.notAfter).toISOString()}`;
  if (now < info.notBefore) return `its client certificate is not valid before ${new Date(info.notBefore).toISOString()}`;
  if (!keyMatchesCertificate(config.certPem, config.keyPem)) return 'its client key does not match its certificate';
  return undefined;
}

async function exists(path: string): Promise<boolean> {
  try {
    await fsp.access(path);
    return true;
  } catch {
    return false;
  }
}

async function writeKubeconfigFor(d: BootstrapDeps, bootstrap: RestConfig): Promise<void> {
  await fsp.mkdir(dirname(d.kubeconfigPath), { recursive: true, mode: 0o755 });
  const text = renderKubeconfig({
    server: bootstrap.server,
    caPem: bootstrap.caPem,
    insecureSkipTLSVerify: bootstrap.insecureSkipTLSVerify,
    tlsServerName: bootstrap.tlsServerName,
    certFile: d.store.currentPath,
    keyFile: d.store.currentPath,
  });
  await writeAtomic(d.kubeconfigPath, text, 0o600);
}

/** Resolves the identity to run with; rejects with BootstrapError, KubeconfigError, CsrDeniedError, CsrRejectedError, CsrTimeoutError or AbortError. */
export async function loadOrBootstrapIdentity(d: BootstrapDeps, signal: AbortSignal): Promise<ClientIdentity> {
  const now = d.clock.now();
  if (d.kubeconfigPath && (await exists(d.kubeconfigPath))) {
    try {
      const config = await loadKubeconfig(d.kubeconfigPath);
      const problem = clientCertProblem(config, now);
      if (!problem) return { config, origin: 'kubeconfig' };
      if (!d.bootstrapKubeconfigPath) throw new BootstrapError(`kubeconfig ${d.kubeconfigPath}: ${problem}, and no --bootstrap-kubeconfig was given to obtain a new one`);
      d.log.warn({ kubeconfig: d.kubeconfigPath, problem }, 'existing kubeconfig is not usable; bootstrapping a new client certificate');
    } catch (e) {
      if (!(e instanceof KubeconfigError) || !d.bootstrapKubeconfigPath) throw e;
      d.log.warn({ kubeconfig: d.kubeconfigPath, error: e.message }, 'existing kubeconfig is not usable; bootstrapping a new client certificate');
    }
  } else if (!d.bootstrapKubeconfigPath) {
    throw new BootstrapError(
      d.kubeconfigPath ? `kubeconfig ${d.kubeconfigPath} does not exist and no --bootstrap-kubeconfig was given` : 'no --kubeconfig was given',
    );
  }

  const bootstrap = await loadKubeconfig(d.bootstrapKubeconfigPath);
  const stored = await d.store.current();
  if (stored && now >= stored.notBefore && now < stored.notAfter) {
    d.log.info({ cert: stored.path, notAfter: new Date(stored.notAfter).toISOString() }, 'using the stored client certificate; writing kubeconfig');
    await writeKubeconfigFor(d, bootstrap);
    return { config: await loadKubeconfig(d.kubeconfigPath), origin: 'cert-store' };
  }

  let keyPem = await d.store.pendingKey();
  if (keyPem) d.log.info({ key: d.store.pendingKeyPath }, 'reusing the private key of an earlier certificate request');
  else {
    keyPem = generateClientKey();
    await d.store.savePendingKey(keyPem);
  }
  const csrPem = await nodeCertificateRequest(keyPem, d.nodeName);
  const client = d.makeClient(bootstrap);
  let certPem: string;
  try {
    const issued = await requestCertificate(
      { client, clock: d.clock, log: d.log, ...d.request },
      { csr: csrObject(csrPem, { expirationSeconds: d.expirationSeconds }) },
      signal,
    );
    certPem = issued.certPem;
    d.log.info({ csr: issued.csrName }, 'client certificate issued');
  } finally {
    await client.close?.();
  }
  if (!keyMatchesCertificate(certPem, keyPem)) throw new BootstrapError('the issued certificate does not match the private key of the request');
  const file = await d.store.update(certPem, keyPem);
  await d.store.clearPendingKey();
  await writeKubeconfigFor(d, bootstrap);
  d.log.info({ cert: file, kubeconfig: d.kubeconfigPath }, 'stored the client certificate and wrote kubeconfig');
  return { config: await loadKubeconfig(d.kubeconfigPath), origin: 'bootstrap' };
}
