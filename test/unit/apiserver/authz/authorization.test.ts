import test from 'ava';
import pino from 'pino';
import { RbacBootstrap } from '../../../../apiserver/controllers/rbac-bootstrap';
import { ApiError } from '../../../../apiserver/api/errors';
import type { KObject } from '../../../../apiserver/api/types';
import type { SelectorAttributes } from '../../../../apiserver/authz/attributes';
import { AUTOUPDATE_ANNOTATION } from '../../../../apiserver/authz/rbac-defaults';
import { admin, openAuthzFixture, type AuthzFixture } from './fixture';
import { eventually, nonRes, res, user } from './helpers';

const RBAC = 'rbac.authorization.svc.io';
let f: AuthzFixture;

test.before(async () => {
  f = await openAuthzFixture();
  await f.ready();
});
test.after.always(async () => {
  await f?.close();
});

const allowed = async (a: SelectorAttributes) => (await f.authz.chain.decide(a)).allowed;

test.serial('default roles and bindings exist with the bootstrap label and autoupdate annotation', async (t) => {
  const cr = await f.store.get(f.type(RBAC, 'clusterroles'), '', 'cluster-admin');
  t.is(cr.metadata.labels?.['svc.io/bootstrapping'], 'rbac-defaults');
  t.is(cr.metadata.annotations?.[AUTOUPDATE_ANNOTATION], 'true');
  const crb = await f.store.get(f.type(RBAC, 'clusterrolebindings'), '', 'system:node-bootstrapper');
  t.deepEqual(crb.subjects, [{ kind: 'Group', apiGroup: RBAC, name: 'system:bootstrappers' }]);
  const rb = await f.store.get(f.type(RBAC, 'rolebindings'), 'svc-system', 'system:controller:token-cleaner');
  t.is((rb.roleRef as { kind: string }).kind, 'Role');
});

test.serial('aggregation fills admin, edit and view; edit reads secrets, view does not; admin manages roles', async (t) => {
  await eventually(async () => {
    const v = await f.store.get(f.type(RBAC, 'clusterroles'), '', 'admin');
    return Array.isArray(v.rules) && v.rules.length > 0;
  }, 'admin aggregated');
  const bind = async (name: string, role: string, who: string) =>
    f.store.create(f.type(RBAC, 'rolebindings'), 'default', { metadata: { name }, roleRef: { kind: 'ClusterRole', name: role }, subjects: [{ kind: 'User', name: who }] }, admin);
  await bind('v', 'view', 'viewer');
  await bind('e', 'edit', 'editor');
  await bind('a', 'admin', 'owner');
  await eventually(() => f.authz.policy.has('RoleBinding', 'default', 'a'));
  const ns = { namespace: 'default' };
  t.true(await allowed({ user: user('viewer'), info: res('list', 'pods', ns) }));
  t.false(await allowed({ user: user('viewer'), info: res('get', 'secrets', { ...ns, name: 's' }) }));
  t.false(await allowed({ user: user('viewer'), info: res('create', 'pods', ns) }));
  t.true(await allowed({ user: user('editor'), info: res('get', 'secrets', { ...ns, name: 's' }) }));
  t.true(await allowed({ user: user('editor'), info: res('create', 'pods', ns) }));
  t.false(await allowed({ user: user('editor'), info: res('create', 'roles', { ...ns, apiGroup: RBAC }) }));
  t.true(await allowed({ user: user('owner'), info: res('create', 'roles', { ...ns, apiGroup: RBAC }) }));
  t.false(await allowed({ user: user('owner'), info: res('create', 'endpointslices', { ...ns, apiGroup: 'discovery.svc.io' }) }));
  t.false(await allowed({ user: user('editor'), info: res('list', 'pods', { namespace: 'other' }) }));
  // Nobody bound: denied (403 by default).
  t.false(await allowed({ user: user('stranger'), info: res('list', 'pods', ns) }));
});

test.serial('a new ClusterRole with an aggregation label adds its rules to view', async (t) => {
  await f.store.create(
    f.type(RBAC, 'clusterroles'),
    '',
    { metadata: { name: 'widgets-view', labels: { 'rbac.authorization.svc.io/aggregate-to-view': 'true' } }, rules: [{ verbs: ['get'], apiGroups: ['example.com'], resources: ['widgets'] }] },
    admin,
  );
  const viewer = user('viewer');
  await eventually(async () => allowed({ user: viewer, info: res('get', 'widgets', { namespace: 'default', apiGroup: 'example.com', name: 'w' }) }), 'view aggregated widgets');
  // admin aggregates edit, which aggregates view: the rule reaches admin too.
  await eventually(async () => allowed({ user: user('owner'), info: res('get', 'widgets', { namespace: 'default', apiGroup: 'example.com', name: 'w' }) }), 'admin aggregated widgets');
  t.true(await allowed({ user: viewer, info: res('get', 'widgets', { namespace: 'default', apiGroup: 'example.com', name: 'w' }) }));
});

