import type { KObject } from '../../api/types';
import { isObject } from '../../api/types';

/*
 * Typed reads of a CertificateSigningRequest's spec and status, for the controllers that approve
 * and sign requests (the approval handler writes conditions through the store as sent).
 */

/** certificates.svc.io/v1 CertificateSigningRequest spec (request is base64 of a PEM CERTIFICATE REQUEST). */
export interface CsrSpec {
  request?: string;
  signerName?: string;
  expirationSeconds?: number;
  usages?: string[];
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** One status.conditions entry: type Approved, Denied or Failed (others allowed), status True/False/Unknown. */
export interface CsrCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastUpdateTime?: string;
  lastTransitionTime?: string;
}

export function csrSpec(csr: KObject): CsrSpec {
  return isObject(csr.spec) ? csr.spec : {};
}

export function csrConditions(csr: KObject): CsrCondition[] {
  const status = csr.status as { conditions?: unknown } | undefined;
  return Array.isArray(status?.conditions) ? (status.conditions as unknown[]).filter(isObject).map((c) => c as unknown as CsrCondition) : [];
}

/** Upstream certificates.HasTrueCondition. */
export function hasTrueCondition(csr: KObject, type: string): boolean {
  return csrConditions(csr).some((c) => c.type === type && c.status === 'True');
}

/** status.certificate (base64 of PEM) or undefined while unsigned. */
export function csrCertificate(csr: KObject): string | undefined {
  const c = (csr.status as { certificate?: unknown } | undefined)?.certificate;
  return typeof c === 'string' && c !== '' ? c : undefined;
}
