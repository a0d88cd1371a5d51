import test from 'ava';
import { RbacAuthorizer } from '../../../../apiserver/authz/rbac-authorizer';
import { RbacPolicy, type Binding } from '../../../../apiserver/authz/rbac-policy';
import { nonRes, res, user } from './helpers';

function policy(): RbacPolicy {
  const p = new RbacPolicy();
  p.setClusterRole('pod-reader', [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }]);
  p.setClusterRole('health', [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/metrics/*'] }]);
  p.setRole('team', 'secret-reader', [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['app'] }]);
  p.setRole('other', 'secret-reader', [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }]);
  const bind = (b: Partial<Binding> & Pick<Binding, 'name' | 'roleRef' | 'subjects'>): void =>
    p.setBinding({ kind: b.namespace ? 'RoleBinding' : 'ClusterRoleBinding', namespace: b.namespace ?? '', ...b });
  bind({ name: 'alice-pods', roleRef: { kind: 'ClusterRole', name: 'pod-reader' }, subjects: [{ kind: 'User', name: 'alice' }] });
  bind({ name: 'ops-health', roleRef: { kind: 'ClusterRole', name: 'health' }, subjects: [{ kind: 'Group', name: 'ops' }] });
  bind({ name: 'bob-secret', namespace: 'team', roleRef: { kind: 'Role', name: 'secret-reader' }, subjects: [{ kind: 'User', name: 'bob' }] });
  bind({ name: 'bob-pods', namespace: 'team', roleRef: { kind: 'ClusterRole', name: 'pod-reader' }, subjects: [{ kind: 'User', name: 'bob' }] });
  bind({ name: 'sa-pods', namespace: 'team', roleRef: { kind: 'ClusterRole', name: 'pod-reader' }, subjects: [{ kind: 'ServiceAccount', name: 'builder' }] });
  bind({ name: 'sa-other', namespace: 'other', roleRef: { kind: 'Role', name: 'secret-reader' }, subjects: [{ kind: 'ServiceAccount', name: 'builder', namespace: 'team' }] });
  bind({ name: 'dangling', roleRef: { kind: 'ClusterRole', name: 'missing' }, subjects: [{ kind: 'User', name: 'carol' }] });
  return p;
}

const cases: [string, ReturnType<typeof user>, ReturnType<typeof res>, boolean][] = [
  ['ClusterRoleBinding grants cluster-wide', user('alice'), res('list', 'pods'), true],
  ['ClusterRoleBinding grants in any namespace', user('alice'), res('get', 'pods', { namespace: 'x', name: 'p' }), true],
  ['ungranted verb', user('alice'), res('delete', 'pods', { namespace: 'x', name: 'p' }), false],
  ['group binding', user('dave', 'ops'), nonRes('get', '/metrics/cadvisor'), true],
  ['group binding, other URL', user('dave', 'ops'), nonRes('get', '/livez'), false],
  ['RoleBinding grants in its namespace', user('bob'), res('get', 'secrets', { namespace: 'team', name: 'app' }), true],
  ['RoleBinding resourceNames', user('bob'), res('get', 'secrets', { namespace: 'team', name: 'db' }), false],
  ['RoleBinding not in another namespace', user('bob'), res('get', 'secrets', { namespace: 'other', name: 'app' }), false],
  ['RoleBinding to a ClusterRole grants only in the namespace', user('bob'), res('list', 'pods', { namespace: 'team' }), true],
  ['RoleBinding never grants cluster-wide', user('bob'), res('list', 'pods'), false],
  ['service account subject without namespace means the binding namespace', { username: 'system:serviceaccount:team:builder', groups: [] }, res('list', 'pods', { namespace: 'team' }), true],
  ['service account subject with namespace', { username: 'system:serviceaccount:team:builder', groups: [] }, res('get', 'secrets', { namespace: 'other', name: 's' }), true],
  ['service account of another namespace does not match', { username: 'system:serviceaccount:x:builder', groups: [] }, res('list', 'pods', { namespace: 'team' }), false],
  ['a binding to a missing role grants nothing', user('carol'), res('list', 'pods'), false],
  ['unknown user', user('eve'), res('list', 'pods'), false],
];

for (const [name, u, req, want] of cases) {
  test(`RBAC: ${name}`, async (t) => {
    const d = await new RbacAuthorizer(policy()).authorize({ user: u, info: req });
    t.is(d.decision, want ? 'allow' : 'no-opinion');
  });
}

test('RBAC reason names the binding and role', async (t) => {
  const d = await new RbacAuthorizer(policy()).authorize({ user: user('bob'), info: res('get', 'secrets', { namespace: 'team', name: 'app' }) });
  t.is(d.reason, 'RBAC: allowed by RoleBinding "bob-secret" in namespace "team" of Role "secret-reader" to User "bob"');
});

test('deleting bindings and roles takes effect; re-adding re-indexes subjects', (t) => {
  const p = policy();
  t.truthy(p.allowedBy(user('alice'), '', res('list', 'pods')));
  p.deleteBinding('ClusterRoleBinding', '', 'alice-pods');
  t.falsy(p.allowedBy(user('alice'), '', res('list', 'pods')));
  p.setBinding({ kind: 'ClusterRoleBinding', namespace: '', name: 'x', roleRef: { kind: 'ClusterRole', name: 'pod-reader' }, subjects: [{ kind: 'Group', name: 'g' }] });
  t.truthy(p.allowedBy(user('alice', 'g'), '', res('list', 'pods')));
  // Replacing a binding drops its old subjects from the index.
  p.setBinding({ kind: 'ClusterRoleBinding', namespace: '', name: 'x', roleRef: { kind: 'ClusterRole', name: 'pod-reader' }, subjects: [{ kind: 'Group', name: 'h' }] });
  t.falsy(p.allowedBy(user('alice', 'g'), '', res('list', 'pods')));
  p.deleteClusterRole('pod-reader');
  t.falsy(p.allowedBy(user('alice', 'h'), '', res('list', 'pods')));
  p.clear('RoleBinding');
  t.falsy(p.allowedBy(user('bob'), 'team', res('get', 'secrets', { namespace: 'team', name: 'app' })));
});

test('rulesFor gathers cluster and namespace rules once each', (t) => {
  const p = policy();
  t.deepEqual(p.rulesFor(user('bob'), 'team'), [
    { verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['app'] },
    { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] },
  ]);
  t.deepEqual(p.rulesFor(user('bob'), ''), []);
  // A user matching one binding through two subjects sees its rules once.
  p.setBinding({ kind: 'ClusterRoleBinding', namespace: '', name: 'dup', roleRef: { kind: 'ClusterRole', name: 'health' }, subjects: [{ kind: 'User', name: 'zed' }, { kind: 'Group', name: 'zeds' }] });
  t.is(p.rulesFor(user('zed', 'zeds'), '').length, 1);
});
