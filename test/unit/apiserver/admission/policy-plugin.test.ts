/**
 * ValidatingAdmissionPolicy evaluation: matching (policy constraints, binding resources,
 * exclusions, resourceNames), variables, message/messageExpression/reason, Deny/Warn/Audit,
 * params by name and selector with parameterNotFoundAction, failurePolicy on errors and the cost
 * budget, audit annotations.
 */
import test from 'ava';
import type { AdmissionAttributes } from '../../../../apiserver/admission/admission';
import { evaluatePolicy } from '../../../../apiserver/admission/policy-eval';
import { ValidatingAdmissionPolicyPlugin } from '../../../../apiserver/admission/policy-plugin';
import { ApiError } from '../../../../apiserver/api/errors';
import type { KObject } from '../../../../apiserver/api/types';
import { makeBuiltinTypes } from '../../../../apiserver/registry/builtin';

type Rec = Record<string, any>;
const types = makeBuiltinTypes();
const deployments = types.find((t) => t.resource === 'deployments')!;
const configMaps = types.find((t) => t.resource === 'configmaps')!;

const attrs = (replicas: number, o: Partial<AdmissionAttributes> = {}): AdmissionAttributes => ({
  operation: 'CREATE',
  type: deployments,
  namespace: 'ns',
  name: 'web',
  subresource: '',
  object: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'ns', labels: { tier: 'web' } }, spec: { replicas } },
  user: { username: 'alice', groups: [] },
  dryRun: false,
  warnings: [],
  ...o,
});

const rules = [{ operations: ['CREATE', 'UPDATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'], scope: '*' }];
const policy = (name: string, spec: Rec): KObject => ({ metadata: { name }, spec: { failurePolicy: 'Fail', matchConstraints: { resourceRules: rules, namespaceSelector: {}, objectSelector: {} }, ...spec } });
const binding = (name: string, policyName: string, spec: Rec = {}): KObject => ({ metadata: { name }, spec: { policyName, validationActions: ['Deny'], ...spec } });

function plugin(policies: KObject[], bindings: KObject[], params: KObject[] = []): ValidatingAdmissionPolicyPlugin {
  return new ValidatingAdmissionPolicyPlugin({
    policies: () => Promise.resolve(policies),
    bindings: () => Promise.resolve(bindings),
    namespace: (name) => Promise.resolve({ metadata: { name, labels: { env: 'prod' } } }),
    paramType: (apiVersion, kind) => (apiVersion === 'v1' && kind === 'ConfigMap' ? configMaps : undefined),
    getParam: (_t, ns, name) => Promise.resolve(params.find((p) => p.metadata.name === name && p.metadata.namespace === ns)),
    listParams: (_t, ns) => Promise.resolve(params.filter((p) => p.metadata.namespace === ns)),
  });
}

const max = policy('max', {
  variables: [{ name: 'r', expression: 'object.spec.replicas' }, { name: 'twice', expression: 'variables.r * 2' }],
  validations: [{ expression: 'variables.twice <= 10', messageExpression: "'twice is ' + string(variables.twice)", reason: 'Forbidden' }],
});

test('Deny refuses with upstream\'s message and the validation\'s reason; variables read earlier ones', async (t) => {
  const p = plugin([max], [binding('b', 'max')]);
  await t.notThrowsAsync(p.validate(attrs(5)));
  const err = await t.throwsAsync(p.validate(attrs(6)), { instanceOf: ApiError });
  t.is(err.message, 'deployments.apps "web" is forbidden: ValidatingAdmissionPolicy \'max\' with binding \'b\' denied request: twice is 12');
  t.deepEqual(err.details?.causes, [{ reason: '', message: "ValidatingAdmissionPolicy 'max' with binding 'b' denied request: twice is 12" }]);
  t.is(err.code, 403);
  t.is(err.reason, 'Forbidden');
});

test('messages: message, else failed expression; reason Invalid (422) by default; a blank messageExpression falls back', (t) => {
  const inputs = { object: { spec: { replicas: 3n } }, oldObject: null, request: {}, namespaceObject: null };
  const out = evaluatePolicy({ validations: [{ expression: 'object.spec.replicas < 2', message: 'fewer please' }, { expression: 'object.spec.replicas < 1' }, { expression: 'false', messageExpression: "' '", message: 'fallback' }] }, inputs, null);
  t.deepEqual(out.failures.map((f) => [f.message, f.reason, f.index]), [['fewer please', 'Invalid', 0], ['failed expression: object.spec.replicas < 1', 'Invalid', 1], ['fallback', 'Invalid', 2]]);
});