test.serial('discovery, public info and basic-user defaults', async (t) => {
  const anon = { username: 'system:anonymous', groups: ['system:unauthenticated'] };
  t.true(await allowed({ user: anon, info: nonRes('get', '/healthz') }));
  t.true(await allowed({ user: anon, info: nonRes('get', '/version') }));
  t.false(await allowed({ user: anon, info: nonRes('get', '/apis') }));
  t.false(await allowed({ user: anon, info: res('list', 'pods') }));
  t.true(await allowed({ user: user('u'), info: nonRes('get', '/apis/apps/v1') }));
  t.true(await allowed({ user: user('u'), info: res('create', 'selfsubjectaccessreviews', { apiGroup: 'authorization.svc.io' }) }));
  t.true(await allowed({ user: user('u'), info: res('create', 'selfsubjectreviews', { apiGroup: 'authentication.svc.io' }) }));
  t.false(await allowed({ user: user('u'), info: res('create', 'subjectaccessreviews', { apiGroup: 'authorization.svc.io' }) }));
  const sa = { username: 'system:serviceaccount:default:app', groups: ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated'] };
  t.false(await allowed({ user: sa, info: res('list', 'pods', { namespace: 'default' }) }));
  t.true(await allowed({ user: sa, info: nonRes('get', '/api') }));
});

test.serial('bootstrap tokens may request node certificates and nothing else', async (t) => {
  const boot = { username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:authenticated'] };
  const csr = { apiGroup: 'certificates.svc.io' };
  t.true(await allowed({ user: boot, info: res('create', 'certificatesigningrequests', csr) }));
  t.true(await allowed({ user: boot, info: res('watch', 'certificatesigningrequests', csr) }));
  t.true(await allowed({ user: boot, info: res('create', 'certificatesigningrequests/nodeclient', csr) }));
  t.false(await allowed({ user: boot, info: res('update', 'certificatesigningrequests/approval', { ...csr, name: 'x' }) }));
  t.false(await allowed({ user: boot, info: res('list', 'nodes') }));
});

test.serial('an edit user cannot create a role granting more than it holds, nor bind admin', async (t) => {
  const editor = user('editor');
  const roles = f.type(RBAC, 'roles');
  // Within its own permissions: fine.
  await f.store.create(roles, 'default', { metadata: { name: 'pod-reader' }, rules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }] }, f.as(editor));
  const err = await t.throwsAsync(
    f.store.create(roles, 'default', { metadata: { name: 'grabber' }, rules: [{ verbs: ['create'], apiGroups: [RBAC], resources: ['rolebindings'] }] }, f.as(editor)),
  );
  t.true(err instanceof ApiError);
  t.is((err as ApiError).code, 403);
  t.regex(err.message, /roles.rbac.authorization.svc.io "grabber" is forbidden: user "editor" \(groups=\["system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:\n\{APIGroups:\["rbac.authorization.svc.io"\], Resources:\["rolebindings"\], Verbs:\["create"\]\}/);
  // Not in another namespace either, where it holds nothing.
  await t.throwsAsync(f.store.create(roles, 'svc-system', { metadata: { name: 'pod-reader' }, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }] }, f.as(editor)), { message: /not currently held/ });
  // Binding a role it does not hold is refused; binding one it holds works.
  const rbs = f.type(RBAC, 'rolebindings');
  await t.throwsAsync(f.store.create(rbs, 'default', { metadata: { name: 'b1' }, roleRef: { kind: 'ClusterRole', name: 'admin' }, subjects: [{ kind: 'User', name: 'friend' }] }, f.as(editor)), { message: /not currently held/ });
  await eventually(() => f.authz.policy.has('Role', 'default', 'pod-reader'));
  await t.notThrowsAsync(f.store.create(rbs, 'default', { metadata: { name: 'b2' }, roleRef: { kind: 'Role', name: 'pod-reader' }, subjects: [{ kind: 'User', name: 'friend' }] }, f.as(editor)));
  // A binding to a missing role: 404 for someone who cannot bind it.
  await t.throwsAsync(f.store.create(rbs, 'default', { metadata: { name: 'b3' }, roleRef: { kind: 'Role', name: 'nope' }, subjects: [{ kind: 'User', name: 'friend' }] }, f.as(editor)), { message: /not found/ });
});

test.serial('the escalate and bind verbs let a user grant what it does not hold', async (t) => {
  const cr = f.type(RBAC, 'clusterroles');
  await f.store.create(cr, '', { metadata: { name: 'role-manager' }, rules: [{ verbs: ['create', 'escalate', 'bind'], apiGroups: [RBAC], resources: ['roles', 'rolebindings', 'clusterroles'] }] }, admin);
  await f.store.create(f.type(RBAC, 'rolebindings'), 'default', { metadata: { name: 'rm' }, roleRef: { kind: 'ClusterRole', name: 'role-manager' }, subjects: [{ kind: 'User', name: 'manager' }] }, admin);
  await eventually(() => f.authz.policy.has('RoleBinding', 'default', 'rm'));
  const m = user('manager');
  await t.notThrowsAsync(f.store.create(f.type(RBAC, 'roles'), 'default', { metadata: { name: 'big' }, rules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }] }, f.as(m)));
  await t.notThrowsAsync(f.store.create(f.type(RBAC, 'rolebindings'), 'default', { metadata: { name: 'to-admin' }, roleRef: { kind: 'ClusterRole', name: 'admin' }, subjects: [{ kind: 'User', name: 'x' }] }, f.as(m)));
  // An aggregationRule needs full authority.
  await t.throwsAsync(f.store.create(cr, '', { metadata: { name: 'agg' }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { a: 'b' } }] } }, f.as(user('editor'))), { message: /forbidden/ });
});

