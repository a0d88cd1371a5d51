import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { policyCompileError } from '../../cel/admission-env';
import { withMeta } from '../common-schemas';
import { child, forbidden, index, invalid, notSupported, required } from '../field-errors';
import { rec, recs, str, strs } from '../obj-access';
import type { ResourceType } from '../resource-type';
import { atomicList, described, mapList, obj, ptr, str as s } from '../schema-builders';
import type { Now } from '../table';
import { policyMessages } from './admissionregistration-schema';
import { FAILURE_POLICIES, oneOfOptional, validateMatchConditions } from './admission-rule-validation';
import { bindingColumns, defaultBinding, defaultPolicy, policyColumns, validateMatchResources, validateParamKind, validateParamRef, validateVariables } from './validating-admission-policies';

/**
 * admissionregistration.svc.io MutatingAdmissionPolicy and MutatingAdmissionPolicyBinding
 * (cluster-scoped): v1beta1 (upstream 1.34) is the stored form and v1alpha1 (1.32) a view of the
 * same objects, both off unless --runtime-config turns them on (alpha and post-1.22 beta rules);
 * upstream's messages and field numbers of each package. Evaluated by admission/'s
 * MutatingAdmissionPolicy plugin behind the MutatingAdmissionPolicy feature gate.
 */

const PATCH_TYPES: readonly string[] = ['ApplyConfiguration', 'JSONPatch'];
const REINVOCATION_POLICIES: readonly string[] = ['IfNeeded', 'Never'];
/** A mutating policy may not match DELETE (upstream: CREATE, UPDATE and CONNECT; `*` means those). */
const MUTATING_OPERATIONS: readonly string[] = ['*', 'CONNECT', 'CREATE', 'UPDATE'];

const mutatingCompile = (expr: string) => policyCompileError(expr, true);

const built = new Map<string, ReturnType<typeof buildSchemas>>();

/** Each version's messages, built once (one schema object per message name). */
function schemas(version: 'v1alpha1' | 'v1beta1'): ReturnType<typeof buildSchemas> {
  let out = built.get(version);
  if (!out) built.set(version, (out = buildSchemas(version)));
  return out;
}

function buildSchemas(version: 'v1alpha1' | 'v1beta1') {
  const pkg = `k8s.io.api.admissionregistration.${version}`;
  const m = policyMessages(pkg);
  const expression = (what: string) => obj(`${pkg}.${what}`, { expression: [1, ptr(s(`The CEL expression producing the ${what === 'JSONPatch' ? 'list of JSONPatch operations' : 'apply configuration (Object{...})'}.`))] });
  const mutation = obj(`${pkg}.Mutation`, {
    patchType: [2, ptr(s('ApplyConfiguration or JSONPatch.'))],
    applyConfiguration: [3, described('An apply configuration merged into the object.', expression('ApplyConfiguration'))],
    jsonPatch: [4, described('A JSON patch applied to the object.', expression('JSONPatch'))],
  });
  const policy = withMeta(`${pkg}.MutatingAdmissionPolicy`, {
    spec: [2, described('The policy: what it matches and its CEL mutations.', obj(`${pkg}.MutatingAdmissionPolicySpec`, {
      paramKind: [1, described('The kind of the parameter objects.', m.paramKind)],
      matchConstraints: [2, described('The resources the policy mutates.', m.matchResources)],
      variables: [3, atomicList(m.variable, 'Named CEL expressions read as variables.<name>.')],
      mutations: [4, atomicList(mutation, 'The mutations, applied in order.')],
      failurePolicy: [5, ptr(s('Ignore or Fail (default) on errors.'))],
      matchConditions: [6, mapList(m.matchCondition, ['name'], 'Conditions that must all hold for the policy to run.')],
      reinvocationPolicy: [7, ptr(s('Never or IfNeeded: run again when later mutations change the object.'))],
    }))],
  });
  const binding = withMeta(`${pkg}.MutatingAdmissionPolicyBinding`, {
    spec: [2, described('The binding of a policy to resources and parameters.', obj(`${pkg}.MutatingAdmissionPolicyBindingSpec`, {
      policyName: [1, ptr(s('The MutatingAdmissionPolicy this binds.'))],
      paramRef: [2, described('Where the parameters are.', m.paramRef)],
      matchResources: [3, described('Further restricts what the policy mutates.', m.matchResources)],
    }))],
  });
  return { policy, binding };
}

/** Neither matchConstraints nor a binding's matchResources may name DELETE. */
function noDelete(path: string, value: unknown): Cause[] {
  const m = rec(value);
  if (!m) return [];
  const out: Cause[] = [];
  for (const field of ['resourceRules', 'excludeResourceRules']) {
    recs(m[field]).forEach((r, i) => {
      strs(r.operations).forEach((op, j) => {
        if (op === 'DELETE') out.push(notSupported(index(child(index(child(path, field), i), 'operations'), j), op, MUTATING_OPERATIONS));
      });
    });
  }
  return out;
}

