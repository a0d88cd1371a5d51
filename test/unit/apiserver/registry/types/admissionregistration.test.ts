/** admissionregistration.svc.io/v1: upstream's v1 defaults and validation messages for webhook configurations, policies and bindings. */
import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { validateRule } from '../../../../../apiserver/registry/types/admission-rule-validation';
import { makeValidatingAdmissionPolicyBindingType, makeValidatingAdmissionPolicyType } from '../../../../../apiserver/registry/types/validating-admission-policies';
import { makeMutatingWebhookConfigurationType, makeValidatingWebhookConfigurationType } from '../../../../../apiserver/registry/types/webhook-configurations';

const mutating = makeMutatingWebhookConfigurationType();
const validating = makeValidatingWebhookConfigurationType();
const vap = makeValidatingAdmissionPolicyType();
const vapb = makeValidatingAdmissionPolicyBindingType();
const msgs = (causes: Array<{ field?: string; message: string }>) => causes.map((c) => `${c.field}: ${c.message}`);

const hook = (o: Record<string, unknown> = {}) => ({
  name: 'a.hooks.example.com',
  clientConfig: { service: { namespace: 'hooks', name: 'a' } },
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  sideEffects: 'None',
  admissionReviewVersions: ['v1'],
  ...o,
});

test('webhook v1 defaults: failurePolicy Fail, matchPolicy Equivalent, timeout 10, selectors {}, reinvocation Never, scope *, port 443', (t) => {
  const o: KObject = { metadata: { name: 'm' }, webhooks: [hook()] };
  mutating.defaults!(o);
  t.deepEqual((o.webhooks as any)[0], {
    ...hook(),
    clientConfig: { service: { namespace: 'hooks', name: 'a', port: 443 } },
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: '*' }],
    failurePolicy: 'Fail',
    matchPolicy: 'Equivalent',
    namespaceSelector: {},
    objectSelector: {},
    timeoutSeconds: 10,
    reinvocationPolicy: 'Never',
  });
  const v: KObject = { metadata: { name: 'v' }, webhooks: [hook()] };
  validating.defaults!(v);
  t.false('reinvocationPolicy' in (v.webhooks as any)[0]);
});

test('webhook validation: name, sideEffects, admissionReviewVersions, timeout, clientConfig, policies, matchConditions', (t) => {
  const bad: KObject = {
    metadata: { name: 'v' },
    webhooks: [
      hook({ name: 'a.b', sideEffects: undefined, admissionReviewVersions: [], timeoutSeconds: 0, failurePolicy: 'Maybe', clientConfig: { url: 'https://example.com/x', service: { name: 's', namespace: 'n' } } }),
      hook({ sideEffects: 'Unknown', admissionReviewVersions: ['v2', 'v2'], matchConditions: [{ name: 'x', expression: 'object.(' }, { name: 'x', expression: '' }] }),
    ],
  };
  t.deepEqual(msgs(validating.validate!(bad)), [
    'webhooks[0].name: Invalid value: "a.b": should be a domain with at least three segments separated by dots',
    'webhooks[0].failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore"',
    'webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun',
    'webhooks[0].timeoutSeconds: Invalid value: 0: the timeout value must be between 1 and 30 seconds',
    'webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1',
    'webhooks[0].clientConfig: Required value: exactly one of url or service is required',
    'webhooks[1].sideEffects: Unsupported value: "Unknown": supported values: "None", "NoneOnDryRun"',
    'webhooks[1].admissionReviewVersions[1]: Invalid value: "v2": duplicate version',
    'webhooks[1].admissionReviewVersions: Invalid value: ["v2","v2"]: must include at least one of v1, v1beta1',
    ...msgs(validating.validate!({ metadata: { name: 'x' }, webhooks: [hook({ matchConditions: [{ name: 'x', expression: 'object.(' }] })] })).map((m) => m.replace('webhooks[0]', 'webhooks[1]')),
    'webhooks[1].matchConditions[1].name: Duplicate value: "x"',
    'webhooks[1].matchConditions[1].expression: Required value',
  ].filter((m, i, all) => all.indexOf(m) === i));
  t.deepEqual(msgs(validating.validate!({ metadata: { name: 'x' }, webhooks: [hook(), hook()] })), ['webhooks[1].name: Duplicate value: "a.hooks.example.com"']);
  t.deepEqual(msgs(validating.validate!({ metadata: { name: 'x' }, webhooks: [hook({ clientConfig: { service: { namespace: 'n', name: 's', path: 'x', port: 70000 } } })] })), [
    'webhooks[0].clientConfig.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive',
    "webhooks[0].clientConfig.service.path: Invalid value: \"x\": must start with a '/'",
  ]);
});

