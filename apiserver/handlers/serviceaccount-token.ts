import { ApiError, errors, fieldError } from '../api/errors';
import type { AdmissionAttributes } from '../admission/admission';
import type { KObject } from '../api/types';
import { isObject } from '../api/types';
import { isMirrorPod } from '../api/well-known';
import type { BoundObjectGetter, ObjectRef, SaPrivateClaim, ServiceAccountTokenIssuer } from '../authn/service-account-token';
import { decodeObject as decodeProtobuf } from '../codec/envelope';
import { tokenRequestSchema, tokenRequestType } from '../registry/types/serviceaccount-token-request';
import { checkObject, parseDocument, readBody } from '../server/decode';
import { bodyFormat } from '../server/negotiation';
import { rfc3339 } from '../api/time';
import { parseFieldValidation } from '../validation/field-validation';
import { cborServed, reply, type ResourceRequest } from './context';

/** Upstream defaults and bounds of TokenRequest.spec.expirationSeconds. */
export const DEFAULT_EXPIRATION_SECONDS = 3600;
export const MIN_EXPIRATION_SECONDS = 600;
export const MAX_EXPIRATION_SECONDS = 2 ** 32;
/** The group name upstream clients put in TokenRequest bodies. */
const UPSTREAM_API_VERSION = 'authentication.k8s.io/v1';

export interface ServiceAccountTokenDeps {
  issuer: ServiceAccountTokenIssuer;
  objects: BoundObjectGetter;
  /** The API audiences: the audiences of a token whose request names none. */
  apiAudiences: readonly string[];
  /** --service-account-max-token-expiration in seconds; longer requests are cut to it. 0 or absent: no cap. */
  maxExpirationSeconds?: number;
  /**
   * The admission chain; a TokenRequest is admitted as a CREATE of serviceaccounts/token (upstream
   * does the same: NodeRestriction limits what nodes may ask for). Absent: not admitted.
   */
  admit?: (attrs: AdmissionAttributes) => Promise<void>;
}

/**
 * POST /api/v1/namespaces/{ns}/serviceaccounts/{name}/token (TokenRequest, 5.1): issues a bound
 * service account token, as upstream's serviceaccount TokenREST. Register under the router's
 * sub-resource key "/serviceaccounts/token".
 */
export function makeServiceAccountTokenHandler(d: ServiceAccountTokenDeps): (r: ResourceRequest) => Promise<void> {
  return async (r) => {
    if (r.info.verb !== 'create') throw errors.methodNotAllowed(`the server does not allow this method on the requested resource (${r.req.method ?? ''})`);
    const body = await readBody(r.req);
    let value: unknown;
    let duplicates: string[] = [];
    if (/^application\/vnd\.kubernetes\.protobuf\b/.test(r.req.headers['content-type'] ?? '')) {
      // kubectl create token sends protobuf; a malformed body is a 400 from the decoder.
      value = { metadata: {}, ...decodeProtobuf(tokenRequestSchema, body) };
    } else {
      const format = bodyFormat(r.req.headers['content-type'], 'POST', { cbor: cborServed(r) });
      ({ value, duplicates } = parseDocument(body, format === 'yaml' || format === 'cbor' ? format : 'json'));
    }
    // kubectl create token (client-go) names the group by its upstream name; accept it and answer in kind.
    const sentVersion = isObject(value) && value.apiVersion === UPSTREAM_API_VERSION ? UPSTREAM_API_VERSION : 'authentication.svc.io/v1';
    if (isObject(value) && value.apiVersion === UPSTREAM_API_VERSION) value.apiVersion = 'authentication.svc.io/v1';
    const { object, warnings } = checkObject(value, duplicates, tokenRequestType, parseFieldValidation(r.query.get('fieldValidation')));
    const ns = r.info.namespace;
    const name = r.info.name;
    const spec = isObject(object.spec) ? object.spec : {};
    const expirationSeconds = validateExpiration(spec.expirationSeconds, name);
    let audiences = Array.isArray(spec.audiences) ? spec.audiences.filter((a): a is string => typeof a === 'string' && a !== '') : [];
    if (audiences.length === 0) audiences = [...d.apiAudiences];

    const sa = await d.objects.get('ServiceAccount', ns, name);
    if (!sa) throw errors.notFound('serviceaccounts', name);
    await d.admit?.({ operation: 'CREATE', type: r.type, namespace: ns, name, subresource: 'token', object, user: r.user, dryRun: false });
    const binding: SaPrivateClaim = { namespace: ns, serviceaccount: { name, uid: sa.metadata.uid ?? '' } };
    const boundRef = isObject(spec.boundObjectRef) ? spec.boundObjectRef : undefined;
    if (boundRef) await bind(d.objects, binding, boundRef, name);

    const seconds = d.maxExpirationSeconds ? Math.min(expirationSeconds, d.maxExpirationSeconds) : expirationSeconds;
    const { token, expirationTimestamp } = await d.issuer.issue({ binding, audiences, expirationSeconds: seconds });
    const out: KObject = {
      apiVersion: sentVersion,
      kind: 'TokenRequest',
      metadata: { name, namespace: ns, creationTimestamp: rfc3339(r.now()) },
      spec: { audiences, expirationSeconds: seconds, boundObjectRef: boundRef ?? null },
      status: { token, expirationTimestamp: rfc3339(expirationTimestamp) },
    };
    reply(r, 201, out, { warnings });
  };
}

