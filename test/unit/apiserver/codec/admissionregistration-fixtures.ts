/** Representative admissionregistration.svc.io/v1 objects for the protobuf and CBOR tests: inline rules (two levels deep in NamedRuleWithOperations), caBundle bytes, selectors, status. */

const meta = (name: string) => ({ name, uid: `uid-${name}`, resourceVersion: '42', creationTimestamp: '2025-03-01T12:00:00Z', generation: 1 });

const rule = { operations: ['CREATE', 'UPDATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments', 'deployments/scale'], scope: 'Namespaced' };
const selector = { matchLabels: { env: 'prod' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['web'] }] };

const hook = {
  name: 'hook.example.com',
  clientConfig: { url: 'https://hooks.example.com:8443/admit', caBundle: 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t' },
  rules: [rule],
  failurePolicy: 'Ignore',
  matchPolicy: 'Equivalent',
  namespaceSelector: selector,
  objectSelector: {},
  sideEffects: 'NoneOnDryRun',
  timeoutSeconds: 5,
  admissionReviewVersions: ['v1', 'v1beta1'],
  matchConditions: [{ name: 'not-system', expression: "!request.userInfo.username.startsWith('system:')" }],
};

export const mutatingWebhookConfigurationFixture = {
  apiVersion: 'admissionregistration.svc.io/v1',
  kind: 'MutatingWebhookConfiguration',
  metadata: meta('mutating'),
  webhooks: [{ ...hook, reinvocationPolicy: 'IfNeeded' }],
};

export const validatingWebhookConfigurationFixture = {
  apiVersion: 'admissionregistration.svc.io/v1',
  kind: 'ValidatingWebhookConfiguration',
  metadata: meta('validating'),
  webhooks: [{ ...hook, clientConfig: { service: { namespace: 'hooks', name: 'policy', path: '/validate', port: 8443 } } }],
};

export const validatingAdmissionPolicyFixture = {
  apiVersion: 'admissionregistration.svc.io/v1',
  kind: 'ValidatingAdmissionPolicy',
  metadata: meta('replicas'),
  spec: {
    paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
    matchConstraints: { namespaceSelector: selector, objectSelector: {}, resourceRules: [{ ...rule, resourceNames: ['web'] }], excludeResourceRules: [rule], matchPolicy: 'Exact' },
    validations: [{ expression: 'object.spec.replicas <= 5', message: 'too many', reason: 'Forbidden', messageExpression: "'got ' + string(object.spec.replicas)" }],
    failurePolicy: 'Fail',
    auditAnnotations: [{ key: 'replicas', valueExpression: 'string(object.spec.replicas)' }],
    matchConditions: [{ name: 'big', expression: 'object.spec.replicas > 1' }],
    variables: [{ name: 'r', expression: 'object.spec.replicas' }],
  },
  status: { observedGeneration: 1, typeChecking: { expressionWarnings: [{ fieldRef: 'spec.validations[0].expression', warning: 'none' }] } },
};

export const validatingAdmissionPolicyBindingFixture = {
  apiVersion: 'admissionregistration.svc.io/v1',
  kind: 'ValidatingAdmissionPolicyBinding',
  metadata: meta('replicas'),
  spec: { policyName: 'replicas', paramRef: { name: 'limits', namespace: 'default', parameterNotFoundAction: 'Deny' }, matchResources: { objectSelector: selector }, validationActions: ['Deny', 'Audit'] },
};

/** admissionregistration.svc.io/v1beta1 MutatingAdmissionPolicy (v1alpha1 the same body under its apiVersion): both mutation kinds, params, conditions. */
export const mutatingAdmissionPolicyFixture = {
  apiVersion: 'admissionregistration.svc.io/v1beta1',
  kind: 'MutatingAdmissionPolicy',
  metadata: meta('sidecar'),
  spec: {
    paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
    matchConstraints: { namespaceSelector: selector, objectSelector: {}, resourceRules: [{ ...rule, resourceNames: ['web'] }], excludeResourceRules: [rule], matchPolicy: 'Equivalent' },
    variables: [{ name: 'image', expression: 'params.data.image' }],
    mutations: [
      { patchType: 'ApplyConfiguration', applyConfiguration: { expression: 'Object{metadata: Object.metadata{labels: {"sidecar": "yes"}}}' } },
      { patchType: 'JSONPatch', jsonPatch: { expression: '[JSONPatch{op: "add", path: "/metadata/annotations", value: {"a": "b"}}]' } },
    ],
    failurePolicy: 'Ignore',
    matchConditions: [{ name: 'big', expression: 'object.spec.replicas > 1' }],
    reinvocationPolicy: 'IfNeeded',
  },
};

export const mutatingAdmissionPolicyBindingFixture = {
  apiVersion: 'admissionregistration.svc.io/v1beta1',
  kind: 'MutatingAdmissionPolicyBinding',
  metadata: meta('sidecar'),
  spec: { policyName: 'sidecar', paramRef: { selector: selector, namespace: 'default', parameterNotFoundAction: 'Allow' }, matchResources: { objectSelector: selector } },
};
