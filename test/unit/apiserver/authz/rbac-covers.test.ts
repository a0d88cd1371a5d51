import test from 'ava';
import { breakdown, FULL_AUTHORITY, ruleCovers, uncoveredRules } from '../../../../apiserver/authz/rbac-covers';
import type { PolicyRule } from '../../../../apiserver/authz/rbac-rules';

const r = (verbs: string[], groups: string[], resources: string[], names?: string[]): PolicyRule => ({ verbs, apiGroups: groups, resources, ...(names ? { resourceNames: names } : {}) });

test('breakdown splits into single atoms', (t) => {
  t.is(breakdown(r(['get', 'list'], ['', 'apps'], ['pods'])).length, 4);
  t.is(breakdown(r(['get'], [''], ['secrets'], ['a', 'b'])).length, 2);
  t.deepEqual(breakdown({ verbs: ['get'], nonResourceURLs: ['/a', '/b'] }), [
    { nonResourceURLs: ['/a'], verbs: ['get'] },
    { nonResourceURLs: ['/b'], verbs: ['get'] },
  ]);
});

const coverCases: [string, PolicyRule, PolicyRule, boolean][] = [
  ['same rule', r(['get'], [''], ['pods']), r(['get'], [''], ['pods']), true],
  ['wildcard verbs', r(['*'], [''], ['pods']), r(['delete'], [''], ['pods']), true],
  ['wildcard groups', r(['get'], ['*'], ['pods']), r(['get'], ['apps'], ['pods']), true],
  ['wildcard resources', r(['get'], [''], ['*']), r(['get'], [''], ['pods/log']), true],
  ['*/sub covers x/sub', r(['get'], [''], ['*/status']), r(['get'], [''], ['pods/status']), true],
  ['*/sub does not cover x', r(['get'], [''], ['*/status']), r(['get'], [''], ['pods']), false],
  ['missing verb', r(['get'], [''], ['pods']), r(['list'], [''], ['pods']), false],
  ['unrestricted names cover a named rule', r(['get'], [''], ['secrets']), r(['get'], [''], ['secrets'], ['a']), true],
  ['named does not cover unrestricted', r(['get'], [''], ['secrets'], ['a']), r(['get'], [''], ['secrets']), false],
  ['named covers the same name', r(['get'], [''], ['secrets'], ['a', 'b']), r(['get'], [''], ['secrets'], ['b']), true],
  ['named does not cover another name', r(['get'], [''], ['secrets'], ['a']), r(['get'], [''], ['secrets'], ['c']), false],
  ['URL wildcard', { verbs: ['get'], nonResourceURLs: ['/healthz/*'] }, { verbs: ['get'], nonResourceURLs: ['/healthz/etcd'] }, true],
  ['URL exact mismatch', { verbs: ['get'], nonResourceURLs: ['/healthz'] }, { verbs: ['get'], nonResourceURLs: ['/livez'] }, false],
];

for (const [name, owner, sub, want] of coverCases) {
  test(`ruleCovers: ${name}`, (t) => {
    t.is(ruleCovers(owner, sub), want);
  });
}

test('uncoveredRules lists only the missing atoms', (t) => {
  const owner = [r(['get', 'list'], [''], ['pods'])];
  const missing = uncoveredRules(owner, [r(['get', 'delete'], [''], ['pods'])]);
  t.deepEqual(missing, [r(['delete'], [''], ['pods'])]);
  t.deepEqual(uncoveredRules(FULL_AUTHORITY, [r(['*'], ['*'], ['*']), { verbs: ['*'], nonResourceURLs: ['*'] }]), []);
  t.is(uncoveredRules([r(['*'], ['*'], ['*'])], FULL_AUTHORITY).length, 1);
});
