import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { labelSelectorSchema, withMeta } from '../common-schemas';
import { validateLabelSelector } from '../common-validation';
import { child, index, invalid, required } from '../field-errors';
import { get, rec, recs, strs } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { atomicList, described, obj, str } from '../schema-builders';
import { column, type Now } from '../table';

/** rbac.authorization.svc.io/v1 Role and ClusterRole (A.6, 2.7). */

export const RBAC_GROUP = 'rbac.authorization.svc.io';

const RBAC = 'k8s.io.api.rbac.v1';

export const policyRuleSchema = obj(
  `${RBAC}.PolicyRule`,
  {
    verbs: [1, atomicList(str(), 'Verbs this rule applies to; * means all.')],
    apiGroups: [2, atomicList(str(), 'API groups of the resources; "" is the core group, * all groups.')],
    resources: [3, atomicList(str(), 'Resources this rule applies to; resource/subresource for sub-resources, * all.')],
    resourceNames: [4, atomicList(str(), 'Optional white list of names; empty means every name.')],
    nonResourceURLs: [5, atomicList(str(), 'Non-resource paths (ClusterRole only); a trailing * matches any suffix.')],
  },
  { required: ['verbs'] },
);

export const roleSchema = withMeta(`${RBAC}.Role`, {
  rules: [2, atomicList(policyRuleSchema, 'Rules of this role.')],
});

export const clusterRoleSchema = withMeta(`${RBAC}.ClusterRole`, {
  rules: [2, atomicList(policyRuleSchema, 'Rules of this role; filled by the controller when aggregationRule is set.')],
  aggregationRule: [
    3,
    described('Describes how to build the rules of this ClusterRole from other ClusterRoles.', obj(`${RBAC}.AggregationRule`, {
      clusterRoleSelectors: [1, atomicList(labelSelectorSchema, 'ClusterRoles whose rules are aggregated into this one.')],
    })),
  ],
});

/** Upstream ValidatePolicyRule. */
export function validatePolicyRule(rule: Record<string, unknown>, namespaced: boolean, path: string): Cause[] {
  const out: Cause[] = [];
  if (strs(rule.verbs).length === 0) out.push(required(child(path, 'verbs'), 'verbs must contain at least one value'));
  const urls = strs(rule.nonResourceURLs);
  if (urls.length > 0) {
    if (namespaced) out.push(invalid(child(path, 'nonResourceURLs'), urls, 'namespaced rules cannot apply to non-resource URLs'));
    if (strs(rule.apiGroups).length > 0 || strs(rule.resources).length > 0) {
      out.push(invalid(child(path, 'nonResourceURLs'), urls, 'rules cannot apply to both regular resources and non-resource URLs'));
    }
    return out;
  }
  if (strs(rule.apiGroups).length === 0) out.push(required(child(path, 'apiGroups'), 'resource rules must supply at least one api group'));
  if (strs(rule.resources).length === 0) out.push(required(child(path, 'resources'), 'resource rules must supply at least one resource'));
  return out;
}

function validateRules(o: KObject, namespaced: boolean): Cause[] {
  const out: Cause[] = [];
  recs(o.rules).forEach((r, i) => out.push(...validatePolicyRule(r, namespaced, index('rules', i))));
  return out;
}

function validateClusterRole(o: KObject): Cause[] {
  const out = validateRules(o, false);
  const agg = rec(o.aggregationRule);
  if (agg) {
    const selectors = recs(get(agg, 'clusterRoleSelectors'));
    if (selectors.length === 0) {
      out.push(required('aggregationRule.clusterRoleSelectors', 'at least one clusterRoleSelector required if aggregationRule is non-nil'));
    }
    selectors.forEach((s, i) => out.push(...validateLabelSelector(s, index('aggregationRule.clusterRoleSelectors', i))));
  }
  return out;
}

/** Upstream's role printer: Name, then Created At (RFC 3339). */
function roleColumns(): TableColumn[] {
  return [column('Created At', 'date', 'CreationTimestamp is a timestamp representing the server time when this object was created.', (o) => o.metadata.creationTimestamp ?? '')];
}

export function makeRoleType(_now: Now = Date.now): ResourceType {
  return {
    group: RBAC_GROUP,
    version: 'v1',
    resource: 'roles',
    singular: 'role',
    kind: 'Role',
    listKind: 'RoleList',
    namespaced: true,
    schema: roleSchema,
    hasStatus: false,
    specFields: [],
    tableColumns: roleColumns(),
    validate: (o) => validateRules(o, true),
  };
}

export function makeClusterRoleType(_now: Now = Date.now): ResourceType {
  return {
    group: RBAC_GROUP,
    version: 'v1',
    resource: 'clusterroles',
    singular: 'clusterrole',
    kind: 'ClusterRole',
    listKind: 'ClusterRoleList',
    namespaced: false,
    schema: clusterRoleSchema,
    hasStatus: false,
    specFields: [],
    tableColumns: roleColumns(),
    validate: validateClusterRole,
  };
}
