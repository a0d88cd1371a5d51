import { labelSelectorSchema, metaConditionSchema } from '../common-schemas';
import { atomicList, bytes, described, int32, int64, mapList, obj, ptr, str } from '../schema-builders';

/**
 * The messages admissionregistration.svc.io/v1 kinds share, with upstream's
 * k8s.io.api.admissionregistration.v1 names and field numbers (generated.proto): rules, the
 * webhook client configuration, match conditions and the policy pieces.
 */

export const AR = 'k8s.io.api.admissionregistration.v1';

export const ruleWithOperationsSchema = obj(`${AR}.RuleWithOperations`, {
  operations: [1, atomicList(str(), 'The operations the hook cares about: CREATE, UPDATE, DELETE, CONNECT or *.')],
}, {
  // Rule is embedded (json inline) as field 2 "rule".
  inline: [[2, obj(`${AR}.Rule`, {
    apiGroups: [1, atomicList(str(), 'API groups; * is all groups.')],
    apiVersions: [2, atomicList(str(), 'API versions; * is all versions.')],
    resources: [3, atomicList(str(), 'Resources and sub-resources (pods, pods/status, */scale, *, */*).')],
    scope: [4, ptr(str('Cluster, Namespaced or *.'))],
  }), 'rule']],
});

export const serviceReferenceSchema = obj(`${AR}.ServiceReference`, {
  namespace: [1, ptr(str('The namespace of the service.'))],
  name: [2, ptr(str('The name of the service.'))],
  path: [3, ptr(str('URL path sent in every request to the service.'))],
  port: [4, ptr(int32('The service port of the webhook; default 443.'))],
});

export const webhookClientConfigSchema = obj(`${AR}.WebhookClientConfig`, {
  url: [3, ptr(str('The location of the webhook: https://host:port/path.'))],
  service: [1, described('A reference to the service of the webhook.', serviceReferenceSchema)],
  caBundle: [2, bytes('PEM CA bundle verifying the webhook\'s serving certificate; system roots when unset.')],
});

export const matchConditionSchema = obj(`${AR}.MatchCondition`, {
  name: [1, ptr(str('An identifier for this match condition.'))],
  expression: [2, ptr(str('A CEL expression over object, oldObject, request and authorizer; must evaluate to bool.'))],
});

const matchConditions = (no: number): readonly [number, ReturnType<typeof mapList>] => [no, mapList(matchConditionSchema, ['name'], 'Conditions that must all hold for a request to be handled.')];

const webhookCommon = {
  name: [1, ptr(str('The fully qualified name of the admission webhook.'))],
  clientConfig: [2, described('How to reach the hook.', webhookClientConfigSchema)],
  rules: [3, atomicList(ruleWithOperationsSchema, 'The operations on resources the webhook cares about.')],
  failurePolicy: [4, ptr(str('Ignore or Fail (default) on errors calling the hook.'))],
  matchPolicy: [9, ptr(str('Exact or Equivalent (default).'))],
  namespaceSelector: [5, described('Selects the namespaces (by their labels) of the objects sent to the hook.', labelSelectorSchema)],
  sideEffects: [6, ptr(str('None or NoneOnDryRun; Some and Unknown make dry-run requests fail.'))],
  timeoutSeconds: [7, ptr(int32('Timeout of one call, 1 to 30 seconds; default 10.'))],
  admissionReviewVersions: [8, atomicList(str(), 'AdmissionReview versions the hook accepts, preferred first.')],
} as const;

export const mutatingWebhookSchema = obj(`${AR}.MutatingWebhook`, {
  ...webhookCommon,
  objectSelector: [11, described('Selects the objects (by old or new labels) sent to the hook.', labelSelectorSchema)],
  reinvocationPolicy: [10, ptr(str('Never (default) or IfNeeded: called again when later mutations change the object.'))],
  matchConditions: matchConditions(12),
});

export const validatingWebhookSchema = obj(`${AR}.ValidatingWebhook`, {
  ...webhookCommon,
  objectSelector: [10, described('Selects the objects (by old or new labels) sent to the hook.', labelSelectorSchema)],
  matchConditions: matchConditions(11),
});

