import type { Cause } from '../../api/errors';
import { sameGroup, upstreamGroup } from '../../api/group-names';
import type { KObject } from '../../api/types';
import { withMeta } from '../common-schemas';
import { messages } from '../common-validation';
import { child, index, invalid, notSupported, required } from '../field-errors';
import { dns1123SubdomainErrors, pathSegmentErrors } from '../../api/name-validation';
import { rec, recs, str, strAt } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { atomicList, described, obj, ptr, str as s } from '../schema-builders';
import { ageColumn, column, type Now } from '../table';
import { RBAC_GROUP } from './rbac-roles';

/** rbac.authorization.svc.io/v1 RoleBinding and ClusterRoleBinding (A.6, 2.7; roleRef immutable, section 3). */

const RBAC = 'k8s.io.api.rbac.v1';

export const subjectSchema = obj(
  `${RBAC}.Subject`,
  {
    kind: [1, ptr(s('User, Group or ServiceAccount.'))],
    apiGroup: [2, s('rbac.authorization.svc.io for User and Group, empty for ServiceAccount.')],
    name: [3, ptr(s('Name of the subject.'))],
    namespace: [4, s('Namespace of a ServiceAccount subject.')],
  },
  { required: ['kind', 'name'], atomic: true },
);

export const roleRefSchema = obj(
  `${RBAC}.RoleRef`,
  {
    apiGroup: [1, ptr(s('Group of the referenced role: rbac.authorization.svc.io.'))],
    kind: [2, ptr(s('Role or ClusterRole.'))],
    name: [3, ptr(s('Name of the referenced role.'))],
  },
  { required: ['apiGroup', 'kind', 'name'], atomic: true },
);

function bindingSchemaOf(message: string) {
  return withMeta(
    message,
    {
      subjects: [2, atomicList(subjectSchema, 'Who the role is granted to.')],
      roleRef: [3, described('The Role or ClusterRole this binding grants; immutable.', roleRefSchema)],
    },
    { required: ['roleRef'] },
  );
}

export const roleBindingSchema = bindingSchemaOf(`${RBAC}.RoleBinding`);
export const clusterRoleBindingSchema = bindingSchemaOf(`${RBAC}.ClusterRoleBinding`);

const SUBJECT_KINDS = ['ServiceAccount', 'User', 'Group'] as const;

/**
 * The group a roleRef or a User/Group subject names: rbac.authorization.svc.io, or its upstream
 * name rbac.authorization.k8s.io that stock clients write (kubectl create rolebinding, upstream
 * manifests); kept as written, read as one group (issue 17).
 */
const RBAC_GROUP_NAMES = [RBAC_GROUP, upstreamGroup(RBAC_GROUP)!];

/** Upstream SetDefaults_Subject and SetDefaults_RoleBinding: the rbac group where it is implied. */
function defaults(o: KObject): void {
  const ref = rec(o.roleRef);
  if (ref && !str(ref.apiGroup)) ref.apiGroup = RBAC_GROUP;
  for (const sub of recs(o.subjects)) {
    if (str(sub.apiGroup)) continue;
    if (sub.kind === 'ServiceAccount') sub.apiGroup = '';
    else if (sub.kind === 'User' || sub.kind === 'Group') sub.apiGroup = RBAC_GROUP;
  }
}

/** Upstream ValidateRoleBindingSubject. */
export function validateSubject(sub: Record<string, unknown>, namespaced: boolean, path: string): Cause[] {
  const out: Cause[] = [];
  const name = strAt(sub, 'name');
  const kind = strAt(sub, 'kind');
  const apiGroup = strAt(sub, 'apiGroup');
  if (!name) out.push(required(child(path, 'name')));
  switch (kind) {
    case 'ServiceAccount':
      if (name) out.push(...messages(child(path, 'name'), name, dns1123SubdomainErrors(name)));
      if (apiGroup !== '') out.push(notSupported(child(path, 'apiGroup'), apiGroup, ['']));
      if (!namespaced && !strAt(sub, 'namespace')) out.push(required(child(path, 'namespace')));
      break;
    case 'User':
    case 'Group':
      if (!sameGroup(apiGroup, RBAC_GROUP)) out.push(notSupported(child(path, 'apiGroup'), apiGroup, RBAC_GROUP_NAMES));
      break;
    default:
      out.push(notSupported(child(path, 'kind'), kind, SUBJECT_KINDS));
  }
  return out;
}

