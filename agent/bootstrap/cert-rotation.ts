/**
 * Client certificate rotation, as client-go's certificate manager in the kubelet: sleep until a
 * jittered deadline at 70-90% of the certificate's lifetime (notBefore + [0.7, 0.9) x lifetime),
 * then request a new certificate with a new key using the current identity, store it, and swap
 * the client's TLS credentials in place (no restart). Failures retry with back-off. When the
 * current certificate has already expired, the request falls back to the bootstrap credentials
 * (as the kubelet does), if there are any.
 */
import type { ApiClient, CredentialSwappable } from '../client/api-client';
import { isAbort } from '../client/client-error';
import { loadKubeconfig } from '../client/kubeconfig';
import type { RestConfig } from '../client/rest-config';
import type { Log } from '../platform/logger';
import { Backoff } from '../node/backoff';
import type { Clock, Random } from '../platform/clock';
import type { CertStore } from './cert-store';
import { csrObject, generateClientKey, nodeCertificateRequest } from './csr';
import { certificateInfo, keyMatchesCertificate } from './pem';
import { CsrDeniedError, requestCertificate, type CsrRequestDeps } from './request-certificate';

/** The longest single sleep: setTimeout cannot wait more than 2^31-1 ms, and a re-check every hour is cheap. */
const maxSleepMs = 3_600_000;

export interface RotationDeps {
  store: CertStore;
  /** The client all loops use; its credentials are swapped after each rotation. */
  client: ApiClient & CredentialSwappable;
  /** Other clients of the same identity (the heartbeat client): swapped too. */
  alsoSwap?: readonly CredentialSwappable[];
  clock: Clock;
  random?: Random;
  log: Log;
  nodeName: string;
  /** '' when there is no bootstrap kubeconfig to fall back to. */
  bootstrapKubeconfigPath: string;
  makeClient: (config: RestConfig) => ApiClient & { close?: () => Promise<void> };
  expirationSeconds?: number;
  request?: Pick<CsrRequestDeps, 'waitTimeoutMs' | 'maxAttempts' | 'initialBackoffMs' | 'maxBackoffMs'>;
  /** Retry bounds after a failed rotation (default 2 s doubling to 5 min). */
  initialRetryMs?: number;
  maxRetryMs?: number;
  /** Called after each successful rotation with the new certificate's notAfter. */
  onRotated?: (notAfter: number) => void;
}

/** notBefore + lifetime x [0.7, 0.9): upstream's jitteryDuration, wait.Jitter(total, 0.2) - 0.3 x total. */
export function nextRotationDeadline(notBefore: number, notAfter: number, random: Random = Math.random): number {
  const total = notAfter - notBefore;
  return notBefore + total * (0.7 + 0.2 * random());
}

export class CertificateRotator {
  constructor(private readonly d: RotationDeps) {}

  /** Rotates for as long as `signal` is live. Resolves at once when the store holds no pair (the identity is not managed here). Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    const backoff = new Backoff({ initialMs: this.d.initialRetryMs ?? 2000, maxMs: this.d.maxRetryMs ?? 300_000, jitter: 0.1, random: this.d.random });
    while (!signal.aborted) {
      const current = await this.d.store.current();
      if (!current) {
        this.d.log.info({ certDir: this.d.store.dir }, 'no stored client certificate; certificate rotation is off');
        return;
      }
      const deadline = nextRotationDeadline(current.notBefore, current.notAfter, this.d.random);
      this.d.log.info({ notAfter: new Date(current.notAfter).toISOString(), rotateAt: new Date(deadline).toISOString() }, 'client certificate rotation scheduled');
      if (!(await this.sleepUntil(deadline, signal))) return;
      for (;;) {
        try {
          await this.rotate(signal);
          backoff.reset();
          break;
        } catch (e) {
          if (signal.aborted || isAbort(e)) return;
          const retryInMs = backoff.next();
          const level = e instanceof CsrDeniedError ? 'error' : 'warn';
          this.d.log[level]({ retryInMs, error: (e as Error).message }, 'client certificate rotation failed; will retry');
          if (!(await this.d.clock.sleep(retryInMs, signal))) return;
        }
      }
    }
  }

  private async sleepUntil(at: number, signal: AbortSignal): Promise<boolean> {
    for (;;) {
      const left = at - this.d.clock.now();
      if (left <= 0) return !signal.aborted;
      if (!(await this.d.clock.sleep(Math.min(left, maxSleepMs), signal))) return false;
    }
  }

  /** One rotation: new key, CSR with the current (or bootstrap) identity, store, swap. Rejects on failure. */
  async rotate(signal: AbortSignal): Promise<void> {
    const keyPem = generateClientKey();
    const csrPem = await nodeCertificateRequest(keyPem, this.d.nodeName);
    const current = await this.d.store.current();
    const expired = !current || this.d.clock.now() >= current.notAfter;
    let client: ApiClient & { close?: () => Promise<void> } = this.d.client;
    let temporary = false;
    if (expired && this.d.bootstrapKubeconfigPath) {
      this.d.log.warn({}, 'client certificate has expired; requesting a new one with the bootstrap credentials');
      client = this.d.makeClient(await loadKubeconfig(this.d.bootstrapKubeconfigPath));
      temporary = true;
    }
    let certPem: string;
    try {
      const issued = await requestCertificate(
        { client, clock: this.d.clock, log: this.d.log, ...this.d.request },
        { csr: csrObject(csrPem, { expirationSeconds: this.d.expirationSeconds }) },
        signal,
      );
      certPem = issued.certPem;
    } finally {
      if (temporary) await client.close?.();
    }
    if (!keyMatchesCertificate(certPem, keyPem)) throw new Error('the issued certificate does not match the new private key');
    const file = await this.d.store.update(certPem, keyPem);
    for (const c of [this.d.client, ...(this.d.alsoSwap ?? [])]) c.useClientCertificate(certPem, keyPem);
    const notAfter = certificateInfo(certPem).notAfter;
    this.d.log.info({ cert: file, notAfter: new Date(notAfter).toISOString() }, 'rotated the client certificate');
    this.d.onRotated?.(notAfter);
  }
}