/**
 * The policy messages every admissionregistration version declares in its own package
 * (v1alpha1 and v1beta1 repeat them with the same field numbers for MutatingAdmissionPolicy).
 */
export function policyMessages(pkg: string) {
  const namedRuleWithOperations = obj(`${pkg}.NamedRuleWithOperations`, {
    resourceNames: [1, atomicList(str(), 'Names the rule applies to; empty means all.')],
  }, { atomic: true, inline: [[2, ruleWithOperationsSchema, 'ruleWithOperations']] });
  return {
    matchCondition: pkg === AR ? matchConditionSchema : obj(`${pkg}.MatchCondition`, {
      name: [1, ptr(str('An identifier for this match condition.'))],
      expression: [2, ptr(str('A CEL expression over object, oldObject, request, params and namespaceObject; must evaluate to bool.'))],
    }),
    namedRuleWithOperations,
    matchResources: obj(`${pkg}.MatchResources`, {
      namespaceSelector: [1, described('Selects namespaces by their labels.', labelSelectorSchema)],
      objectSelector: [2, described('Selects objects by old or new labels.', labelSelectorSchema)],
      resourceRules: [3, atomicList(namedRuleWithOperations, 'The operations on resources the policy matches (any rule).')],
      excludeResourceRules: [4, atomicList(namedRuleWithOperations, 'Operations on resources excluded (taking precedence).')],
      matchPolicy: [7, ptr(str('Exact or Equivalent (default).'))],
    }, { atomic: true }),
    paramKind: obj(`${pkg}.ParamKind`, {
      apiVersion: [1, ptr(str('group/version of the parameter kind.'))],
      kind: [2, ptr(str('The parameter kind.'))],
    }, { atomic: true }),
    paramRef: obj(`${pkg}.ParamRef`, {
      name: [1, ptr(str('The name of the parameter object.'))],
      namespace: [2, ptr(str('The namespace of the parameter objects.'))],
      selector: [3, described('Selects several parameter objects by label.', labelSelectorSchema)],
      parameterNotFoundAction: [4, ptr(str('Allow or Deny when no parameter is found.'))],
    }, { atomic: true }),
    variable: obj(`${pkg}.Variable`, {
      name: [1, ptr(str('The variable name, read as variables.<name>.')), 'Name'],
      expression: [2, ptr(str('The CEL expression of its value.')), 'Expression'],
    }, { atomic: true }),
  };
}

const v1Messages = policyMessages(AR);
export const namedRuleWithOperationsSchema = v1Messages.namedRuleWithOperations;
export const matchResourcesSchema = v1Messages.matchResources;
export const paramKindSchema = v1Messages.paramKind;
export const paramRefSchema = v1Messages.paramRef;
export const variableSchema = v1Messages.variable;

export const validationSchema = obj(`${AR}.Validation`, {
  expression: [1, ptr(str('The CEL expression; false denies.')), 'Expression'],
  message: [2, ptr(str('The message when the validation fails.'))],
  reason: [3, ptr(str('Unauthorized, Forbidden, Invalid (default) or RequestEntityTooLarge.'))],
  messageExpression: [4, ptr(str('A CEL expression producing the failure message.'))],
});

export const auditAnnotationSchema = obj(`${AR}.AuditAnnotation`, {
  key: [1, ptr(str('The audit annotation key (qualified name).'))],
  valueExpression: [2, ptr(str('A CEL expression producing the value (string or null).'))],
});

export const typeCheckingSchema = obj(`${AR}.TypeChecking`, {
  expressionWarnings: [1, atomicList(obj(`${AR}.ExpressionWarning`, {
    fieldRef: [2, ptr(str('The path of the expression.'))],
    warning: [3, ptr(str('The type checking result.'))],
  }), 'Type checking warnings, one per expression.')],
});

export const policyStatusSchema = obj(`${AR}.ValidatingAdmissionPolicyStatus`, {
  observedGeneration: [1, int64('The generation the type check saw.')],
  typeChecking: [2, described('The results of type checking every expression.', typeCheckingSchema)],
  conditions: [3, mapList(metaConditionSchema, ['type'], 'The latest observations of the policy.')],
});
