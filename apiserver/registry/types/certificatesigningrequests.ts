import type { Cause } from '../../api/errors';
import { canonicalKey } from '../../api/group-names';
import type { KObject } from '../../api/types';
import type { UserInfo } from '../../api/user';
import { decodeBase64 } from '../base64';
import { withMeta } from '../common-schemas';
import { CONDITION_STATUSES } from '../common-validation';
import { child, duplicate, forbidden, index, invalid, notSupported, required, tooLong } from '../field-errors';
import { byteLen, dns1123LabelErrors, dns1123SubdomainErrors } from '../../api/name-validation';
import { ensureRec, get, num, recs, str, strAt, strs } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { atomicList, bytes, described, int32, map, mapList, obj, ptr, str as s, time, wrappedList } from '../schema-builders';
import { ageColumn, column, humanDuration, type Now } from '../table';
import { certificateBundleError, parseCertificateRequest } from './csr-request';

/** certificates.svc.io/v1 CertificateSigningRequest. The approval sub-resource is wired by the server. */

/** Built-in signer names (upstream kubernetes.io/...). */
export const SIGNERS = {
  apiserverClient: 'svc.io/kube-apiserver-client',
  apiserverClientKubelet: 'svc.io/kube-apiserver-client-kubelet',
  kubeletServing: 'svc.io/kubelet-serving',
  legacyUnknown: 'svc.io/legacy-unknown',
} as const;

export const KEY_USAGES: readonly string[] = [
  'any', 'cert sign', 'client auth', 'code signing', 'content commitment', 'crl sign', 'data encipherment',
  'decipher only', 'digital signature', 'email protection', 'encipher only', 'ipsec end system', 'ipsec tunnel',
  'ipsec user', 'key agreement', 'key encipherment', 'microsoft sgc', 'netscape sgc', 'ocsp signing', 's/mime',
  'server auth', 'signing', 'timestamping',
];

const CONDITION_TYPES = ['Approved', 'Denied', 'Failed'] as const;

const CERTS = 'k8s.io.api.certificates.v1';

export const csrSchema = withMeta(
  `${CERTS}.CertificateSigningRequest`,
  {
    spec: [
      2,
      described('Spec contains the certificate request; immutable after creation.', obj(
        `${CERTS}.CertificateSigningRequestSpec`,
        {
          request: [1, ptr(bytes('A PEM-encoded "CERTIFICATE REQUEST" block (base64 in JSON).'))],
          signerName: [7, ptr(s('The requested signer, a qualified name.'))],
          expirationSeconds: [8, ptr(int32('The requested duration of validity of the issued certificate (at least 600).'))],
          usages: [5, atomicList(s(), 'Requested key usages and extended key usages.')],
          username: [2, s('Set by the server: the user that created the request.')],
          uid: [3, s('Set by the server.')],
          groups: [4, atomicList(s(), 'Set by the server.')],
          extra: [6, map(wrappedList(`${CERTS}.ExtraValue`, s()), 'Set by the server.')],
        },
        { required: ['request', 'signerName'] },
      )),
    ],
    status: [
      3,
      described('Status holds whether the request is approved or denied, and the issued certificate.', obj(`${CERTS}.CertificateSigningRequestStatus`, {
        conditions: [
          1,
          mapList(
            obj(
              `${CERTS}.CertificateSigningRequestCondition`,
              {
                type: [1, ptr(s('Type of the condition: Approved, Denied or Failed.'))],
                status: [6, ptr(s('Status of the condition: True, False or Unknown.'))],
                reason: [2, s('A brief reason for the request state.')],
                message: [3, s('A human-readable description of the request state.')],
                lastUpdateTime: [4, time('The time of the last update to this condition.')],
                lastTransitionTime: [5, time('The time the condition last transitioned from one status to another.')],
              },
              { required: ['type', 'status'] },
            ),
            ['type'],
            'Conditions applied to the request: Approved, Denied and Failed.',
          ),
        ],
        certificate: [2, bytes('The issued PEM certificate chain (base64 in JSON).')],
      })),
    ],
  },
  { required: ['spec'] },
);

/** Upstream SetDefaults_CertificateSigningRequestCondition: status True. */
function defaults(o: KObject): void {
  for (const c of recs(get(o, 'status', 'conditions'))) if (!c.status) c.status = 'True';
}

