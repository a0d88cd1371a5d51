import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { withMeta } from '../common-schemas';
import { child, invalid, required } from '../field-errors';
import { get, rec, recs, str, strs } from '../obj-access';
import type { ResourceType } from '../resource-type';
import { atomicList, bool, described, map, obj, ptr, str as s, wrappedList } from '../schema-builders';

/**
 * authorization.svc.io review types (2.7, 4.9): SubjectAccessReview (v1 and v1beta1, whose wire
 * name for groups is `group`), LocalSubjectAccessReview, SelfSubjectAccessReview and
 * SelfSubjectRulesReview. They are created, never stored: the server routes their create to
 * handlers/review-handlers.ts and refuses every other verb.
 */

export const AUTHZ_GROUP = 'authorization.svc.io';
/** The group kubectl's compiled-in typed client uses for the review APIs; served as an alias of AUTHZ_GROUP. */
export const UPSTREAM_AUTHZ_GROUP = 'authorization.k8s.io';

const AUTHZ = 'k8s.io.api.authorization.v1';
const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';

const requirement = (message: string) =>
  obj(
    message,
    {
      key: [1, ptr(s('The key the requirement applies to.'))],
      operator: [2, ptr(s('The key\'s relationship to the values: In, NotIn, Exists or DoesNotExist.'))],
      values: [3, atomicList(s(), 'The values; non-empty for In and NotIn, empty for Exists and DoesNotExist.')],
    },
    { required: ['key', 'operator'] },
  );

export const resourceAttributesSchema = obj(`${AUTHZ}.ResourceAttributes`, {
  namespace: [1, s('Namespace of the action; "" means all namespaces for namespaced resources.')],
  verb: [2, s('A kubernetes resource API verb, or * for all.')],
  group: [3, s('API group of the resource; * means all.')],
  version: [4, s('API version of the resource; * means all.')],
  resource: [5, s('Resource type; * means all.')],
  subresource: [6, s('Sub-resource; "" means none.')],
  name: [7, s('Name of the resource being requested for a get or deleted for a delete; "" means all.')],
  fieldSelector: [
    8,
    described(
      'The field selector of the request, limiting the objects it may touch.',
      obj(`${AUTHZ}.FieldSelectorAttributes`, {
        rawSelector: [1, s('The serialization of a field selector as it appears in a query parameter.')],
        requirements: [2, atomicList(requirement(`${META}.FieldSelectorRequirement`), 'The parsed interpretation of a field selector.')],
      }),
    ),
  ],
  labelSelector: [
    9,
    described(
      'The label selector of the request, limiting the objects it may touch.',
      obj(`${AUTHZ}.LabelSelectorAttributes`, {
        rawSelector: [1, s('The serialization of a label selector as it appears in a query parameter.')],
        requirements: [2, atomicList(requirement(`${META}.LabelSelectorRequirement`), 'The parsed interpretation of a label selector.')],
      }),
    ),
  ],
});

export const nonResourceAttributesSchema = obj(`${AUTHZ}.NonResourceAttributes`, { path: [1, s('URL path of the request.')], verb: [2, s('Standard HTTP verb.')] });

const accessStatusSchema = obj(`${AUTHZ}.SubjectAccessReviewStatus`, {
  allowed: [1, ptr(bool('True when the action would be allowed.'))],
  denied: [4, bool('True when the action would be denied (an authorizer said no, not only no opinion).')],
  reason: [2, s('Why the action was allowed or denied.')],
  evaluationError: [3, s('An error that occurred while checking.')],
});

/** SubjectAccessReviewSpec; v1beta1 names the groups field `group` (same number, same wire form). */
function sarSpec(groupsField: 'groups' | 'group') {
  const pkg = groupsField === 'groups' ? AUTHZ : 'k8s.io.api.authorization.v1beta1';
  return obj(`${pkg}.SubjectAccessReviewSpec`, {
    resourceAttributes: [1, described('Information for a resource access request.', resourceAttributesSchema)],
    nonResourceAttributes: [2, described('Information for a non-resource access request.', nonResourceAttributesSchema)],
    user: [3, s('The user to test for.')],
    [groupsField]: [4, atomicList(s(), 'The groups to test for.')],
    extra: [5, map(wrappedList(`${pkg}.ExtraValue`, s()), 'Extra user information.')],
    uid: [6, s('UID of the user to test for.')],
  });
}