test('rules: required lists, * alone, known operations and scopes, resource overlaps', (t) => {
  t.deepEqual(msgs(validateRule('r', {})), ['r.operations: Required value', 'r.apiGroups: Required value', 'r.apiVersions: Required value', 'r.resources: Required value']);
  t.deepEqual(msgs(validateRule('r', { operations: ['*', 'CREATE', 'PATCH'], apiGroups: ['*', 'apps'], apiVersions: ['v1'], resources: ['*/*', 'pods'], scope: 'Everywhere' })), [
    'r.operations: Invalid value: ["*","CREATE","PATCH"]: if \'*\' is present, must not specify other operations',
    'r.operations[2]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"',
    'r.apiGroups: Invalid value: ["*","apps"]: if \'*\' is present, must not specify other API groups',
    'r.resources: Invalid value: ["*/*","pods"]: if \'*/*\' is present, must not specify other resources',
    'r.scope: Unsupported value: "Everywhere": supported values: "*", "Cluster", "Namespaced"',
  ]);
  t.deepEqual(msgs(validateRule('r', { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/*', 'pods/status', '*', 'deployments'] })), [
    "r.resources[1]: Invalid value: \"pods/status\": if 'pods/*' is present, must not specify pods/status",
    "r.resources[3]: Invalid value: \"deployments\": if '*' is present, must not specify deployments",
  ]);
});

test('policies: defaults and upstream\'s messages', (t) => {
  const p: KObject = { metadata: { name: 'p' }, spec: { matchConstraints: { resourceRules: [{ operations: ['CREATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] }] }, validations: [{ expression: 'true' }] } };
  vap.defaults!(p);
  t.like(p.spec, { failurePolicy: 'Fail', matchConstraints: { matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {} } });
  t.deepEqual(vap.validate!(p), []);
  const bad: KObject = {
    metadata: { name: 'p' },
    spec: {
      paramKind: { kind: 'ConfigMap' },
      matchConstraints: {},
      validations: [{ expression: 'a ==\n b', reason: 'Teapot' }, { expression: 'true', message: 'two\nlines' }],
      variables: [{ name: '1x', expression: 'true' }],
      auditAnnotations: [{ key: 'k', valueExpression: '' }],
    },
  };
  t.deepEqual(msgs(vap.validate!(bad)).map((m) => m.replace(/compilation failed: .*/, 'compilation failed')), [
    'spec.paramKind.apiVersion: Required value',
    'spec.matchConstraints.resourceRules: Required value',
    'spec.validations[0].expression: Invalid value: "a ==\\n b": compilation failed',
    'spec.validations[0].message: Required value: message must be specified if expression contains line breaks',
    'spec.validations[0].reason: Unsupported value: "Teapot": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge", "Unauthorized"',
    'spec.validations[1].message: Invalid value: "two\\nlines": message must not contain line breaks',
    'spec.auditAnnotations[0].valueExpression: Required value: valueExpression is not specified',
    'spec.variables[0].name: Invalid value: "1x": name is not a valid CEL identifier',
  ]);
  t.deepEqual(msgs(vap.validate!({ metadata: { name: 'p' }, spec: { matchConstraints: p.spec && (p.spec as any).matchConstraints } })), ['spec.validations: Required value: validations or auditAnnotations must contain at least one item']);
});

test('bindings: defaults (parameterNotFoundAction Deny) and upstream\'s messages', (t) => {
  const b: KObject = { metadata: { name: 'b' }, spec: { policyName: 'p', validationActions: ['Deny'], paramRef: { name: 'x' } } };
  vapb.defaults!(b);
  t.is((b.spec as any).paramRef.parameterNotFoundAction, 'Deny');
  t.deepEqual(vapb.validate!(b), []);
  t.deepEqual(msgs(vapb.validate!({ metadata: { name: 'b' }, spec: { validationActions: ['Deny', 'Warn', 'Deny', 'Shout'], paramRef: { name: 'x', selector: {}, parameterNotFoundAction: 'Maybe' } } })), [
    'spec.policyName: Required value',
    'spec.paramRef.name: Forbidden: name and selector are mutually exclusive',
    'spec.paramRef.parameterNotFoundAction: Unsupported value: "Maybe": supported values: "Allow", "Deny"',
    'spec.validationActions[2]: Duplicate value: "Deny"',
    'spec.validationActions[3]: Unsupported value: "Shout": supported values: "Audit", "Deny", "Warn"',
    'spec.validationActions: Invalid value: ["Deny","Warn","Deny","Shout"]: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
  ]);
  t.deepEqual(msgs(vapb.validate!({ metadata: { name: 'b' }, spec: { policyName: 'p' } })), ['spec.validationActions: Required value: at least one validation action is required']);
});