/** Upstream ValidateSignerName. */
export function signerNameCauses(path: string, name: string): Cause[] {
  if (!name) return [required(path)];
  const segments = name.split('/');
  if (segments.length !== 2) return [invalid(path, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'")];
  const [domain, rest] = segments;
  const out: Cause[] = [];
  if (byteLen(domain) > 253) out.push(tooLong(path, 253));
  const labels = domain.split('.');
  for (const l of labels) {
    const errs = dns1123LabelErrors(l);
    if (errs.length) {
      out.push(...errs.map((e) => invalid(path, domain, `validating label "${l}": ${e}`)));
      break;
    }
  }
  if (labels.length < 2) out.push(invalid(path, domain, 'should be a domain with at least two segments separated by dots'));
  for (const l of rest.split('.')) {
    const errs = dns1123SubdomainErrors(l);
    if (errs.length) {
      out.push(...errs.map((e) => invalid(path, rest, `validating label "${l}": ${e}`)));
      break;
    }
  }
  const maxPath = 253 - 2 - byteLen(domain) - 1;
  if (byteLen(rest) > maxPath) out.push(tooLong(path, maxPath));
  return out;
}

function requestCauses(o: KObject): Cause[] {
  const raw = strAt(o, 'spec', 'request');
  if (!raw) return [];
  const bytes = decodeBase64(raw);
  if (!bytes) return [invalid('spec.request', '<request data>', 'illegal base64 data')];
  try {
    parseCertificateRequest(bytes.toString('utf8'));
    return [];
  } catch (err) {
    return [invalid('spec.request', '<request data>', (err as Error).message)];
  }
}

function conditionCauses(o: KObject): Cause[] {
  const out: Cause[] = [];
  const path = 'status.conditions';
  const seen = new Set<string>();
  let approved = false;
  let denied = false;
  recs(get(o, 'status', 'conditions')).forEach((c, i) => {
    const p = index(path, i);
    const type = strAt(c, 'type');
    const status = strAt(c, 'status');
    if (!type) out.push(required(child(p, 'type')));
    if (!CONDITION_STATUSES.includes(status)) out.push(notSupported(child(p, 'status'), status, CONDITION_STATUSES));
    if (type === 'Approved' || type === 'Denied') {
      if (type === 'Approved') approved = true;
      else denied = true;
      if (status !== 'True') out.push(notSupported(child(p, 'status'), status, ['True']));
    }
    if (seen.has(type)) out.push(duplicate(child(p, 'type'), type));
    seen.add(type);
  });
  if (approved && denied) out.push(invalid(path, get(o, 'status', 'conditions'), 'Approved and Denied conditions are mutually exclusive'));
  return out;
}

/** Upstream validateCertificateSigningRequest (create and every update). */
function validateCommon(o: KObject): Cause[] {
  const out = requestCauses(o);
  const usages = strs(get(o, 'spec', 'usages'));
  if (usages.length === 0) out.push(required('spec.usages'));
  const seen = new Set<string>();
  usages.forEach((u, i) => {
    if (!KEY_USAGES.includes(u)) out.push(notSupported(index('spec.usages', i), u, KEY_USAGES));
    if (seen.has(u)) out.push(duplicate(index('spec.usages', i), u));
    seen.add(u);
  });
  const signer = strAt(o, 'spec', 'signerName');
  if (canonicalKey(signer) === SIGNERS.legacyUnknown) out.push(invalid('spec.signerName', signer, 'the legacy signerName is not allowed via this API version'));
  else out.push(...signerNameCauses('spec.signerName', signer));
  const exp = num(get(o, 'spec', 'expirationSeconds'));
  if (exp !== undefined && exp < 600) out.push(invalid('spec.expirationSeconds', exp, 'may not specify a duration less than 600 seconds (10 minutes)'));
  out.push(...conditionCauses(o));
  const cert = strAt(o, 'status', 'certificate');
  if (cert) {
    const bytes = decodeBase64(cert);
    const err = bytes ? certificateBundleError(bytes.toString('utf8')) : 'illegal base64 data';
    if (err) out.push(invalid('status.certificate', '<certificate data>', err));
  }
  return out;
}

function countType(o: KObject, t: string): number {
  return recs(get(o, 'status', 'conditions')).filter((c) => c.type === t).length;
}

/**
 * Update rules per write path (upstream ValidateCertificateSigningRequest{,Status,Approval}Update):
 * no path may remove an Approved/Denied/Failed condition or change an issued certificate; only
 * 'status' may set the certificate; only 'approval' may add Approved/Denied.
 */
export function validateCsrUpdate(o: KObject, old: KObject, path: 'main' | 'status' | 'approval'): Cause[] {
  const out = validateCommon(o);
  for (const t of CONDITION_TYPES) {
    if (countType(o, t) < countType(old, t)) out.push(forbidden('status.conditions', `updates may not remove a condition of type "${t}"`));
  }
  const cert = strAt(o, 'status', 'certificate');
  const oldCert = strAt(old, 'status', 'certificate');
  if (oldCert && cert !== oldCert) out.push(invalid('status.certificate', '<certificate data>', 'updates may not modify existing certificate content'));
  if (path !== 'status' && cert !== oldCert) out.push(forbidden('status.certificate', 'updates may not set certificate content'));
  if (path !== 'approval') {
    for (const t of ['Approved', 'Denied']) {
      if (countType(o, t) > countType(old, t)) out.push(forbidden('status.conditions', `updates may not add a condition of type "${t}"`));
    }
  }
  return out;
}

/**
 * ResourceType.validate: creates, and updates through /approval or else /status rules (the main
 * resource never changes status, so for it those rules are the same).
 */
function validate(o: KObject, old?: KObject, subresource?: string): Cause[] {
  if (!old) return validateCommon(o);
  return validateCsrUpdate(o, old, subresource === 'approval' ? 'approval' : 'status');
}

/**
 * Upstream PrepareForUpdate (spec is fixed after create) and populateConditionTimestamps:
 * conditions get lastUpdateTime now and keep the lastTransitionTime of an unchanged condition.
 */
export function prepareCsrUpdate(o: KObject, old: KObject, now: Now): Cause[] {
  if (old.spec !== undefined) o.spec = structuredClone(old.spec);
  const stamp = new Date(now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const oldConds = recs(get(old, 'status', 'conditions'));
  for (const c of recs(get(o, 'status', 'conditions'))) {
    if (!str(c.lastUpdateTime)) c.lastUpdateTime = stamp;
    if (!str(c.lastTransitionTime)) {
      const prev = oldConds.find((x) => x.type === c.type && x.status === c.status && str(x.lastTransitionTime));
      c.lastTransitionTime = prev ? prev.lastTransitionTime : stamp;
    }
  }
  return [];
}

/** Upstream PrepareForCreate: the requestor fields always come from the authenticated user, never the client. */
export function setCsrRequestor(o: KObject, user: UserInfo): void {
  const spec = ensureRec(o, 'spec');
  spec.username = user.username;
  if (user.uid) spec.uid = user.uid;
  else delete spec.uid;
  if (user.groups.length) spec.groups = [...user.groups];
  else delete spec.groups;
  if (user.extra && Object.keys(user.extra).length) spec.extra = structuredClone(user.extra);
  else delete spec.extra;
}

/** Upstream extractCSRStatus: Denied / Approved / Pending, then ",Failed" and ",Issued". */
export function csrConditionCell(o: KObject): string {
  const conds = recs(get(o, 'status', 'conditions'));
  const has = (t: string) => conds.some((c) => c.type === t);
  let status = has('Denied') ? 'Denied' : has('Approved') ? 'Approved' : 'Pending';
  if (has('Failed')) status += ',Failed';
  if (strAt(o, 'status', 'certificate')) status += ',Issued';
  return status;
}

export function csrColumns(now: Now): TableColumn[] {
  return [
    ageColumn(now),
    column('SignerName', 'string', 'Requested signer for the request.', (o) => strAt(o, 'spec', 'signerName') || '<none>'),
    column('Requestor', 'string', 'Name of the user that created the request.', (o) => strAt(o, 'spec', 'username')),
    column('RequestedDuration', 'string', 'The requested duration of validity of the issued certificate.', (o) => {
      const exp = num(get(o, 'spec', 'expirationSeconds'));
      return exp === undefined ? '<none>' : humanDuration(exp * 1000);
    }),
    column('Condition', 'string', 'The request conditions: Approved, Denied, Failed, Issued.', csrConditionCell),
  ];
}

export function makeCsrType(now: Now = Date.now): ResourceType {
  return {
    group: 'certificates.svc.io',
    version: 'v1',
    resource: 'certificatesigningrequests',
    singular: 'certificatesigningrequest',
    kind: 'CertificateSigningRequest',
    listKind: 'CertificateSigningRequestList',
    namespaced: false,
    shortNames: ['csr'],
    schema: csrSchema,
    hasStatus: true,
    // /approval changes only status.conditions (validate enforces which), as upstream's approval REST.
    subresourceWrites: { approval: 'status' },
    specFields: [],
    fieldSelectors: { 'spec.signerName': (o) => strAt(o, 'spec', 'signerName') },
    tableColumns: csrColumns(now),
    defaults,
    validate,
    validateUpdate: (o, old) => prepareCsrUpdate(o, old, now),
  };
}

export const csrType: ResourceType = makeCsrType();
