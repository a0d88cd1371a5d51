import test from 'ava';
import { RbacAuthorizer } from '../../../../apiserver/authz/rbac-authorizer';
import { RbacPolicy } from '../../../../apiserver/authz/rbac-policy';
import { nonRes, res, user } from './helpers';

// The decision memo of RbacAuthorizer: a remembered decision must never outlive a policy change,
// and nothing but the attributes a decision reads may share an entry.

function policy(): RbacPolicy {
  const p = new RbacPolicy();
  p.setClusterRole('pod-reader', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]);
  p.setBinding({ kind: 'ClusterRoleBinding', namespace: '', name: 'alice', roleRef: { kind: 'ClusterRole', name: 'pod-reader' }, subjects: [{ kind: 'User', name: 'alice' }] });
  return p;
}

test('a repeated request is answered from the memo', (t) => {
  const z = new RbacAuthorizer(policy());
  const a = { user: user('alice'), info: res('get', 'pods', { namespace: 'x', name: 'p' }) };
  const first = z.decide(a);
  t.is(first.decision, 'allow');
  t.is(z.memoized, 1);
  t.is(z.decide(a), first);
  t.is(z.memoized, 1);
});

test('adding a binding, a role rule or deleting a binding changes the next decision at once', (t) => {
  const p = policy();
  const z = new RbacAuthorizer(p);
  const bob = { user: user('bob'), info: res('get', 'pods', { namespace: 'x', name: 'p' }) };
  t.is(z.decide(bob).decision, 'no-opinion');
  p.setBinding({ kind: 'ClusterRoleBinding', namespace: '', name: 'bob', roleRef: { kind: 'ClusterRole', name: 'pod-reader' }, subjects: [{ kind: 'User', name: 'bob' }] });
  t.is(z.decide(bob).decision, 'allow');
  const list = { user: user('bob'), info: res('list', 'pods', { namespace: 'x' }) };
  t.is(z.decide(list).decision, 'no-opinion');
  p.setClusterRole('pod-reader', [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }]);
  t.is(z.decide(list).decision, 'allow');
  p.deleteBinding('ClusterRoleBinding', '', 'bob');
  t.is(z.decide(bob).decision, 'no-opinion');
  t.is(z.decide(list).decision, 'no-opinion');
  p.setBinding({ kind: 'ClusterRoleBinding', namespace: '', name: 'bob', roleRef: { kind: 'ClusterRole', name: 'pod-reader' }, subjects: [{ kind: 'User', name: 'bob' }] });
  p.deleteClusterRole('pod-reader');
  t.is(z.decide(bob).decision, 'no-opinion');
});

test('users, groups, namespaces, names and paths each get their own entry', (t) => {
  const p = policy();
  p.setRole('team', 'secret-reader', [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['app'] }]);
  p.setBinding({ kind: 'RoleBinding', namespace: 'team', name: 'ops', roleRef: { kind: 'Role', name: 'secret-reader' }, subjects: [{ kind: 'Group', name: 'ops' }] });
  p.setClusterRole('health', [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }]);
  p.setBinding({ kind: 'ClusterRoleBinding', namespace: '', name: 'health', roleRef: { kind: 'ClusterRole', name: 'health' }, subjects: [{ kind: 'Group', name: 'ops' }] });
  const z = new RbacAuthorizer(p);
  const secret = (ns: string, name: string) => res('get', 'secrets', { namespace: ns, name });
  t.is(z.decide({ user: user('dave', 'ops'), info: secret('team', 'app') }).decision, 'allow');
  t.is(z.decide({ user: user('dave'), info: secret('team', 'app') }).decision, 'no-opinion');
  t.is(z.decide({ user: user('dave', 'ops'), info: secret('other', 'app') }).decision, 'no-opinion');
  t.is(z.decide({ user: user('dave', 'ops'), info: secret('team', 'db') }).decision, 'no-opinion');
  // A group name that embeds what a naive separator would use must not match another user's entry.
  t.is(z.decide({ user: { username: 'dave', groups: ['x","ops'] }, info: secret('team', 'app') }).decision, 'no-opinion');
  t.is(z.decide({ user: user('dave', 'ops'), info: nonRes('get', '/healthz') }).decision, 'allow');
  t.is(z.decide({ user: user('dave', 'ops'), info: nonRes('get', '/livez') }).decision, 'no-opinion');
});

test('the memo is bounded: the oldest entry goes first', (t) => {
  const z = new RbacAuthorizer(policy(), 3);
  for (let i = 0; i < 10; i++) z.decide({ user: user(`u${i}`), info: res('get', 'pods', { namespace: 'x', name: 'p' }) });
  t.is(z.memoized, 3);
  t.is(z.decide({ user: user('alice'), info: res('get', 'pods', { namespace: 'x', name: 'p' }) }).decision, 'allow');
  t.is(z.memoized, 3);
});