function validateExpiration(v: unknown, name: string): number {
  if (v === undefined || v === null) return DEFAULT_EXPIRATION_SECONDS;
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the client's value, of whatever JSON type, as String() prints it
  const invalid = (msg: string) => errors.invalid('TokenRequest', name, [fieldError('spec.expirationSeconds', `Invalid value: ${String(v)}: ${msg}`)], 'authentication.svc.io');
  if (typeof v !== 'number' || !Number.isInteger(v)) throw invalid('must be an integer');
  if (v < MIN_EXPIRATION_SECONDS) throw invalid('may not specify a duration less than 10 minutes');
  if (v > MAX_EXPIRATION_SECONDS) throw invalid('may not specify a duration larger than 2^32 seconds');
  return v;
}

/** Checks the bound object exists (and has the given uid) and records it in the binding, as upstream's TokenREST. */
async function bind(objects: BoundObjectGetter, b: SaPrivateClaim, ref: Record<string, unknown>, saName: string): Promise<void> {
  const kind = typeof ref.kind === 'string' ? ref.kind : '';
  const apiVersion = typeof ref.apiVersion === 'string' ? ref.apiVersion : 'v1';
  const name = typeof ref.name === 'string' ? ref.name : '';
  const wantUid = typeof ref.uid === 'string' ? ref.uid : '';
  if ((kind !== 'Pod' && kind !== 'Secret' && kind !== 'Node') || (apiVersion !== 'v1' && apiVersion !== '')) {
    throw errors.badRequest(`cannot bind token to object of type ${apiVersion ? apiVersion + ', ' : ''}Kind=${kind}`);
  }
  if (!name) throw errors.invalid('TokenRequest', saName, [fieldError('spec.boundObjectRef.name', 'Required value', 'FieldValueRequired')], 'authentication.svc.io');
  const o = await objects.get(kind, kind === 'Node' ? '' : b.namespace, name);
  if (!o) throw errors.notFound(`${kind.toLowerCase()}s`, name);
  const uid = o.metadata.uid ?? '';
  if (wantUid && wantUid !== uid) {
    throw new ApiError(
      'Conflict',
      `Operation cannot be fulfilled on ${kind} "${name}": the UID in the bound object reference (${wantUid}) does not match the UID in record. The object might have been deleted and then recreated`,
    );
  }
  const self: ObjectRef = { name, uid };
  if (kind === 'Pod') {
    const spec = isObject(o.spec) ? o.spec : {};
    // Exact, as upstream: a pod without an account (a mirror pod) matches no account, not "default";
    // a mirror pod stored before mirror pods lost their account is refused by name.
    if (isMirrorPod(o)) throw errors.badRequest(`cannot bind token for serviceaccount "${saName}" to mirror pod "${name}": mirror pods run without a service account`);
    const podSa = typeof spec.serviceAccountName === 'string' ? spec.serviceAccountName : '';
    if (podSa !== saName) throw errors.badRequest(`cannot bind token for serviceaccount "${saName}" to pod running with different serviceaccount name.`);
    b.pod = self;
    // As upstream (ServiceAccountTokenPodNodeInfo): a pod-bound token also names the pod's node.
    const nodeName = typeof spec.nodeName === 'string' ? spec.nodeName : '';
    if (nodeName) {
      const node = await objects.get('Node', '', nodeName);
      b.node = { name: nodeName, uid: node?.metadata.uid ?? '' };
    }
  } else if (kind === 'Secret') b.secret = self;
  else b.node = self;
}
