import test from 'ava';
import { AbacAuthorizer, parseAbacPolicies } from '../../../../apiserver/authz/abac';
import { AuthorizationConfigError } from '../../../../apiserver/authz/config-error';
import { nonRes, res, user } from './helpers';

const line = (spec: Record<string, unknown>) => JSON.stringify({ apiVersion: 'abac.authorization.svc.io/v1beta1', kind: 'Policy', spec });
const file = [
  '# comment',
  line({ user: 'alice', namespace: '*', resource: '*', apiGroup: '*' }),
  '',
  line({ user: 'bob', namespace: 'projectCaribou', resource: 'pods', apiGroup: '', readonly: true }),
  line({ group: 'system:authenticated', nonResourcePath: '*', readonly: true }),
  line({ group: 'system:unauthenticated', nonResourcePath: '/version' }),
  line({ user: 'carol', nonResourcePath: '/logs/*' }),
  line({ user: '*', namespace: 'shared', resource: 'configmaps', apiGroup: '', readonly: true }),
].join('\n');

const z = new AbacAuthorizer(parseAbacPolicies(file));
const anon = { username: 'system:anonymous', groups: ['system:unauthenticated'] };

const cases: [string, Parameters<typeof z.authorize>[0], boolean][] = [
  ['alice everything', { user: user('alice'), info: res('delete', 'deployments', { apiGroup: 'apps', namespace: 'x', name: 'd' }) }, true],
  ['bob reads pods in his namespace', { user: user('bob'), info: res('list', 'pods', { namespace: 'projectCaribou' }) }, true],
  ['bob readonly', { user: user('bob'), info: res('create', 'pods', { namespace: 'projectCaribou' }) }, false],
  ['bob other namespace', { user: user('bob'), info: res('get', 'pods', { namespace: 'x', name: 'p' }) }, false],
  ['bob other resource', { user: user('bob'), info: res('get', 'secrets', { namespace: 'projectCaribou', name: 's' }) }, false],
  ['authenticated read any path', { user: user('dave'), info: nonRes('get', '/apis') }, true],
  ['authenticated readonly path', { user: user('dave'), info: nonRes('post', '/apis') }, false],
  ['unauthenticated version', { user: anon, info: nonRes('get', '/version') }, true],
  ['unauthenticated other path', { user: anon, info: nonRes('get', '/apis') }, false],
  ['trailing * subpath', { user: user('carol'), info: nonRes('get', '/logs/kube.log') }, true],
  ['trailing * other path', { user: user('carol'), info: nonRes('get', '/metrics') }, true],
  ['user * matches anyone', { user: anon, info: res('get', 'configmaps', { namespace: 'shared', name: 'c' }) }, true],
  ['resource policy does not match a path', { user: user('bob'), info: nonRes('get', '/healthz') }, true],
];

for (const [name, a, want] of cases) {
  test(`ABAC: ${name}`, async (t) => {
    t.is((await z.authorize(a)).decision, want ? 'allow' : 'no-opinion');
  });
}

test('ABAC: carol matches /logs/* only through the authenticated read policy for /metrics', async (t) => {
  const onlyCarol = new AbacAuthorizer(parseAbacPolicies(line({ user: 'carol', nonResourcePath: '/logs/*' })));
  t.is((await onlyCarol.authorize({ user: user('carol'), info: nonRes('get', '/metrics') })).decision, 'no-opinion');
  t.is((await onlyCarol.authorize({ user: user('carol'), info: nonRes('get', '/logs/') })).decision, 'allow');
});

const bad: [string, string, RegExp][] = [
  ['not JSON', '{nope', /line 1: not a JSON object/],
  ['wrong apiVersion', JSON.stringify({ apiVersion: 'v1', kind: 'Policy', spec: {} }), /line 1: apiVersion: must be abac.authorization.svc.io\/v1beta1/],
  ['wrong kind', JSON.stringify({ apiVersion: 'abac.authorization.svc.io/v1beta1', kind: 'Pol', spec: {} }), /kind: must be Policy/],
  ['readonly not a boolean', `\n${line({ user: 'a', readonly: 'yes' })}`, /line 2: spec.readonly: must be a boolean/],
  ['user not a string', line({ user: 3 }), /spec.user: must be a string/],
  ['unknown field', line({ user: 'a', verbs: ['get'] }), /spec.verbs: unknown field/],
  ['outer list', '[]', /not a JSON object/],
];
for (const [name, text, want] of bad) {
  test(`ABAC file refused: ${name}`, (t) => {
    const err = t.throws(() => parseAbacPolicies(text, '/etc/abac.jsonl'));
    t.true(err instanceof AuthorizationConfigError);
    t.regex(err.message, want);
    t.regex(err.message, /\/etc\/abac.jsonl/);
  });
}

test('ABAC lists the rules of matching policies', (t) => {
  const r = z.rulesFor(user('bob'), 'projectCaribou');
  t.deepEqual(r.rules[0], { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods'] });
  t.false(r.incomplete);
});