test('Warn and Audit record instead of refusing; audit annotations are keyed by the policy', async (t) => {
  const withAudit = policy('max', { ...(max.spec as Rec), auditAnnotations: [{ key: 'replicas', valueExpression: 'string(object.spec.replicas)' }] });
  const p = plugin([withAudit], [binding('warn', 'max', { validationActions: ['Warn', 'Audit'] })]);
  const a = attrs(7);
  await t.notThrowsAsync(p.validate(a));
  t.deepEqual(a.warnings, ["Validation failed for ValidatingAdmissionPolicy 'max' with binding 'warn': twice is 14"]);
  t.is(a.auditAnnotations!['max/replicas'], '7');
  t.deepEqual(JSON.parse(a.auditAnnotations!['validation.policy.admission.k8s.io/validation_failure']), [{ message: 'twice is 14', policy: 'max', binding: 'warn', expressionIndex: 0, validationActions: ['Warn', 'Audit'] }]);
});

test('matching: constraints, exclusions, resourceNames, the binding\'s matchResources, matchConditions; unbound or missing policies do nothing', async (t) => {
  const deny = policy('deny', { validations: [{ expression: 'false', message: 'no' }] });
  await t.notThrowsAsync(plugin([deny], []).validate(attrs(1)));
  await t.notThrowsAsync(plugin([], [binding('b', 'deny')]).validate(attrs(1)));
  await t.throwsAsync(plugin([deny], [binding('b', 'deny')]).validate(attrs(1)), { message: /denied request: no/ });
  await t.notThrowsAsync(plugin([deny], [binding('b', 'deny')]).validate(attrs(1, { operation: 'DELETE', object: undefined })));
  const excluded = policy('deny', { ...(deny.spec as Rec), matchConstraints: { resourceRules: rules, excludeResourceRules: [{ ...rules[0], resourceNames: ['web'] }] } });
  await t.notThrowsAsync(plugin([excluded], [binding('b', 'deny')]).validate(attrs(1)));
  await t.throwsAsync(plugin([excluded], [binding('b', 'deny')]).validate(attrs(1, { name: 'api' })));
  const narrowed = binding('b', 'deny', { matchResources: { objectSelector: { matchLabels: { tier: 'db' } } } });
  await t.notThrowsAsync(plugin([deny], [narrowed]).validate(attrs(1)));
  const byNamespace = binding('b', 'deny', { matchResources: { namespaceSelector: { matchLabels: { env: 'prod' } } } });
  await t.throwsAsync(plugin([deny], [byNamespace]).validate(attrs(1)));
  const conditional = policy('deny', { ...(deny.spec as Rec), matchConditions: [{ name: 'big', expression: 'object.spec.replicas > 3' }] });
  await t.notThrowsAsync(plugin([conditional], [binding('b', 'deny')]).validate(attrs(1)));
  await t.throwsAsync(plugin([conditional], [binding('b', 'deny')]).validate(attrs(4)));
  // namespaceObject is the request's namespace.
  const ns = policy('ns', { validations: [{ expression: "namespaceObject.metadata.labels.env != 'prod'", message: 'not in prod' }] });
  await t.throwsAsync(plugin([ns], [binding('b', 'ns')]).validate(attrs(1)), { message: /not in prod/ });
});

test('params: by name (the request\'s namespace when unset), by selector (each evaluated), parameterNotFoundAction Allow or Deny', async (t) => {
  const limit = policy('limit', { paramKind: { apiVersion: 'v1', kind: 'ConfigMap' }, validations: [{ expression: 'object.spec.replicas <= int(params.data.max)', messageExpression: "'max ' + params.data.max" }] });
  const cm = (name: string, maxValue: string, labels: Rec = {}): KObject => ({ metadata: { name, namespace: 'ns', labels }, data: { max: maxValue } });
  const byName = binding('b', 'limit', { paramRef: { name: 'limits', parameterNotFoundAction: 'Deny' } });
  await t.notThrowsAsync(plugin([limit], [byName], [cm('limits', '3')]).validate(attrs(3)));
  await t.throwsAsync(plugin([limit], [byName], [cm('limits', '3')]).validate(attrs(4)), { message: /denied request: max 3/ });
  await t.throwsAsync(plugin([limit], [byName]).validate(attrs(1)), { message: "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'limit' with binding 'b' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction" });
  const allow = binding('b', 'limit', { paramRef: { name: 'limits', parameterNotFoundAction: 'Allow' } });
  await t.notThrowsAsync(plugin([limit], [allow]).validate(attrs(100)));
  const bySelector = binding('b', 'limit', { paramRef: { selector: { matchLabels: { kind: 'limit' } }, parameterNotFoundAction: 'Deny' } });
  const two = [cm('a', '5', { kind: 'limit' }), cm('b', '2', { kind: 'limit' }), cm('c', '1')];
  await t.throwsAsync(plugin([limit], [bySelector], two).validate(attrs(3)), { message: /max 2/ });
  await t.notThrowsAsync(plugin([limit], [bySelector], two).validate(attrs(2)));
  // A paramKind that is not served is a misconfiguration: failurePolicy decides.
  const unknown = policy('limit', { ...(limit.spec as Rec), paramKind: { apiVersion: 'example.com/v1', kind: 'Limits' } });
  await t.throwsAsync(plugin([unknown], [byName]).validate(attrs(1)), { message: /failed to configure binding: paramKind kind `&ParamKind\{APIVersion:example.com\/v1,Kind:Limits,\}` not known/ });
  await t.notThrowsAsync(plugin([{ ...unknown, spec: { ...(unknown.spec as Rec), failurePolicy: 'Ignore' } }], [byName]).validate(attrs(1)));
});

