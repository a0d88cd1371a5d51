import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { withMeta } from '../common-schemas';
import { child, invalid, required } from '../field-errors';
import { get, rec, recs, str, strs } from '../obj-access';
import type { ResourceType } from '../resource-type';
import { atomicList, bool, map, obj, str as s } from '../schema-builders';

/**
 * authorization.svc.io review types (2.7, 4.9): SubjectAccessReview (v1 and v1beta1, whose wire
 * name for groups is `group`), LocalSubjectAccessReview, SelfSubjectAccessReview and
 * SelfSubjectRulesReview. They are created, never stored: the server routes their create to
 * handlers/review-handlers.ts and refuses every other verb.
 */

export const AUTHZ_GROUP = 'authorization.svc.io';
/** The group kubectl's compiled-in typed client uses for the review APIs; served as an alias of AUTHZ_GROUP. */
export const UPSTREAM_AUTHZ_GROUP = 'authorization.k8s.io';

const selectorRequirementSchema = obj({ key: s(), operator: s(), values: atomicList(s()) }, { required: ['key', 'operator'] });
const selectorAttributesSchema = obj({ rawSelector: s(), requirements: atomicList(selectorRequirementSchema) });

export const resourceAttributesSchema = obj({
  namespace: s('Namespace of the action; "" means all namespaces for namespaced resources.'),
  verb: s('A kubernetes resource API verb, or * for all.'),
  group: s('API group of the resource; * means all.'),
  version: s('API version of the resource; * means all.'),
  resource: s('Resource type; * means all.'),
  subresource: s('Sub-resource; "" means none.'),
  name: s('Name of the resource being requested for a get or deleted for a delete; "" means all.'),
  fieldSelector: selectorAttributesSchema,
  labelSelector: selectorAttributesSchema,
});

export const nonResourceAttributesSchema = obj({ path: s('URL path of the request.'), verb: s('Standard HTTP verb.') });

const accessStatusSchema = obj({
  allowed: bool('True when the action would be allowed.'),
  denied: bool('True when the action would be denied (an authorizer said no, not only no opinion).'),
  reason: s('Why the action was allowed or denied.'),
  evaluationError: s('An error that occurred while checking.'),
});

function sarSpec(groupsField: 'groups' | 'group') {
  return obj({
    resourceAttributes: resourceAttributesSchema,
    nonResourceAttributes: nonResourceAttributesSchema,
    user: s('The user to test for.'),
    [groupsField]: atomicList(s(), 'The groups to test for.'),
    extra: map(atomicList(s()), 'Extra user information.'),
    uid: s('UID of the user to test for.'),
  });
}

export const subjectAccessReviewSchema = withMeta({ spec: sarSpec('groups'), status: accessStatusSchema }, { required: ['spec'] });
export const subjectAccessReviewV1beta1Schema = withMeta({ spec: sarSpec('group'), status: accessStatusSchema }, { required: ['spec'] });
export const selfSubjectAccessReviewSchema = withMeta(
  { spec: obj({ resourceAttributes: resourceAttributesSchema, nonResourceAttributes: nonResourceAttributesSchema }), status: accessStatusSchema },
  { required: ['spec'] },
);
export const selfSubjectRulesReviewSchema = withMeta(
  {
    spec: obj({ namespace: s('Namespace to evaluate rules for.') }),
    status: obj({
      resourceRules: atomicList(obj({ verbs: atomicList(s()), apiGroups: atomicList(s()), resources: atomicList(s()), resourceNames: atomicList(s()) })),
      nonResourceRules: atomicList(obj({ verbs: atomicList(s()), nonResourceURLs: atomicList(s()) })),
      incomplete: bool('True when the rules are incomplete (an authorizer cannot list its rules).'),
      evaluationError: s('Errors while listing rules.'),
    }),
  },
  { required: ['spec'] },
);

