/**
 * Submits a CertificateSigningRequest and waits for its certificate, as client-go's
 * certificate/csr.RequestCertificate + WaitForCertificate: create the CSR (retrying while the API
 * server is unreachable), then watch it until status.certificate is set. A Denied or Failed
 * condition ends the wait with CsrDeniedError. Each wait is bounded; when it runs out a new CSR
 * (same key) is submitted, up to maxAttempts, then CsrTimeoutError.
 */
import type { KObject } from '../../apiserver/api/types';
import { isObject } from '../../apiserver/api/types';
import type { ApiClient } from '../client/api-client';
import { ClientError, isAbort, isGone } from '../client/client-error';
import { csrResource } from '../client/resources';
import { resumingWatch } from '../client/resuming-watch';
import type { Log } from '../platform/logger';
import { Backoff } from '../node/backoff';
import type { Clock } from '../platform/clock';
import { pemBlocks } from './pem';
import { AgentError, DeadlineExceededError, ForbiddenError, kindOfHttpStatus } from '../errors';

export class CsrDeniedError extends ForbiddenError {
  override readonly name = 'CsrDeniedError';
  override readonly code = 'SVC_NODE_ERR_CSR_DENIED';
  constructor(
    readonly csrName: string,
    readonly condition: 'Denied' | 'Failed',
    readonly reason: string,
    readonly detail: string,
  ) {
    super(
      `certificate signing request ${csrName} was ${condition === 'Denied' ? 'denied' : 'marked failed'}` +
        (reason ? ` (reason ${reason})` : '') +
        (detail ? `: ${detail}` : ''),
    );
  }
}

export class CsrTimeoutError extends DeadlineExceededError {
  override readonly name = 'CsrTimeoutError';
  override readonly code = 'SVC_NODE_ERR_CSR_TIMEOUT';
}

/** The API server refused the credentials used for the request (401/403): retrying cannot help. */
export class CsrRejectedError extends AgentError {
  override readonly name = 'CsrRejectedError';
  override readonly code = 'SVC_NODE_ERR_CSR_REJECTED';
  constructor(
    /** The API server's answer: 401 or 403 (also the error's httpStatus). */
    readonly status: number,
    message: string,
  ) {
    super(message, kindOfHttpStatus(status));
  }
}

export interface CsrRequestDeps {
  client: ApiClient;
  clock: Clock;
  log: Log;
  /** Bound on one wait for a certificate (default 15 min). */
  waitTimeoutMs?: number;
  /** CSRs submitted before giving up (default 3). */
  maxAttempts?: number;
  /** Back-off for create retries and watch re-opens (default 1 s doubling to 30 s). */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
}

interface CsrCondition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
}

type Outcome = { certPem: string } | { denied: CsrDeniedError } | undefined;

/** Reads a CSR's outcome: issued certificate, denial/failure, or still pending (undefined). */
export function csrOutcome(csr: KObject): Outcome {
  const status = isObject(csr['status']) ? csr['status'] : {};
  const name = csr.metadata.name ?? '';
  const conditions = Array.isArray(status['conditions']) ? (status['conditions'] as CsrCondition[]) : [];
  for (const c of conditions) {
    if ((c.type === 'Denied' || c.type === 'Failed') && (c.status ?? 'True') === 'True') {
      return { denied: new CsrDeniedError(name, c.type, c.reason ?? '', c.message ?? '') };
    }
  }
  const cert = status['certificate'];
  if (typeof cert === 'string' && cert !== '') {
    // JSON carries the PEM bytes base64-encoded ([]byte); accept bare PEM too.
    const pem = cert.includes('-----BEGIN') ? cert : Buffer.from(cert, 'base64').toString('utf8');
    if (pemBlocks(pem).some((b) => b.type === 'CERTIFICATE')) return { certPem: pem };
  }
  return undefined;
}

function abortError(): Error {
  const e = new Error('The operation was aborted');
  e.name = 'AbortError';
  return e;
}

export interface CertificateRequest {
  csr: KObject;
}

/**
 * Submits the CSR object and resolves the issued certificate (PEM). Rejects with CsrDeniedError,
 * CsrRejectedError (401/403), CsrTimeoutError, or AbortError when `signal` aborts.
 */
