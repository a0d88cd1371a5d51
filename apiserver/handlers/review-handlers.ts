import { ApiError } from '../api/errors';
import { canonicalGroup } from '../api/group-names';
import type { KObject } from '../api/types';
import { isObject } from '../api/types';
import type { UserInfo } from '../api/user';
import type { SelectorAttributes, SelectorRequirement } from '../authz/attributes';
import type { ChainDecision } from '../authz/authorization-chain';
import type { RulesReviewStatus } from '../authz/rule-lister';
import { CBOR_MEDIA_TYPE } from '../codec/cbor-wire';
import { decodeObject as decodeProtobuf, isProtobufEnvelope, PROTOBUF_MEDIA_TYPE } from '../codec/envelope';
import { rec, recs, str, strs } from '../registry/obj-access';
import { AUTHZ_GROUP, reviewGroups, UPSTREAM_AUTHZ_GROUP, validateAccessSpec } from '../registry/types/authorization-reviews';
import { parseDocument, readBody } from '../server/decode';
import type { RequestInfo } from '../server/request-info';
import { cborServed, reply, type ResourceRequest } from './context';

/** What the review handlers need from authorization. */
export interface ReviewDeps {
  /** The whole chain's decision for the attributes (system:masters included). */
  decide(a: SelectorAttributes): Promise<ChainDecision>;
  /** The rules a user has in a namespace (SelfSubjectRulesReview). */
  rules(user: UserInfo, namespace: string): RulesReviewStatus;
}

export type VirtualCreate = (r: ResourceRequest) => Promise<void>;

/**
 * The create handlers of the review APIs (4.9), keyed "group/version/resource": they evaluate and
 * answer 201 with status filled, and store nothing. The router sends `create` of these types here
 * and answers 405 to every other verb on them.
 */
export function makeReviewHandlers(deps: ReviewDeps): ReadonlyMap<string, VirtualCreate> {
  const m = new Map<string, VirtualCreate>();
  m.set(`${AUTHZ_GROUP}/v1/selfsubjectaccessreviews`, (r) => accessReview(r, deps, 'SelfSubjectAccessReview'));
  m.set(`${AUTHZ_GROUP}/v1/subjectaccessreviews`, (r) => accessReview(r, deps, 'SubjectAccessReview'));
  m.set(`${AUTHZ_GROUP}/v1beta1/subjectaccessreviews`, (r) => accessReview(r, deps, 'SubjectAccessReview'));
  m.set(`${AUTHZ_GROUP}/v1/localsubjectaccessreviews`, (r) => accessReview(r, deps, 'LocalSubjectAccessReview'));
  m.set(`${AUTHZ_GROUP}/v1/selfsubjectrulesreviews`, (r) => rulesReviewHandler(r, deps));
  return m;
}

type AccessKind = 'SubjectAccessReview' | 'LocalSubjectAccessReview' | 'SelfSubjectAccessReview';

