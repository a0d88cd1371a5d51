import test from 'ava';
import { compactRule, ruleAllows, toPolicyRule, type PolicyRule } from '../../../../apiserver/authz/rbac-rules';
import { nonRes, res } from './helpers';

const cases: [string, PolicyRule, ReturnType<typeof res>, boolean][] = [
  ['exact verb, group, resource', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, res('get', 'pods', { name: 'a' }), true],
  ['other verb', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, res('list', 'pods'), false],
  ['other group', { verbs: ['get'], apiGroups: ['apps'], resources: ['pods'] }, res('get', 'pods'), false],
  ['verb wildcard', { verbs: ['*'], apiGroups: [''], resources: ['pods'] }, res('deletecollection', 'pods'), true],
  ['group wildcard', { verbs: ['get'], apiGroups: ['*'], resources: ['deployments'] }, res('get', 'deployments', { apiGroup: 'apps' }), true],
  ['resource wildcard matches sub-resources too', { verbs: ['get'], apiGroups: [''], resources: ['*'] }, res('get', 'pods/log'), true],
  ['resource does not grant its sub-resource', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, res('get', 'pods/log'), false],
  ['sub-resource written resource/sub', { verbs: ['get'], apiGroups: [''], resources: ['pods/log'] }, res('get', 'pods/log'), true],
  ['sub-resource does not grant the resource', { verbs: ['get'], apiGroups: [''], resources: ['pods/log'] }, res('get', 'pods'), false],
  ['*/sub matches that sub-resource of anything', { verbs: ['update'], apiGroups: ['*'], resources: ['*/status'] }, res('update', 'nodes/status'), true],
  ['*/sub does not match another sub-resource', { verbs: ['update'], apiGroups: ['*'], resources: ['*/status'] }, res('update', 'nodes/proxy'), false],
  ['resourceNames restricts to named objects', { verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['a'] }, res('get', 'secrets', { name: 'a' }), true],
  ['resourceNames refuses other names', { verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['a'] }, res('get', 'secrets', { name: 'b' }), false],
  ['resourceNames refuses unnamed (list)', { verbs: ['list'], apiGroups: [''], resources: ['secrets'], resourceNames: ['a'] }, res('list', 'secrets'), false],
  ['empty resourceNames means any', { verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: [] }, res('get', 'secrets', { name: 'z' }), true],
  ['resource rule never matches a URL', { verbs: ['get'], apiGroups: ['*'], resources: ['*'] }, nonRes('get', '/healthz'), false],
  ['exact URL', { verbs: ['get'], nonResourceURLs: ['/healthz'] }, nonRes('get', '/healthz'), true],
  ['URL is not a prefix without *', { verbs: ['get'], nonResourceURLs: ['/healthz'] }, nonRes('get', '/healthz/ping'), false],
  ['trailing * is a suffix wildcard', { verbs: ['get'], nonResourceURLs: ['/healthz/*'] }, nonRes('get', '/healthz/ping'), true],
  ['trailing * also matches the bare prefix', { verbs: ['get'], nonResourceURLs: ['/api*'] }, nonRes('get', '/apis'), true],
  ['* matches every URL', { verbs: ['*'], nonResourceURLs: ['*'] }, nonRes('post', '/anything'), true],
  ['URL verb must match', { verbs: ['get'], nonResourceURLs: ['/metrics'] }, nonRes('post', '/metrics'), false],
  ['URL rule never matches a resource', { verbs: ['*'], nonResourceURLs: ['*'] }, res('get', 'pods'), false],
];

for (const [name, rule, req, want] of cases) {
  test(`ruleAllows: ${name}`, (t) => {
    t.is(ruleAllows(req, rule), want);
  });
}

test('toPolicyRule keeps string lists only', (t) => {
  t.deepEqual(toPolicyRule({ verbs: ['get', 3], apiGroups: [''], resources: ['pods'], extra: 1 }), { verbs: ['get'], apiGroups: [''], resources: ['pods'] });
  t.deepEqual(toPolicyRule(null), { verbs: [] });
});

test('compactRule renders as upstream', (t) => {
  t.is(compactRule({ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }), '{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}');
  t.is(compactRule({ verbs: ['get'], nonResourceURLs: ['/x'] }), '{NonResourceURLs:["/x"], Verbs:["get"]}');
});
