import test from 'ava';
import { AbacAuthorizer, parseAbacPolicies } from '../../../../apiserver/authz/abac';
import { NodeAuthorizer } from '../../../../apiserver/authz/node-authorizer';
import { NodeGraph } from '../../../../apiserver/authz/node-graph';
import { uncoveredRules } from '../../../../apiserver/authz/rbac-covers';
import { RbacAuthorizer } from '../../../../apiserver/authz/rbac-authorizer';
import { RbacPolicy } from '../../../../apiserver/authz/rbac-policy';
import { ruleAllows } from '../../../../apiserver/authz/rbac-rules';
import { attributesFromSpec } from '../../../../apiserver/handlers/review-handlers';
import { admin, openAuthzFixture } from './fixture';
import { eventually, res, user } from './helpers';

// Issue 17, item 3: a group's svc.io and k8s.io names are one group for every authorizer.

const roles = (group: string) => res('list', 'roles', { apiGroup: group, apiVersion: 'v1', namespace: 'team' });

test('an RBAC rule naming either spelling of a group grants requests under either', (t) => {
  for (const ruleGroup of ['rbac.authorization.svc.io', 'rbac.authorization.k8s.io']) {
    for (const requestGroup of ['rbac.authorization.svc.io', 'rbac.authorization.k8s.io']) {
      t.true(ruleAllows(roles(requestGroup), { verbs: ['list'], apiGroups: [ruleGroup], resources: ['roles'] }), `${ruleGroup} → ${requestGroup}`);
    }
  }
  // Still one group only: another group's rule, or a group without a domain, does not leak.
  t.false(ruleAllows(roles('rbac.authorization.k8s.io'), { verbs: ['list'], apiGroups: ['authorization.svc.io'], resources: ['roles'] }));
  t.false(ruleAllows(res('get', 'poddisruptionbudgets', { apiGroup: 'policy' }), { verbs: ['get'], apiGroups: ['policy.k8s.io'], resources: ['poddisruptionbudgets'] }));
});