test.serial('roleRef is immutable and subjects are validated', async (t) => {
  const rbs = f.type(RBAC, 'rolebindings');
  const err = await t.throwsAsync(f.store.update(rbs, 'default', 'v', (cur) => ({ ...cur!, roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'edit' } }), admin));
  t.regex(err.message, /roleRef: Invalid value: .*cannot change roleRef/);
  const bad = await t.throwsAsync(f.store.create(rbs, 'default', { metadata: { name: 'bad' }, roleRef: { kind: 'Thing', name: 'x' }, subjects: [{ kind: 'Robot', name: 'r' }, { kind: 'User', name: '' }] }, admin));
  t.regex(bad.message, /roleRef.kind: Unsupported value: "Thing"/);
  t.regex(bad.message, /subjects\[0\].kind: Unsupported value: "Robot"/);
  t.regex(bad.message, /subjects\[1\].name: Required value/);
  const crb = await t.throwsAsync(f.store.create(f.type(RBAC, 'clusterrolebindings'), '', { metadata: { name: 'x' }, roleRef: { kind: 'Role', name: 'x' }, subjects: [{ kind: 'ServiceAccount', name: 'sa' }] }, admin));
  t.regex(crb.message, /roleRef.kind: Unsupported value: "Role"/);
  t.regex(crb.message, /subjects\[0\].namespace: Required value/);
  const role = await t.throwsAsync(f.store.create(f.type(RBAC, 'roles'), 'default', { metadata: { name: 'r/x' }, rules: [{ verbs: [], nonResourceURLs: ['/x'] }] }, admin));
  t.regex(role.message, /metadata.name/);
  const role2 = await t.throwsAsync(f.store.create(f.type(RBAC, 'roles'), 'default', { metadata: { name: 'r' }, rules: [{ verbs: [], nonResourceURLs: ['/x'] }, { verbs: ['get'] }] }, admin));
  t.regex(role2.message, /rules\[0\].verbs: Required value/);
  t.regex(role2.message, /rules\[0\].nonResourceURLs: Invalid value: .*namespaced rules cannot apply to non-resource URLs/);
  t.regex(role2.message, /rules\[1\].apiGroups: Required value/);
  // Names only need to be path segments.
  await t.notThrowsAsync(f.store.create(f.type(RBAC, 'roles'), 'default', { metadata: { name: 'Team:Readers' }, rules: [] }, admin));
});

test.serial('defaults are reconciled at start: missing rules and subjects come back, autoupdate=false is kept', async (t) => {
  const cr = f.type(RBAC, 'clusterroles');
  const crb = f.type(RBAC, 'clusterrolebindings');
  await f.store.update(cr, '', 'system:discovery', (c) => ({ ...c!, rules: [] }), admin);
  await f.store.update(crb, '', 'system:basic-user', (c) => ({ ...c!, subjects: [] }), admin);
  await f.store.update(cr, '', 'system:monitoring', (c) => ({ ...c!, metadata: { ...c!.metadata, annotations: { [AUTOUPDATE_ANNOTATION]: 'false' } }, rules: [] }), admin);
  await f.store.delete(cr, '', 'system:auth-delegator', {}, admin);
  const counts = await new RbacBootstrap(f.store, f.registry, pino({ level: 'silent' })).reconcile();
  t.true(counts.created >= 1);
  t.true(counts.updated >= 2);
  t.true(counts.skipped >= 1);
  const disc = await f.store.get(cr, '', 'system:discovery');
  t.true((disc.rules as unknown[]).length > 0);
  const bu = await f.store.get(crb, '', 'system:basic-user');
  t.deepEqual((bu.subjects as KObject[]).map((s) => s.name), ['system:authenticated']);
  const mon = await f.store.get(cr, '', 'system:monitoring');
  t.deepEqual(mon.rules, []);
  await t.notThrowsAsync(f.store.get(cr, '', 'system:auth-delegator'));
  // A second pass changes nothing.
  const again = await new RbacBootstrap(f.store, f.registry, pino({ level: 'silent' })).reconcile();
  t.is(again.created + again.updated, 0);
});
