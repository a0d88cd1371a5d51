/**
 * Keeps the agent server's serving certificate fresh without a restart. A generated (self-signed)
 * certificate is replaced at 80% of its life, like the client certificate's rotation
 * (bootstrap/cert-rotation.ts, which follows client-go's 70-90% window; a self-signed certificate
 * needs no jitter since no signer is shared). Configured files (tlsCertFile/tlsPrivateKeyFile) are
 * polled and reloaded when they change, e.g. after an operator or cert-manager renews them.
 * Either way the new pair is handed to `apply` (the server's setSecureContext); a pair that cannot
 * be loaded is logged and the old one kept.
 *
 * Upstream's serverTLSBootstrap requests the serving certificate with a CSR for signer
 * kubernetes.io/kubelet-serving; our API server's CSR signer serves only the client signers, so
 * serverTLSBootstrap is not offered and rotation is self-signed.
 */
import { stat } from 'node:fs/promises';
import type { Clock } from '../platform/clock';
import type { Log } from '../platform/logger';
import { certValidity, ensureServingCert, rotationDeadline, type ServingCert, type ServingCertOptions } from './serving-cert';

/** setTimeout cannot wait more than 2^31-1 ms; a re-check every hour is cheap. */
const maxSleepMs = 3_600_000;

export interface ServingCertRotatorOptions {
  /** How the certificate was made or loaded (the same options are used to make the next one). */
  cert: ServingCertOptions;
  /** The pair in use now. */
  current: ServingCert;
  clock: Clock;
  log: Log;
  /** Installs a new pair in the server. Throws when the pair is unusable (the old one stays). */
  apply: (cert: ServingCert) => void;
  /** How often configured files are checked for changes (default 10 s). */
  pollMs?: number;
  /** Wait after a failed rotation (default 60 s). */
  retryMs?: number;
}

export class ServingCertRotator {
  private current: ServingCert;

  constructor(private readonly o: ServingCertRotatorOptions) {
    this.current = o.current;
  }

  /** The pair in use. */
  get cert(): ServingCert {
    return this.current;
  }

  /** Rotates or reloads until the signal aborts. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    if (this.o.cert.certFile && this.o.cert.keyFile) await this.watchFiles(signal);
    else await this.rotateGenerated(signal);
  }

  /** When the generated certificate is due (ms since the epoch). */
  deadline(): number {
    const v = certValidity(this.current.certPem);
    return rotationDeadline(v.notBefore, v.notAfter);
  }

  private async rotateGenerated(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const wait = this.deadline() - this.o.clock.now();
      if (wait > 0) {
        if (!(await this.o.clock.sleep(Math.min(wait, maxSleepMs), signal))) return;
        continue;
      }
      try {
        const next = await ensureServingCert({ ...this.o.cert, force: true, now: new Date(this.o.clock.now()) });
        this.o.apply(next);
        this.current = next;
        this.o.log.info({ cert: next.certFile, notAfter: new Date(certValidity(next.certPem).notAfter).toISOString() }, 'rotated the serving certificate');
      } catch (e) {
        this.o.log.warn({ error: (e as Error).message }, 'cannot rotate the serving certificate; will retry');
        if (!(await this.o.clock.sleep(this.o.retryMs ?? 60_000, signal))) return;
      }
    }
  }

  private async watchFiles(signal: AbortSignal): Promise<void> {
    const files = [this.o.cert.certFile!, this.o.cert.keyFile!];
    const fingerprint = async () => (await Promise.all(files.map((f) => stat(f)))).map((s) => `${s.ino}:${s.size}:${s.mtimeMs}`).join('|');
    let last = await fingerprint().catch(() => '');
    while (await this.o.clock.sleep(this.o.pollMs ?? 10_000, signal)) {
      let now: string;
      try {
        now = await fingerprint();
      } catch (e) {
        this.o.log.warn({ error: (e as Error).message }, 'cannot read the serving certificate files; keeping the current pair');
        continue;
      }
      if (now === last) continue;
      try {
        const next = await ensureServingCert(this.o.cert);
        this.o.apply(next);
        this.current = next;
        last = now;
        this.o.log.info({ cert: next.certFile }, 'reloaded the serving certificate files');
      } catch (e) {
        // Probably caught between the two files' writes: try again on the next poll.
        this.o.log.warn({ error: (e as Error).message }, 'cannot load the changed serving certificate; keeping the current pair');
      }
    }
  }
}
