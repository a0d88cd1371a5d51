import test from 'ava';
import { parseAuthorizationConfig } from '../../../../apiserver/authz/authorization-config';
import { compileCondition } from '../../../../apiserver/authz/cel-conditions';
import { AuthorizationConfigError } from '../../../../apiserver/authz/config-error';
import { validateAuthorizationOptions } from '../../../../apiserver/authz/authorization-options';
import { buildAuthorizers } from '../../../../apiserver/wiring/authorization';

const webhook = (w: Record<string, unknown> = {}) => ({
  type: 'Webhook',
  name: 'hook',
  webhook: {
    timeout: '3s',
    subjectAccessReviewVersion: 'v1',
    matchConditionSubjectAccessReviewVersion: 'v1',
    failurePolicy: 'NoOpinion',
    connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: '/etc/hook.kubeconfig' },
    ...w,
  },
});
const doc = (authorizers: unknown[]) => JSON.stringify({ apiVersion: 'apiserver.config.svc.io/v1', kind: 'AuthorizationConfiguration', authorizers });

test('a valid configuration with defaults filled', (t) => {
  const e = parseAuthorizationConfig(doc([{ type: 'Node', name: 'node' }, { type: 'RBAC', name: 'rbac' }, webhook({ matchConditions: [{ expression: "request.user != 'x'" }] })]));
  t.deepEqual(e.map((x) => x.type), ['Node', 'RBAC', 'Webhook']);
  const w = e[2].webhook!;
  t.is(w.timeoutMs, 3000);
  t.is(w.authorizedTtlMs, 300_000);
  t.is(w.unauthorizedTtlMs, 30_000);
  t.true(w.cacheAuthorized);
  t.is(w.matchConditions.length, 1);
});

test('YAML works too, and authorizedTTL 0 selects the default', (t) => {
  const e = parseAuthorizationConfig(`apiVersion: apiserver.config.svc.io/v1
kind: AuthorizationConfiguration
authorizers:
- type: Webhook
  name: w
  webhook:
    timeout: 30s
    authorizedTTL: 0s
    unauthorizedTTL: 10s
    cacheUnauthorizedRequests: false
    subjectAccessReviewVersion: v1beta1
    failurePolicy: Deny
    connectionInfo: {type: KubeConfigFile, kubeConfigFile: /k}
`);
  t.is(e[0].webhook!.authorizedTtlMs, 300_000);
  t.is(e[0].webhook!.unauthorizedTtlMs, 10_000);
  t.false(e[0].webhook!.cacheUnauthorized);
  t.is(e[0].webhook!.failurePolicy, 'Deny');
});

const bad: [string, unknown[] | string, RegExp][] = [
  ['no authorizers', [], /authorizers: Required value/],
  ['unknown type', [{ type: 'ABAC', name: 'a' }], /authorizers\[0\].type: Unsupported value: "ABAC"/],
  ['missing name', [{ type: 'RBAC' }], /authorizers\[0\].name: Required value/],
  ['bad name', [{ type: 'RBAC', name: 'Not_OK' }], /authorizers\[0\].name: Invalid value/],
  ['duplicate name', [{ type: 'RBAC', name: 'a' }, { type: 'Node', name: 'a' }], /authorizers\[1\].name: Duplicate value/],
  ['duplicate RBAC', [{ type: 'RBAC', name: 'a' }, { type: 'RBAC', name: 'b' }], /authorizers\[1\].type: Duplicate value: "RBAC"/],
  ['webhook block on RBAC', [{ type: 'RBAC', name: 'a', webhook: {} }], /authorizers\[0\].webhook: Invalid value: non-null webhook config is only allowed for type Webhook/],
  ['missing webhook block', [{ type: 'Webhook', name: 'w' }], /authorizers\[0\].webhook: Required value/],
  ['missing timeout', [webhook({ timeout: undefined })], /webhook.timeout: Required value/],
  ['timeout over 30s', [webhook({ timeout: '31s' })], /webhook.timeout: Invalid value: "31s": must be > 0s and <= 30s/],
  ['bad duration', [webhook({ authorizedTTL: 'soon' })], /webhook.authorizedTTL: Invalid value: "soon"/],
  ['missing SAR version', [webhook({ subjectAccessReviewVersion: undefined })], /webhook.subjectAccessReviewVersion: Required value/],
  ['bad SAR version', [webhook({ subjectAccessReviewVersion: 'v2' })], /subjectAccessReviewVersion: Unsupported value: "v2"/],
  ['bad matchCondition SAR version', [webhook({ matchConditionSubjectAccessReviewVersion: 'v1beta1' })], /matchConditionSubjectAccessReviewVersion: Unsupported value/],
  ['missing failurePolicy', [webhook({ failurePolicy: undefined })], /webhook.failurePolicy: Required value/],
  ['bad failurePolicy', [webhook({ failurePolicy: 'Fail' })], /failurePolicy: Unsupported value: "Fail"/],
  ['InClusterConfig', [webhook({ connectionInfo: { type: 'InClusterConfig' } })], /InClusterConfig is not permitted for the API server itself/],
  ['relative kubeconfig', [webhook({ connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: 'k' } })], /kubeConfigFile: Invalid value: "k": must be an absolute path/],
  ['missing kubeconfig', [webhook({ connectionInfo: { type: 'KubeConfigFile' } })], /kubeConfigFile: Required value/],
  ['65 conditions', [webhook({ matchConditions: Array.from({ length: 65 }, (_, i) => ({ expression: `request.user != 'u${i}'` })) })], /matchConditions: Too many: 65: must have at most 64 items/],
  ['duplicate condition', [webhook({ matchConditions: [{ expression: 'true' }, { expression: 'true' }] })], /matchConditions\[1\].expression: Duplicate value/],
  ['condition syntax', [webhook({ matchConditions: [{ expression: 'request.user ==' }] })], /matchConditions\[0\].expression: Invalid value: .*compilation failed/],
  ['condition unknown variable', [webhook({ matchConditions: [{ expression: "object.name == 'x'" }] })], /undeclared reference to 'object'/],
  ['condition over the cost budget', [webhook({ matchConditions: [{ expression: 'request.groups.all(a, request.groups.all(b, a == b))' }] })], /matchConditions\[0\].expression: .*exceeds the budget/],
  ['wrong kind', '{"apiVersion":"apiserver.config.svc.io/v1","kind":"Other","authorizers":[{"type":"RBAC","name":"r"}]}', /kind: Unsupported value: "Other"/],
  ['not YAML', '{: :', /not valid YAML/],
];
for (const [name, input, want] of bad) {
  test(`AuthorizationConfiguration refused: ${name}`, (t) => {
    const err = t.throws(() => parseAuthorizationConfig(typeof input === 'string' ? input : doc(input), '/etc/authz.yaml'));
    t.true(err instanceof AuthorizationConfigError);
    t.regex(err.message, want);
  });
}