test('RbacAuthorizer: a Role written for upstream (rbac.authorization.k8s.io) grants the svc.io request the router hands it', (t) => {
  const p = new RbacPolicy();
  p.setRole('team', 'role-reader', [{ verbs: ['list'], apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'] }]);
  p.setBinding({ kind: 'RoleBinding', namespace: 'team', name: 'b', roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'role-reader' }, subjects: [{ kind: 'User', name: 'ann', apiGroup: 'rbac.authorization.k8s.io' }] });
  const z = new RbacAuthorizer(p);
  t.is(z.decide({ user: user('ann'), info: roles('rbac.authorization.svc.io') }).decision, 'allow');
  t.is(z.decide({ user: user('ann'), info: roles('rbac.authorization.k8s.io') }).decision, 'allow');
  t.is(z.decide({ user: user('bob'), info: roles('rbac.authorization.svc.io') }).decision, 'no-opinion');
});

test('escalation checks: owning a group under one name covers a role naming it under the other', (t) => {
  const owner = [{ verbs: ['get', 'list'], apiGroups: ['coordination.svc.io'], resources: ['leases'] }];
  t.deepEqual(uncoveredRules(owner, [{ verbs: ['get'], apiGroups: ['coordination.k8s.io'], resources: ['leases'] }]), []);
  t.deepEqual(uncoveredRules([{ verbs: ['get'], apiGroups: ['coordination.k8s.io'], resources: ['leases'] }], [{ verbs: ['get'], apiGroups: ['coordination.svc.io'], resources: ['leases'] }]), []);
  t.is(uncoveredRules(owner, [{ verbs: ['get'], apiGroups: ['events.k8s.io'], resources: ['leases'] }]).length, 1);
});

test('SubjectAccessReview: resourceAttributes.group in either spelling is decided as the same group', (t) => {
  const p = new RbacPolicy();
  p.setClusterRole('lease-reader', [{ verbs: ['get'], apiGroups: ['coordination.svc.io'], resources: ['leases'] }]);
  p.setBinding({ kind: 'ClusterRoleBinding', namespace: '', name: 'b', roleRef: { kind: 'ClusterRole', name: 'lease-reader' }, subjects: [{ kind: 'User', name: 'ann' }] });
  const z = new RbacAuthorizer(p);
  for (const group of ['coordination.svc.io', 'coordination.k8s.io']) {
    const a = attributesFromSpec(user('ann'), { resourceAttributes: { verb: 'get', group, version: 'v1', resource: 'leases', namespace: 'x', name: 'l' } });
    t.is(a.info.apiGroup, 'coordination.svc.io');
    t.is(z.decide(a).decision, 'allow', group);
  }
});

test('the Node authorizer: a node renews its own Lease through coordination.k8s.io as through coordination.svc.io', async (t) => {
  const z = new NodeAuthorizer(new NodeGraph());
  const n1 = { username: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
  for (const apiGroup of ['coordination.svc.io', 'coordination.k8s.io']) {
    t.is((await z.authorize({ user: n1, info: res('update', 'leases', { apiGroup, namespace: 'svc-node-lease', name: 'n1' }) })).decision, 'allow', apiGroup);
    t.is((await z.authorize({ user: n1, info: res('update', 'leases', { apiGroup, namespace: 'svc-node-lease', name: 'n2' }) })).decision, 'no-opinion', apiGroup);
  }
});

test('ABAC: a policy line naming either spelling, in either apiVersion, matches both', async (t) => {
  const policies = parseAbacPolicies(
    [
      JSON.stringify({ apiVersion: 'abac.authorization.kubernetes.io/v1beta1', kind: 'Policy', spec: { user: 'ann', namespace: '*', resource: 'leases', apiGroup: 'coordination.k8s.io' } }),
      JSON.stringify({ apiVersion: 'abac.authorization.svc.io/v1beta1', kind: 'Policy', spec: { user: 'bob', namespace: '*', resource: 'leases', apiGroup: 'coordination.svc.io' } }),
    ].join('\n'),
  );
  const z = new AbacAuthorizer(policies);
  for (const who of ['ann', 'bob']) {
    for (const apiGroup of ['coordination.svc.io', 'coordination.k8s.io']) {
      t.is((await z.authorize({ user: user(who), info: res('get', 'leases', { apiGroup, namespace: 'x', name: 'l' }) })).decision, 'allow', `${who} ${apiGroup}`);
    }
  }
});

test('view, edit and admin aggregate ClusterRoles labelled rbac.authorization.k8s.io/aggregate-to-*, as upstream manifests label them', async (t) => {
  const f = await openAuthzFixture();
  try {
    await f.ready();
    const crs = f.type('rbac.authorization.svc.io', 'clusterroles');
    const labels = { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' };
    await f.store.create(crs, '', { metadata: { name: 'gadgets-view', labels }, rules: [{ verbs: ['get'], apiGroups: ['example.com'], resources: ['gadgets'] }] }, admin);
    await f.store.create(f.type('rbac.authorization.svc.io', 'rolebindings'), 'default', { metadata: { name: 'v' }, roleRef: { kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'User', name: 'viewer' }] }, admin);
    const gadget = { user: user('viewer'), info: res('get', 'gadgets', { namespace: 'default', apiGroup: 'example.com', name: 'g' }) };
    await eventually(async () => (await f.authz.chain.decide(gadget)).allowed, 'view aggregated gadgets');
    const view = await f.store.get(crs, '', 'view');
    t.deepEqual((view.aggregationRule as { clusterRoleSelectors: unknown[] }).clusterRoleSelectors, [
      { matchLabels: { 'rbac.authorization.svc.io/aggregate-to-view': 'true' } },
      { matchLabels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } },
    ]);
  } finally {
    await f.close();
  }
});