/** Reads the review body (JSON, YAML or enveloped protobuf) and checks apiVersion and kind; returns the object and the apiVersion to answer with. */
async function readReview(r: ResourceRequest, kind: string): Promise<{ obj: KObject; apiVersion: string }> {
  if (r.info.verb !== 'create' || r.info.name || r.info.subresource) {
    throw new ApiError('MethodNotAllowed', `the server does not allow this method on the requested resource (${r.req.method ?? ''})`);
  }
  const body = await readBody(r.req);
  const ct = (r.req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  let value: unknown;
  if (ct === PROTOBUF_MEDIA_TYPE || (ct === '' && isProtobufEnvelope(body))) value = decodeProtobuf(r.type.schema, body);
  else if (ct === '' || ct === 'application/json') value = parseDocument(body, 'json').value;
  else if (ct === 'application/yaml') value = parseDocument(body, 'yaml').value;
  else if (ct === CBOR_MEDIA_TYPE && cborServed(r)) value = parseDocument(body, 'cbor').value;
  else {
    const cbor = cborServed(r) ? `, ${CBOR_MEDIA_TYPE}` : '';
    throw new ApiError('UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, ${PROTOBUF_MEDIA_TYPE}${cbor}`);
  }
  if (!isObject(value)) throw new ApiError('BadRequest', 'the request body must be a JSON or YAML object');
  const version = r.type.version;
  const allowed = [`${AUTHZ_GROUP}/${version}`, `${UPSTREAM_AUTHZ_GROUP}/${version}`];
  const av = value.apiVersion;
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the client's value, of whatever JSON type, as String() prints it
  if (av !== undefined && av !== '' && !allowed.includes(String(av))) {
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the client's value, of whatever JSON type, as String() prints it
    throw new ApiError('BadRequest', `the API version in the data (${String(av)}) does not match the expected API version (${allowed[0]})`);
  }
  if (value.kind !== undefined && value.kind !== '' && value.kind !== kind) {
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the client's value, of whatever JSON type, as String() prints it
    throw new ApiError('BadRequest', `the kind in the data (${String(value.kind)}) does not match the expected kind (${kind})`);
  }
  if (!isObject(value.metadata)) value.metadata = {};
  // Answer in the group the client spoke: a typed upstream client decodes only its own group.
  const fromPath = r.req.url?.includes(`/apis/${UPSTREAM_AUTHZ_GROUP}/`) ? UPSTREAM_AUTHZ_GROUP : AUTHZ_GROUP;
  const apiVersion = typeof av === 'string' && av ? av : `${fromPath}/${version}`;
  return { obj: value as KObject, apiVersion };
}

function invalid(kind: string, causes: ReturnType<typeof validateAccessSpec>): ApiError {
  return new ApiError('Invalid', `${kind}.${AUTHZ_GROUP} "" is invalid: ${causes.map((c) => `${c.field}: ${c.message}`).join(', ')}`, { kind, group: AUTHZ_GROUP, causes });
}

async function accessReview(r: ResourceRequest, deps: ReviewDeps, kind: AccessKind): Promise<void> {
  const { obj, apiVersion } = await readReview(r, kind);
  const spec = rec(obj.spec) ?? {};
  obj.spec = spec;
  if (kind === 'LocalSubjectAccessReview') {
    if (obj.metadata.namespace && obj.metadata.namespace !== r.info.namespace) {
      throw new ApiError('BadRequest', 'the namespace of the provided object does not match the namespace sent on the request');
    }
    obj.metadata.namespace = r.info.namespace;
    const ra = rec(spec.resourceAttributes);
    if (ra && !str(ra.namespace)) ra.namespace = r.info.namespace;
  }
  const causes = validateAccessSpec(obj, kind);
  if (causes.length) throw invalid(kind, causes);
  const user: UserInfo =
    kind === 'SelfSubjectAccessReview'
      ? r.user
      : { username: str(spec.user) ?? '', uid: str(spec.uid), groups: reviewGroups(spec), extra: extraOf(spec.extra) };
  const attrs = attributesFromSpec(user, spec);
  const d = await deps.decide(attrs);
  const status: Record<string, unknown> = { allowed: d.allowed };
  if (d.denied) status.denied = true;
  if (d.reason) status.reason = d.reason;
  reply(r, 201, { apiVersion, kind, metadata: { ...obj.metadata, creationTimestamp: null }, spec: obj.spec, status });
}

async function rulesReviewHandler(r: ResourceRequest, deps: ReviewDeps): Promise<void> {
  const { obj, apiVersion } = await readReview(r, 'SelfSubjectRulesReview');
  const spec = rec(obj.spec) ?? {};
  const status = deps.rules(r.user, str(spec.namespace) ?? '');
  reply(r, 201, { apiVersion, kind: 'SelfSubjectRulesReview', metadata: { ...obj.metadata, creationTimestamp: null }, spec, status });
}

function extraOf(v: unknown): Record<string, string[]> | undefined {
  if (!isObject(v)) return undefined;
  const out: Record<string, string[]> = {};
  for (const [k, x] of Object.entries(v)) out[k] = strs(x);
  return out;
}

function requirements(sel: unknown): SelectorRequirement[] | undefined {
  const o = rec(sel);
  if (!o) return undefined;
  const reqs = recs(o.requirements).map((x) => ({ key: str(x.key) ?? '', operator: str(x.operator) ?? '', values: strs(x.values) }));
  return reqs.length ? reqs : undefined;
}

/** Upstream ResourceAttributesFrom / NonResourceAttributesFrom: a review spec as request attributes. */
export function attributesFromSpec(user: UserInfo, spec: Record<string, unknown>): SelectorAttributes {
  const ra = rec(spec.resourceAttributes);
  if (ra) {
    const info: RequestInfo = {
      isResourceRequest: true,
      path: '',
      verb: str(ra.verb) ?? '',
      apiPrefix: 'apis',
      // Either name of a group asks about the same group (issue 17): authorized as the canonical one.
      apiGroup: canonicalGroup(str(ra.group) ?? ''),
      apiVersion: str(ra.version) ?? '',
      namespace: str(ra.namespace) ?? '',
      resource: str(ra.resource) ?? '',
      subresource: str(ra.subresource) ?? '',
      name: str(ra.name) ?? '',
    };
    const a: SelectorAttributes = { user, info };
    const fs = requirements(ra.fieldSelector);
    const ls = requirements(ra.labelSelector);
    if (fs) a.fieldSelector = fs;
    if (ls) a.labelSelector = ls;
    return a;
  }
  const nra = rec(spec.nonResourceAttributes) ?? {};
  const info: RequestInfo = {
    isResourceRequest: false,
    path: str(nra.path) ?? '',
    verb: str(nra.verb) ?? '',
    apiPrefix: '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
  };
  return { user, info };
}
