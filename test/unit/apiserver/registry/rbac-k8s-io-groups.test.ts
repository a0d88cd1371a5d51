import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import { validateOwnerReferences } from '../../../../apiserver/registry/meta-validation';
import { makeClusterRoleBindingType, makeRoleBindingType } from '../../../../apiserver/registry/types/rbac-bindings';

// Issue 17, item 3: roleRef.apiGroup and subjects[].apiGroup in upstream's spelling (what
// `kubectl create rolebinding` and upstream manifests write) are the RBAC group.

const rb = makeRoleBindingType();
const crb = makeClusterRoleBindingType();
const binding = (group: string, subjectGroup = group): KObject => ({
  metadata: { name: 'b', namespace: 'ns' },
  roleRef: { apiGroup: group, kind: 'ClusterRole', name: 'view' },
  subjects: [{ kind: 'User', apiGroup: subjectGroup, name: 'ann' }, { kind: 'ServiceAccount', apiGroup: '', name: 'default', namespace: 'ns' }],
});

test('bindings accept rbac.authorization.k8s.io in roleRef and subjects, keep it as written, and refuse other groups', (t) => {
  for (const type of [rb, crb]) {
    t.deepEqual(type.validate!(binding('rbac.authorization.k8s.io')), [], type.kind);
    t.deepEqual(type.validate!(binding('rbac.authorization.svc.io', 'rbac.authorization.k8s.io')), [], type.kind);
    const bad = type.validate!(binding('authorization.k8s.io'));
    t.deepEqual(bad.map((c) => c.field), ['roleRef.apiGroup', 'subjects[0].apiGroup'], type.kind);
    t.regex(bad[0].message, /supported values: "rbac\.authorization\.svc\.io", "rbac\.authorization\.k8s\.io"/);
  }
  const o = binding('rbac.authorization.k8s.io');
  rb.defaults!(o);
  t.is((o.roleRef as { apiGroup: string }).apiGroup, 'rbac.authorization.k8s.io');
});

test('roleRef stays immutable, but its group in the other spelling is no change', (t) => {
  t.deepEqual(rb.validateUpdate!(binding('rbac.authorization.k8s.io'), binding('rbac.authorization.svc.io')), []);
  const renamed = binding('rbac.authorization.k8s.io');
  (renamed.roleRef as { name: string }).name = 'edit';
  t.is(rb.validateUpdate!(renamed, binding('rbac.authorization.svc.io')).length, 1);
});

test('events.k8s.io/v1 Events may not own anything, as events.svc.io/v1 Events', (t) => {
  for (const apiVersion of ['events.svc.io/v1', 'events.k8s.io/v1']) {
    const causes = validateOwnerReferences([{ apiVersion, kind: 'Event', name: 'e', uid: 'u' }], 'metadata.ownerReferences');
    t.is(causes.length, 1, apiVersion);
    t.regex(causes[0].message, /is disallowed from being an owner/);
  }
  t.deepEqual(validateOwnerReferences([{ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', name: 'r', uid: 'u' }], 'metadata.ownerReferences'), []);
});