function validateBinding(o: KObject, namespaced: boolean): Cause[] {
  const out: Cause[] = [];
  const ref = rec(o.roleRef) ?? {};
  const group = strAt(ref, 'apiGroup');
  if (!sameGroup(group, RBAC_GROUP)) out.push(notSupported('roleRef.apiGroup', group, RBAC_GROUP_NAMES));
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  const kind = strAt(ref, 'kind');
  if (!kinds.includes(kind)) out.push(notSupported('roleRef.kind', kind, kinds));
  const name = strAt(ref, 'name');
  if (!name) out.push(required('roleRef.name'));
  else out.push(...messages('roleRef.name', name, pathSegmentErrors(name)));
  recs(o.subjects).forEach((sub, i) => out.push(...validateSubject(sub, namespaced, index('subjects', i))));
  return out;
}

/** roleRef is immutable (section 3): delete and recreate the binding to change it. */
function validateUpdate(o: KObject, old: KObject): Cause[] {
  const a = rec(o.roleRef) ?? {};
  const b = rec(old.roleRef) ?? {};
  // The other spelling of the same group is no change (a client of either name round-trips it).
  const sameRefGroup = typeof a.apiGroup === 'string' && typeof b.apiGroup === 'string' ? sameGroup(a.apiGroup, b.apiGroup) : a.apiGroup === b.apiGroup;
  if (!sameRefGroup || a.kind !== b.kind || a.name !== b.name) return [invalid('roleRef', o.roleRef, 'cannot change roleRef')];
  return [];
}

function names(o: KObject, kind: string): string {
  const ns = recs(o.subjects).filter((x) => x.kind === kind);
  return ns.map((x) => (kind === 'ServiceAccount' ? `${strAt(x, 'namespace')}/${strAt(x, 'name')}` : strAt(x, 'name'))).join(', ');
}

function bindingColumns(now: Now): TableColumn[] {
  return [
    column('Role', 'string', 'Role is the role being granted.', (o) => `${strAt(o, 'roleRef', 'kind')}/${strAt(o, 'roleRef', 'name')}`),
    ageColumn(now),
    column('Users', 'string', 'Users in the binding.', (o) => names(o, 'User'), 1),
    column('Groups', 'string', 'Groups in the binding.', (o) => names(o, 'Group'), 1),
    column('ServiceAccounts', 'string', 'ServiceAccounts in the binding.', (o) => names(o, 'ServiceAccount'), 1),
  ];
}

export function makeRoleBindingType(now: Now = Date.now): ResourceType {
  return {
    group: RBAC_GROUP,
    version: 'v1',
    resource: 'rolebindings',
    singular: 'rolebinding',
    kind: 'RoleBinding',
    listKind: 'RoleBindingList',
    namespaced: true,
    schema: roleBindingSchema,
    hasStatus: false,
    specFields: [],
    tableColumns: bindingColumns(now),
    defaults,
    validate: (o) => validateBinding(o, true),
    validateUpdate,
  };
}

export function makeClusterRoleBindingType(now: Now = Date.now): ResourceType {
  return {
    group: RBAC_GROUP,
    version: 'v1',
    resource: 'clusterrolebindings',
    singular: 'clusterrolebinding',
    kind: 'ClusterRoleBinding',
    listKind: 'ClusterRoleBindingList',
    namespaced: false,
    schema: clusterRoleBindingSchema,
    hasStatus: false,
    specFields: [],
    tableColumns: bindingColumns(now),
    defaults,
    validate: (o) => validateBinding(o, false),
    validateUpdate,
  };
}