export const subjectAccessReviewSchema = withMeta(
  `${AUTHZ}.SubjectAccessReview`,
  {
    spec: [2, described('Spec holds information about the request being evaluated.', sarSpec('groups'))],
    status: [3, described('Status is filled in by the server: whether the request is allowed.', accessStatusSchema)],
  },
  { required: ['spec'] },
);
export const subjectAccessReviewV1beta1Schema = withMeta(
  'k8s.io.api.authorization.v1beta1.SubjectAccessReview',
  { spec: [2, described('Spec holds information about the request being evaluated.', sarSpec('group'))], status: [3, described('Status is filled in by the server: whether the request is allowed.', accessStatusSchema)] },
  { required: ['spec'] },
);
export const localSubjectAccessReviewSchema = withMeta(
  `${AUTHZ}.LocalSubjectAccessReview`,
  {
    spec: [2, described('Spec holds information about the request being evaluated.', sarSpec('groups'))],
    status: [3, described('Status is filled in by the server: whether the request is allowed.', accessStatusSchema)],
  },
  { required: ['spec'] },
);
export const selfSubjectAccessReviewSchema = withMeta(
  `${AUTHZ}.SelfSubjectAccessReview`,
  {
    spec: [2, described('Spec holds information about the request being evaluated: user and groups come from the caller.', obj(`${AUTHZ}.SelfSubjectAccessReviewSpec`, {
        resourceAttributes: [1, described('Information for a resource access request.', resourceAttributesSchema)],
        nonResourceAttributes: [2, described('Information for a non-resource access request.', nonResourceAttributesSchema)],
      }))],
    status: [3, described('Status is filled in by the server: whether the request is allowed.', accessStatusSchema)],
  },
  { required: ['spec'] },
);
export const selfSubjectRulesReviewSchema = withMeta(
  `${AUTHZ}.SelfSubjectRulesReview`,
  {
    spec: [2, described('Spec holds information about the request being evaluated.', obj(`${AUTHZ}.SelfSubjectRulesReviewSpec`, { namespace: [1, s('Namespace to evaluate rules for.')] }))],
    status: [
      3,
      described('Status is filled in by the server: the set of actions the user can perform.', obj(`${AUTHZ}.SubjectRulesReviewStatus`, {
        resourceRules: [
          1,
          atomicList(
            obj(`${AUTHZ}.ResourceRule`, {
              verbs: [1, atomicList(s(), 'Verbs the rule allows; * means all.')],
              apiGroups: [2, atomicList(s(), 'API groups of the resources; * means all.')],
              resources: [3, atomicList(s(), 'Resources the rule applies to; * means all.')],
              resourceNames: [4, atomicList(s(), 'Optional white list of names; empty means every name.')],
            }),
            'The resource actions the subject may perform in the namespace.',
          ),
        ],
        nonResourceRules: [
          2,
          atomicList(
            obj(`${AUTHZ}.NonResourceRule`, {
              verbs: [1, atomicList(s(), 'Standard HTTP verbs the rule allows; * means all.')],
              nonResourceURLs: [2, atomicList(s(), 'Non-resource paths the rule applies to; a trailing * matches any suffix.')],
            }),
            'The non-resource actions the subject may perform.',
          ),
        ],
        incomplete: [3, ptr(bool('True when the rules are incomplete (an authorizer cannot list its rules).'))],
        evaluationError: [4, s('Errors while listing rules.')],
      })),
    ],
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
    reviewType('v1', 'localsubjectaccessreviews', 'LocalSubjectAccessReview', true, localSubjectAccessReviewSchema),
    // Upstream deprecated v1beta1 in 1.19 and stopped serving it in 1.22 (spec 9.3); svc serves it with the warning.
    { ...reviewType('v1beta1', 'subjectaccessreviews', 'SubjectAccessReview', false, subjectAccessReviewV1beta1Schema), deprecation: { deprecatedIn: '1.19', removedIn: '1.22', replacement: { version: 'v1', kind: 'SubjectAccessReview' } } },
  ];
}

/** spec.groups, or the v1beta1 wire name spec.group. */
export function reviewGroups(spec: Record<string, unknown>): string[] {
  return strs(get(spec, 'groups') ?? get(spec, 'group'));
}
