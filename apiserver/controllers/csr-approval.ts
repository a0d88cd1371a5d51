import { ApiError, errors, type Cause } from '../api/errors';
import type { KObject } from '../api/types';
import { isObject } from '../api/types';
import { handleGet } from '../handlers/get';
import { reply, writeContext, type ResourceRequest } from '../handlers/context';
import { duplicate, forbidden, index, invalid, notSupported, required } from '../registry/field-errors';
import { decodeObject, readBody } from '../server/decode';
import { bodyFormat } from '../server/negotiation';
import { rfc3339 } from '../store/object-store';
import { parseFieldValidation } from '../validation/field-validation';

/** Signers served in-process (upstream kubernetes.io/kube-apiserver-client{,-kubelet}, renamed). */
export const SIGNER_KUBELET_CLIENT = 'svc.io/kube-apiserver-client-kubelet';
export const SIGNER_CLIENT = 'svc.io/kube-apiserver-client';

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
  return isObject(csr.spec) ? (csr.spec as CsrSpec) : {};
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

const GROUP = 'certificates.svc.io';
const KIND = 'CertificateSigningRequest';

/**
 * The certificatesigningrequests/approval sub-resource (register under
 * 'certificates.svc.io/certificatesigningrequests/approval'). GET returns the CSR; PUT takes a whole
 * CSR and, as upstream's csrApprovalStrategy, changes only status.conditions: spec, the issued
 * certificate and metadata stay as stored. Conditions are validated as upstream does
 * (ValidateCertificateSigningRequestApprovalUpdate): Approved and Denied only with status True,
 * never both, no duplicate types, and an existing Approved or Denied cannot be removed (422).
 */
export async function handleCsrApproval(r: ResourceRequest): Promise<void> {
  if (r.info.verb === 'get') return handleGet(r);
  if (r.info.verb !== 'update') {
    throw new ApiError('MethodNotAllowed', `the server does not allow this method on the requested resource (${r.req.method ?? ''})`);
  }
  const format = bodyFormat(r.req.headers['content-type'], 'PUT');
  const fv = parseFieldValidation(r.query.get('fieldValidation'));
  // The store's status path is the one that changes status and nothing of the spec.
  const ctx = { ...writeContext(r), subresource: 'status' };
  const body = await readBody(r.req);
  const { object: input, warnings } = decodeObject(body, format === 'yaml' ? 'yaml' : 'json', r.type, fv);
  const name = r.info.name;
  if (input.metadata.name !== undefined && input.metadata.name !== name) {
    throw errors.badRequest(`the name of the object (${input.metadata.name}) does not match the name on the URL (${name})`);
  }
  const wanted = ((input.status as { conditions?: unknown } | undefined)?.conditions ?? []) as unknown;
  const { object } = await r.store.update(
    r.type,
    r.info.namespace,
    name,
    (current) => {
      const cur = current!;
      const conditions = approvalConditions(cur, wanted, r.now());
      const next = structuredClone(cur);
      const status = isObject(next.status) ? next.status : (next.status = {});
      if (conditions.length > 0) status.conditions = conditions;
      else delete status.conditions;
      // Optimistic concurrency as for any update: a resourceVersion in the body pins the write.
      if (input.metadata.resourceVersion) next.metadata.resourceVersion = input.metadata.resourceVersion;
      else delete next.metadata.resourceVersion;
      if (input.metadata.uid) next.metadata.uid = input.metadata.uid;
      return next;
    },
    ctx,
  );
  reply(r, 200, object, { warnings });
}

/**
 * Checks the requested conditions against the stored CSR and fills their timestamps as upstream's
 * populateConditionTimestamps (lastUpdateTime now when unset; lastTransitionTime kept from a stored
 * condition of the same type and status, else now). Throws 422 with every problem found.
 */
export function approvalConditions(current: KObject, wanted: unknown, now: Date): CsrCondition[] {
  const name = current.metadata.name ?? '';
  const path = 'status.conditions';
  if (!Array.isArray(wanted)) throw errors.invalid(KIND, name, [invalid(path, wanted, 'must be a list')], GROUP);
  const causes: Cause[] = [];
  const seen = new Set<string>();
  let approved = false;
  let denied = false;
  const out: CsrCondition[] = [];
  wanted.forEach((raw, i) => {
    const p = index(path, i);
    if (!isObject(raw)) {
      causes.push(invalid(p, raw, 'must be an object'));
      return;
    }
    const c = { ...raw } as unknown as CsrCondition;
    // Upstream SetDefaults_CertificateSigningRequestCondition: an unset status means True.
    if (c.status === undefined || c.status === '') c.status = 'True';
    if (typeof c.type !== 'string' || c.type === '') causes.push(required(`${p}.type`));
    if (!['True', 'False', 'Unknown'].includes(c.status)) causes.push(notSupported(`${p}.status`, c.status, ['False', 'True', 'Unknown']));
    if (c.type === 'Approved' || c.type === 'Denied') {
      if (c.type === 'Approved') approved = true;
      else denied = true;
      if (c.status !== 'True') causes.push(notSupported(`${p}.status`, c.status, ['True']));
    }
    if (seen.has(c.type)) causes.push(duplicate(`${p}.type`, c.type));
    seen.add(c.type);
    out.push(c);
  });
  if (approved && denied) causes.push(invalid(path, wanted, 'Approved and Denied conditions are mutually exclusive'));
  const old = csrConditions(current);
  for (const t of ['Approved', 'Denied']) {
    const before = old.filter((c) => c.type === t).length;
    const after = out.filter((c) => c.type === t).length;
    if (after < before) causes.push(forbidden(path, `updates may not remove a condition of type "${t}"`));
  }
  if (causes.length > 0) throw errors.invalid(KIND, name, causes, GROUP);
  const stamp = rfc3339(now);
  for (const c of out) {
    if (!c.lastUpdateTime) c.lastUpdateTime = stamp;
    if (!c.lastTransitionTime) {
      c.lastTransitionTime = old.find((o) => o.type === c.type && o.status === c.status && o.lastTransitionTime)?.lastTransitionTime ?? stamp;
    }
  }
  return out;
}
