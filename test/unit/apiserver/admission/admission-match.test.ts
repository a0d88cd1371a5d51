/** Upstream's webhook and policy predicates: rules (operations, both group spellings, versions, resources and sub-resources, scope) and the selectors. */
import test from 'ava';
import { namespaceSelectorMatches, objectSelectorMatches, resourceMatches, ruleMatches } from '../../../../apiserver/admission/admission-match';
import type { AdmissionAttributes } from '../../../../apiserver/admission/admission';
import { makeBuiltinTypes } from '../../../../apiserver/registry/builtin';

const types = makeBuiltinTypes();
const type = (group: string, resource: string) => types.find((t) => t.group === group && t.resource === resource)!;
const attrs = (o: Partial<AdmissionAttributes> = {}): AdmissionAttributes => ({
  operation: 'CREATE',
  type: type('', 'pods'),
  namespace: 'default',
  name: 'p',
  subresource: '',
  user: { username: 'u', groups: [] },
  dryRun: false,
  ...o,
});
const rule = (o: Record<string, unknown> = {}) => ({ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: '*', ...o });

test('operations, groups and versions: listed values or *', (t) => {
  t.true(ruleMatches(rule(), attrs()));
  t.false(ruleMatches(rule(), attrs({ operation: 'UPDATE' })));
  t.true(ruleMatches(rule({ operations: ['*'] }), attrs({ operation: 'DELETE' })));
  t.false(ruleMatches(rule({ apiGroups: ['apps'] }), attrs()));
  t.false(ruleMatches(rule({ apiVersions: ['v2'] }), attrs()));
  t.true(ruleMatches(rule({ apiVersions: ['*'], apiGroups: ['*'] }), attrs()));
});

test('a group matches under its svc.io and k8s.io spellings', (t) => {
  const a = attrs({ type: type('rbac.authorization.svc.io', 'roles') });
  t.true(ruleMatches(rule({ apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'] }), a));
  t.true(ruleMatches(rule({ apiGroups: ['rbac.authorization.svc.io'], resources: ['roles'] }), a));
  t.false(ruleMatches(rule({ apiGroups: ['rbac.example.com'], resources: ['roles'] }), a));
});

test('resources: a name, name/sub, *, */scale, */*, pods/* (upstream ruleMatcher.resource)', (t) => {
  t.true(resourceMatches(['pods'], 'pods', ''));
  t.false(resourceMatches(['pods'], 'pods', 'status'));
  t.true(resourceMatches(['pods/status'], 'pods', 'status'));
  t.true(resourceMatches(['*'], 'deployments', ''));
  t.false(resourceMatches(['*'], 'deployments', 'scale'));
  t.true(resourceMatches(['*/scale'], 'deployments', 'scale'));
  t.false(resourceMatches(['*/scale'], 'deployments', 'status'));
  t.true(resourceMatches(['*/*'], 'pods', 'eviction'));
  t.true(resourceMatches(['*/*'], 'pods', ''));
  t.true(resourceMatches(['pods/*'], 'pods', 'binding'));
  t.false(resourceMatches(['pods/*'], 'services', 'status'));
});

test('scope: Cluster matches cluster-scoped resources (namespaces too), Namespaced the others', (t) => {
  t.false(ruleMatches(rule({ scope: 'Cluster' }), attrs()));
  t.true(ruleMatches(rule({ scope: 'Namespaced' }), attrs()));
  const ns = attrs({ type: type('', 'namespaces'), namespace: '' });
  t.true(ruleMatches(rule({ resources: ['namespaces'], scope: 'Cluster' }), ns));
  t.false(ruleMatches(rule({ resources: ['namespaces'], scope: 'Namespaced' }), ns));
});

test('objectSelector: the new or the old object\'s labels; empty matches everything, even without objects', (t) => {
  const sel = { matchLabels: { app: 'web' } };
  t.true(objectSelectorMatches(sel, { object: { metadata: { labels: { app: 'web' } } } }));
  t.true(objectSelectorMatches(sel, { object: { metadata: {} }, oldObject: { metadata: { labels: { app: 'web' } } } }));
  t.false(objectSelectorMatches(sel, { object: { metadata: { labels: { app: 'db' } } } }));
  t.false(objectSelectorMatches(sel, {}));
  t.true(objectSelectorMatches({}, {}));
  t.true(objectSelectorMatches(undefined, {}));
});

test('namespaceSelector: the namespace\'s labels; a namespace by its own labels; other cluster-scoped objects always match', async (t) => {
  const sel = { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] };
  const asked: string[] = [];
  const labels = (name: string) => {
    asked.push(name);
    return Promise.resolve(name === 'prod' ? { env: 'prod' } : undefined);
  };
  t.true(await namespaceSelectorMatches(sel, attrs({ namespace: 'prod' }), labels));
  t.false(await namespaceSelectorMatches(sel, attrs({ namespace: 'dev' }), labels));
  t.true(await namespaceSelectorMatches(sel, attrs({ type: type('', 'namespaces'), namespace: '', object: { metadata: { name: 'x', labels: { env: 'prod' } } } }), labels));
  t.false(await namespaceSelectorMatches(sel, attrs({ type: type('', 'namespaces'), namespace: '', object: { metadata: { name: 'x' } } }), labels));
  t.true(await namespaceSelectorMatches(sel, attrs({ type: type('', 'nodes'), namespace: '' }), labels));
  // An empty selector never reads the namespace.
  asked.length = 0;
  t.true(await namespaceSelectorMatches({}, attrs({ namespace: 'dev' }), labels));
  t.deepEqual(asked, []);
});