function validateMutations(list: unknown): Cause[] {
  const mutations = recs(list);
  if (mutations.length === 0) return [required('spec.mutations', 'mutations must contain at least one item')];
  const out: Cause[] = [];
  mutations.forEach((m, i) => {
    const p = index('spec.mutations', i);
    const type = str(m.patchType) ?? '';
    if (type === '') out.push(required(child(p, 'patchType'), ''));
    else if (!PATCH_TYPES.includes(type)) out.push(notSupported(child(p, 'patchType'), type, PATCH_TYPES));
    for (const [t, field] of [['ApplyConfiguration', 'applyConfiguration'], ['JSONPatch', 'jsonPatch']] as const) {
      const body = rec(m[field]);
      if (type !== t) {
        if (body && PATCH_TYPES.includes(type)) out.push(forbidden(child(p, field), `must not be specified when patchType is ${type}`));
        continue;
      }
      if (!body) {
        out.push(required(child(p, field), `must be specified when patchType is ${t}`));
        continue;
      }
      const expr = str(body.expression) ?? '';
      const err = expr.trim() === '' ? undefined : mutatingCompile(expr);
      if (expr.trim() === '') out.push(required(child(child(p, field), 'expression'), 'expression is not specified'));
      else if (err) out.push(invalid(child(child(p, field), 'expression'), expr, err));
    }
  });
  return out;
}

/** Upstream validateMutatingAdmissionPolicySpec. */
function validatePolicy(o: KObject): Cause[] {
  const spec = rec(o.spec) ?? {};
  const out: Cause[] = validateParamKind(spec.paramKind);
  out.push(...validateMatchResources('spec.matchConstraints', spec.matchConstraints, true));
  out.push(...noDelete('spec.matchConstraints', spec.matchConstraints));
  out.push(...validateVariables('spec.variables', spec.variables, mutatingCompile));
  out.push(...validateMutations(spec.mutations));
  out.push(...oneOfOptional('spec.failurePolicy', spec.failurePolicy, FAILURE_POLICIES));
  out.push(...validateMatchConditions('spec.matchConditions', spec.matchConditions, mutatingCompile));
  const reinvocation = str(spec.reinvocationPolicy) ?? '';
  if (reinvocation === '') out.push(required('spec.reinvocationPolicy', ''));
  else if (!REINVOCATION_POLICIES.includes(reinvocation)) out.push(notSupported('spec.reinvocationPolicy', reinvocation, REINVOCATION_POLICIES));
  return out;
}

/** Upstream validateMutatingAdmissionPolicyBindingSpec. */
function validateBinding(o: KObject): Cause[] {
  const spec = rec(o.spec) ?? {};
  const out: Cause[] = [];
  if (!str(spec.policyName)) out.push(required('spec.policyName', ''));
  out.push(...validateParamRef(spec.paramRef));
  out.push(...validateMatchResources('spec.matchResources', spec.matchResources, false));
  out.push(...noDelete('spec.matchResources', spec.matchResources));
  return out;
}

const GROUP = 'admissionregistration.svc.io';
const STORED = 'v1beta1';

/** v1alpha1's view of the stored v1beta1 objects: the same fields, another apiVersion. */
function viewOf(resource: string): NonNullable<ResourceType['storedAs']> {
  const as = (version: string) => (o: KObject): KObject => ({ ...structuredClone(o), apiVersion: `${GROUP}/${version}` });
  return { group: GROUP, resource, fromStorage: as('v1alpha1'), toStorage: as(STORED) };
}

function policyType(version: 'v1alpha1' | 'v1beta1', now: Now): ResourceType {
  return {
    group: GROUP,
    version,
    resource: 'mutatingadmissionpolicies',
    singular: 'mutatingadmissionpolicy',
    kind: 'MutatingAdmissionPolicy',
    listKind: 'MutatingAdmissionPolicyList',
    namespaced: false,
    categories: ['api-extensions'],
    schema: schemas(version).policy,
    hasStatus: false,
    specFields: ['spec'],
    tableColumns: policyColumns('Mutations', 'mutations', now),
    defaults: defaultPolicy,
    validate: validatePolicy,
    ...(version === STORED ? {} : { storedAs: viewOf('mutatingadmissionpolicies') }),
  };
}

function bindingType(version: 'v1alpha1' | 'v1beta1', now: Now): ResourceType {
  return {
    group: GROUP,
    version,
    resource: 'mutatingadmissionpolicybindings',
    singular: 'mutatingadmissionpolicybinding',
    kind: 'MutatingAdmissionPolicyBinding',
    listKind: 'MutatingAdmissionPolicyBindingList',
    namespaced: false,
    categories: ['api-extensions'],
    schema: schemas(version).binding,
    hasStatus: false,
    specFields: ['spec'],
    tableColumns: bindingColumns(now),
    defaults: defaultBinding,
    validate: validateBinding,
    ...(version === STORED ? {} : { storedAs: viewOf('mutatingadmissionpolicybindings') }),
  };
}

/** The four types: v1beta1 (stored) policy and binding, then their v1alpha1 views. */
export function makeMutatingAdmissionPolicyTypes(now: Now = Date.now): ResourceType[] {
  return [policyType('v1beta1', now), bindingType('v1beta1', now), policyType('v1alpha1', now), bindingType('v1alpha1', now)];
}