function selectorCauses(sel: unknown, path: string): Cause[] {
  const o = rec(sel);
  if (!o) return [];
  const out: Cause[] = [];
  if (str(o.rawSelector) && recs(o.requirements).length > 0) out.push(invalid(path, sel, 'rawSelector and requirements may not both be set'));
  recs(o.requirements).forEach((r, i) => {
    const p = `${path}.requirements[${i}]`;
    if (!str(r.key)) out.push(required(child(p, 'key')));
    const op = str(r.operator) ?? '';
    const values = strs(r.values);
    if (op === 'In' || op === 'NotIn') {
      if (values.length === 0) out.push(required(child(p, 'values'), 'must be specified when `operator` is \'In\' or \'NotIn\''));
    } else if (op === 'Exists' || op === 'DoesNotExist') {
      if (values.length > 0) out.push(invalid(child(p, 'values'), values, 'may not be specified when `operator` is \'Exists\' or \'DoesNotExist\''));
    } else out.push(invalid(child(p, 'operator'), op, 'not a valid selector operator'));
  });
  return out;
}

/** Upstream ValidateSubjectAccessReviewSpec and friends: exactly one of resource/non-resource attributes. */
export function validateAccessSpec(o: KObject, kind: 'SubjectAccessReview' | 'LocalSubjectAccessReview' | 'SelfSubjectAccessReview'): Cause[] {
  const spec = rec(o.spec) ?? {};
  const out: Cause[] = [];
  const ra = rec(spec.resourceAttributes);
  const nra = rec(spec.nonResourceAttributes);
  if (ra && nra) out.push(invalid('spec.nonResourceAttributes', nra, 'cannot be specified in combination with resourceAttributes'));
  if (!ra && !nra) out.push(required('spec.resourceAttributes', 'exactly one of nonResourceAttributes or resourceAttributes must be specified'));
  if (ra) {
    out.push(...selectorCauses(ra.fieldSelector, 'spec.resourceAttributes.fieldSelector'));
    out.push(...selectorCauses(ra.labelSelector, 'spec.resourceAttributes.labelSelector'));
  }
  if (kind === 'LocalSubjectAccessReview') {
    if (nra) out.push(invalid('spec.nonResourceAttributes', nra, 'disallowed on this kind of request'));
    if (ra && (str(ra.namespace) ?? '') !== (o.metadata.namespace ?? '')) {
      out.push(invalid('spec.resourceAttributes.namespace', ra.namespace ?? '', 'must match metadata.namespace'));
    }
  }
  if (kind !== 'SelfSubjectAccessReview') {
    const groups = strs(spec.groups ?? spec.group);
    if (!str(spec.user) && groups.length === 0) out.push(invalid('spec.user', str(spec.user) ?? '', 'at least one of user or group must be specified'));
  }
  return out;
}

function reviewType(
  version: string,
  resource: string,
  kind: 'SubjectAccessReview' | 'LocalSubjectAccessReview' | 'SelfSubjectAccessReview' | 'SelfSubjectRulesReview',
  namespaced: boolean,
  schema: ResourceType['schema'],
): ResourceType {
  return {
    group: AUTHZ_GROUP,
    version,
    resource,
    singular: resource.slice(0, -1),
    kind,
    listKind: `${kind}List`,
    namespaced,
    schema,
    hasStatus: false,
    validate: kind === 'SelfSubjectRulesReview' ? undefined : (o) => validateAccessSpec(o, kind),
  };
}

export function makeAuthorizationReviewTypes(): ResourceType[] {
  return [
    reviewType('v1', 'selfsubjectaccessreviews', 'SelfSubjectAccessReview', false, selfSubjectAccessReviewSchema),
    reviewType('v1', 'selfsubjectrulesreviews', 'SelfSubjectRulesReview', false, selfSubjectRulesReviewSchema),
    reviewType('v1', 'subjectaccessreviews', 'SubjectAccessReview', false, subjectAccessReviewSchema),
    reviewType('v1', 'localsubjectaccessreviews', 'LocalSubjectAccessReview', true, subjectAccessReviewSchema),
    reviewType('v1beta1', 'subjectaccessreviews', 'SubjectAccessReview', false, subjectAccessReviewV1beta1Schema),
  ];
}

/** spec.groups, or the v1beta1 wire name spec.group. */
export function reviewGroups(spec: Record<string, unknown>): string[] {
  return strs(get(spec, 'groups') ?? get(spec, 'group'));
}
