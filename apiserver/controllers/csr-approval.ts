import { ApiError, errors } from '../api/errors';
import type { KObject } from '../api/types';
import { isObject } from '../api/types';
import { handleGet } from '../handlers/get';
import { reply, writeContext, type ResourceRequest } from '../handlers/context';
import { decodeObject, readBody } from '../server/decode';
import { bodyFormat } from '../server/negotiation';
import { parseFieldValidation } from '../validation/field-validation';

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
  return isObject(csr.spec) ? (csr.spec) : {};
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

/**
 * The certificatesigningrequests/approval sub-resource (register under
 * 'certificates.svc.io/certificatesigningrequests/approval'). GET returns the CSR; PUT takes a whole
 * CSR and, as upstream's csrApprovalStrategy, changes only status.conditions: spec, the issued
 * certificate and metadata stay as stored. The write goes through the store with subresource
 * 'approval', so the CSR type's rules apply (upstream ValidateCertificateSigningRequestApprovalUpdate:
 * Approved and Denied only with status True, never both, no duplicate types, none removed → 422;
 * condition timestamps filled by its update hook). A resourceVersion in the body pins the write (409).
 */
export async function handleCsrApproval(r: ResourceRequest): Promise<void> {
  if (r.info.verb === 'get') return handleGet(r);
  if (r.info.verb !== 'update') {
    throw new ApiError('MethodNotAllowed', `the server does not allow this method on the requested resource (${r.req.method ?? ''})`);
  }
  const format = bodyFormat(r.req.headers['content-type'], 'PUT');
  const fv = parseFieldValidation(r.query.get('fieldValidation'));
  const ctx = { ...writeContext(r), subresource: 'approval' };
  const body = await readBody(r.req);
  const { object: input, warnings } = decodeObject(body, format === 'yaml' ? 'yaml' : 'json', r.type, fv);
  const name = r.info.name;
  if (input.metadata.name !== undefined && input.metadata.name !== name) {
    throw errors.badRequest(`the name of the object (${input.metadata.name}) does not match the name on the URL (${name})`);
  }
  const wanted = (input.status as { conditions?: unknown } | undefined)?.conditions;
  const { object } = await r.store.update(
    r.type,
    r.info.namespace,
    name,
    (current) => {
      const next = structuredClone(current!);
      const status = isObject(next.status) ? next.status : (next.status = {});
      if (wanted === undefined || wanted === null) delete status.conditions;
      else status.conditions = structuredClone(wanted);
      if (input.metadata.resourceVersion) next.metadata.resourceVersion = input.metadata.resourceVersion;
      else delete next.metadata.resourceVersion;
      if (input.metadata.uid) next.metadata.uid = input.metadata.uid;
      return next;
    },
    ctx,
  );
  reply(r, 200, object, { warnings });
}