test('64 conditions are accepted', (t) => {
  const e = parseAuthorizationConfig(doc([webhook({ matchConditions: Array.from({ length: 64 }, (_, i) => ({ expression: `request.user != 'u${i}'` })) })]));
  t.is(e[0].webhook!.matchConditions.length, 64);
});

test('CEL conditions evaluate over the SubjectAccessReview spec', (t) => {
  const c = compileCondition("has(request.resourceAttributes) && request.resourceAttributes.namespace == 'kube' && request.groups.exists(g, g.startsWith('team-'))");
  t.true(c.eval({ user: 'a', groups: ['team-x'], resourceAttributes: { namespace: 'kube' } }));
  t.false(c.eval({ user: 'a', groups: ['other'], resourceAttributes: { namespace: 'kube' } }));
  t.false(c.eval({ user: 'a', groups: ['team-x'], nonResourceAttributes: { path: '/x' } }));
  t.throws(() => compileCondition("request.user").eval({ user: 'a', groups: [] }), { message: /boolean/ });
  t.throws(() => compileCondition("request.missing == 'x'").eval({ user: 'a', groups: [] }));
});

const flagCases: [string, Parameters<typeof validateAuthorizationOptions>[0], RegExp | null][] = [
  ['default', {}, null],
  ['both config and mode', { configFile: '/a', modes: ['RBAC'] }, /--authorization-config can not be specified together with --authorization-mode/],
  ['config and webhook flags', { configFile: '/a', webhookVersion: 'v1' }, /--authorization-webhook-\* flags/],
  ['unknown mode', { modes: ['RBAC', 'Magic'] }, /unknown mode "Magic"/],
  ['duplicate mode', { modes: ['RBAC', 'RBAC'] }, /specified more than once/],
  ['ABAC without file', { modes: ['ABAC'] }, /needs --authorization-policy-file/],
  ['policy file without ABAC', { modes: ['RBAC'], policyFile: '/p' }, /can only be used with --authorization-mode including ABAC/],
  ['Webhook without file', { modes: ['Webhook'] }, /needs --authorization-webhook-config-file/],
  ['webhook flags without Webhook', { modes: ['RBAC'], webhookConfigFile: '/w' }, /including Webhook/],
  ['bad webhook version', { modes: ['Webhook'], webhookConfigFile: '/w', webhookVersion: 'v2' }, /must be v1 or v1beta1/],
];
for (const [name, o, want] of flagCases) {
  test(`flags: ${name}`, (t) => {
    if (want) t.throws(() => validateAuthorizationOptions(o), { instanceOf: AuthorizationConfigError, message: want });
    else t.notThrows(() => validateAuthorizationOptions(o));
  });
}

test('buildAuthorizers refuses a malformed policy file naming the line and field', (t) => {
  const deps = { store: {} as never, cache: {} as never, registry: { lookup: () => ({}) } as never, log: { child: () => ({}) } as never };
  const err = t.throws(() => buildAuthorizers({ modes: ['ABAC'], policyFile: '/p' }, { ...deps, readFile: () => '{"apiVersion":"abac.authorization.svc.io/v1beta1","kind":"Policy","spec":{"user":1}}' }));
  t.regex(err.message, /line 1: spec.user: must be a string/);
  const missing = t.throws(() => buildAuthorizers({ configFile: '/nope' }, { ...deps, readFile: () => { throw new Error('ENOENT: no such file'); } }));
  t.regex(missing.message, /--authorization-config \/nope: ENOENT/);
});