test('evaluation errors and the cost budget follow failurePolicy', async (t) => {
  const broken = (failurePolicy: string) => policy('p', { failurePolicy, validations: [{ expression: 'object.spec.missing > 1' }] });
  await t.throwsAsync(plugin([broken('Fail')], [binding('b', 'p')]).validate(attrs(1)), { message: /denied request: expression 'object.spec.missing > 1' resulted in error/ });
  await t.notThrowsAsync(plugin([broken('Ignore')], [binding('b', 'p')]).validate(attrs(1)));
  // contains() on a 200,000-character string costs a tenth of its size: 2,000 of them pass the 10M budget.
  const costly = policy('p', { validations: [{ expression: "object.spec.list.all(x, !object.spec.s.contains('never'))" }] });
  const big = attrs(1);
  (big.object!.spec as Rec).list = Array.from({ length: 2000 }, (_, i) => i);
  (big.object!.spec as Rec).s = 'x'.repeat(200_000);
  await t.throwsAsync(plugin([costly], [binding('b', 'p')]).validate(big), { message: /cost limit exceeded|cost budget/ });
});

test("a policy sees a two-name group as its matching rule spells it (\"*\": upstream's k8s.io name), as webhooks do", async (t) => {
  const roles = types.find((r) => r.resource === 'roles' && r.version === 'v1')!;
  const role = (): KObject => ({
    apiVersion: 'rbac.authorization.svc.io/v1',
    kind: 'Role',
    metadata: { name: 'r', namespace: 'ns', managedFields: [{ manager: 'kubectl', operation: 'Apply', apiVersion: 'rbac.authorization.svc.io/v1', fieldsType: 'FieldsV1', fieldsV1: {} }] },
    rules: [],
  });
  const roleAttrs = () => attrs(0, { type: roles, name: 'r', object: role() });
  for (const [groups, expected] of [
    [['*'], 'rbac.authorization.k8s.io'],
    [['rbac.authorization.k8s.io'], 'rbac.authorization.k8s.io'],
    [['rbac.authorization.svc.io'], 'rbac.authorization.svc.io'],
  ] as const) {
    const spelling = policy('spelling', {
      matchConstraints: { resourceRules: [{ operations: ['CREATE'], apiGroups: [...groups], apiVersions: ['v1'], resources: ['roles'], scope: '*' }], namespaceSelector: {}, objectSelector: {} },
      validations: [
        {
          expression: `object.apiVersion == "${expected}/v1" && object.metadata.managedFields[0].apiVersion == "${expected}/v1" && request.kind.group == "${expected}" && request.requestKind.group == "${expected}" && request.requestResource.group == "${expected}"`,
          messageExpression: 'object.apiVersion + " " + request.kind.group',
        },
      ],
    });
    // Deny: a wrong spelling refuses, naming what the policy saw.
    const a = roleAttrs();
    await t.notThrowsAsync(plugin([spelling], [binding('b', 'spelling')]).validate(a), groups.join());
    // matchConditions see the same spelling: the probe is evaluated (and warns) only when its condition holds.
    const probe = policy('probe', {
      ...(spelling.spec as Rec),
      matchConditions: [{ name: 'group', expression: `request.resource.group == "${expected}" && object.apiVersion == "${expected}/v1"` }],
      validations: [{ expression: 'false', messageExpression: 'object.apiVersion' }],
    });
    const w = roleAttrs();
    await plugin([probe], [binding('b', 'probe', { validationActions: ['Warn'] })]).validate(w);
    t.deepEqual(w.warnings, [`Validation failed for ValidatingAdmissionPolicy 'probe' with binding 'b': ${expected}/v1`], groups.join());
    // The object itself stays canonical.
    t.is(a.object!.apiVersion, 'rbac.authorization.svc.io/v1');
  }
});