export async function requestCertificate(d: CsrRequestDeps, req: CertificateRequest, signal: AbortSignal): Promise<{ certPem: string; csrName: string }> {
  const attempts = d.maxAttempts ?? 3;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const created = await createWithRetry(d, req.csr, signal);
    const name = created.metadata.name ?? '';
    d.log.info({ csr: name, attempt }, 'submitted certificate signing request; waiting for approval and signing');
    const certPem = await waitForCertificate(d, created, signal);
    if (certPem !== undefined) return { certPem, csrName: name };
    d.log.warn({ csr: name, attempt, waitedMs: d.waitTimeoutMs ?? 900_000 }, 'no certificate issued in time; submitting a new request');
  }
  throw new CsrTimeoutError(`no certificate was issued for ${attempts} certificate signing request(s); is the CSR approver running?`);
}

async function createWithRetry(d: CsrRequestDeps, csr: KObject, signal: AbortSignal): Promise<KObject> {
  const backoff = new Backoff({ initialMs: d.initialBackoffMs ?? 1000, maxMs: d.maxBackoffMs ?? 30_000 });
  for (;;) {
    if (signal.aborted) throw abortError();
    try {
      return await d.client.create(csrResource, csr, { signal });
    } catch (e) {
      if (signal.aborted || isAbort(e)) throw abortError();
      if (e instanceof ClientError && (e.status === 401 || e.status === 403)) {
        throw new CsrRejectedError(
          e.status,
          e.status === 401
            ? `the API server rejected the bootstrap credentials (401 Unauthorized): the token may be expired, deleted or wrong (${e.message})`
            : `the API server forbade creating a certificate signing request (403 Forbidden): ${e.message}`,
        );
      }
      if (!(e instanceof ClientError) || !e.retriable) throw e;
      const retryInMs = backoff.next();
      d.log.warn({ retryInMs, code: e.status, error: e.message }, 'unable to create certificate signing request: API server unavailable; retrying');
      await d.clock.sleep(retryInMs, signal);
    }
  }
}

/** Resolves the certificate, or undefined when the wait bound passes first. */
async function waitForCertificate(d: CsrRequestDeps, created: KObject, signal: AbortSignal): Promise<string | undefined> {
  const name = created.metadata.name ?? '';
  const bound = new AbortController();
  void d.clock.sleep(d.waitTimeoutMs ?? 900_000, AbortSignal.any([signal, bound.signal])).then((elapsed) => {
    if (elapsed) bound.abort();
  });
  const waitSignal = AbortSignal.any([signal, bound.signal]);
  const backoff = new Backoff({ initialMs: d.initialBackoffMs ?? 1000, maxMs: d.maxBackoffMs ?? 30_000 });
  let current: KObject | undefined = created;
  try {
    while (!waitSignal.aborted) {
      if (current) {
        const outcome = csrOutcome(current);
        if (outcome && 'denied' in outcome) throw outcome.denied;
        if (outcome) return outcome.certPem;
      }
      try {
        if (!current) current = await d.client.get(csrResource, name, { signal: waitSignal });
        const from: string | undefined = current.metadata.resourceVersion;
        current = undefined;
        for await (const ev of resumingWatch(d.client, csrResource, {
          fieldSelector: `metadata.name=${name}`,
          resourceVersion: from,
          timeoutSeconds: 300,
          signal: waitSignal,
          sleep: (ms, s) => d.clock.sleep(ms, s),
        })) {
          if (ev.object.metadata.name !== name) continue;
          if (ev.type === 'DELETED') throw new CsrDeniedError(name, 'Failed', 'Deleted', 'the request was deleted before a certificate was issued');
          const outcome = csrOutcome(ev.object);
          if (outcome && 'denied' in outcome) throw outcome.denied;
          if (outcome) return outcome.certPem;
        }
      } catch (e) {
        if (e instanceof CsrDeniedError) throw e;
        if (waitSignal.aborted || isAbort(e)) break;
        if (isGone(e)) continue; // re-read the CSR, then watch from its version
        const retryInMs = backoff.next();
        d.log.warn({ csr: name, retryInMs, error: (e as Error).message }, 'lost the watch on the certificate signing request; retrying');
        await d.clock.sleep(retryInMs, waitSignal);
      }
    }
  } finally {
    bound.abort();
  }
  if (signal.aborted) throw abortError();
  return undefined; // the wait bound passed
}
