import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { policyCompileError } from '../../cel/admission-env';
import { withMeta } from '../common-schemas';
import { qualifiedName, validateLabelSelector } from '../common-validation';
import { child, duplicate, forbidden, index, invalid, notSupported, required } from '../field-errors';
import { rec, recs, str, strs } from '../obj-access';
import type { ResourceType } from '../resource-type';
import { atomicList, described, mapList, obj, ptr, setList, str as s } from '../schema-builders';
import { ageColumn, column, type Now } from '../table';
import {
  AR,
  auditAnnotationSchema,
  matchConditionSchema,
  matchResourcesSchema,
  paramKindSchema,
  paramRefSchema,
  policyStatusSchema,
  validationSchema,
  variableSchema,
} from './admissionregistration-schema';
import { FAILURE_POLICIES, MATCH_POLICIES, oneOfOptional, validateMatchConditions, validateRule } from './admission-rule-validation';

/**
 * admissionregistration.svc.io/v1 ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding
 * (cluster-scoped), with upstream's v1 defaults and validation messages. Evaluated by
 * admission/'s ValidatingAdmissionPolicy plugin (policy-plugin.ts).
 */

const REASONS: readonly string[] = ['Forbidden', 'Invalid', 'RequestEntityTooLarge', 'Unauthorized'];
const ACTIONS: readonly string[] = ['Audit', 'Deny', 'Warn'];
const NOT_FOUND_ACTIONS: readonly string[] = ['Allow', 'Deny'];
const CEL_IDENT = /^[_a-zA-Z][_a-zA-Z0-9]*$/;

export const validatingAdmissionPolicySchema = withMeta(`${AR}.ValidatingAdmissionPolicy`, {
  spec: [2, described('The policy: what it matches and its CEL validations.', obj(`${AR}.ValidatingAdmissionPolicySpec`, {
    paramKind: [1, described('The kind of the parameter objects.', paramKindSchema)],
    matchConstraints: [2, described('The resources the policy validates.', matchResourcesSchema)],
    validations: [3, atomicList(validationSchema, 'CEL validations; false denies.')],
    failurePolicy: [4, ptr(s('Ignore or Fail (default) on errors.'))],
    auditAnnotations: [5, atomicList(auditAnnotationSchema, 'CEL expressions producing audit annotations.')],
    matchConditions: [6, mapList(matchConditionSchema, ['name'], 'Conditions that must all hold for the policy to run.')],
    variables: [7, mapList(variableSchema, ['name'], 'Named CEL expressions read as variables.<name>.')],
  }))],
  status: [3, described('Type checking results and conditions.', policyStatusSchema)],
});

export const validatingAdmissionPolicyBindingSchema = withMeta(`${AR}.ValidatingAdmissionPolicyBinding`, {
  spec: [2, described('The binding of a policy to resources and parameters.', obj(`${AR}.ValidatingAdmissionPolicyBindingSpec`, {
    policyName: [1, ptr(s('The ValidatingAdmissionPolicy this binds.'))],
    paramRef: [2, described('Where the parameters are.', paramRefSchema)],
    matchResources: [3, described('Further restricts what the policy validates.', matchResourcesSchema)],
    validationActions: [4, setList(s(), 'Deny, Warn and/or Audit.')],
  }))],
});

/** The table of a policy (validating or mutating): how many of its `list` (validations, mutations), the parameters' kind, the age. */
export function policyColumns(name: string, list: string, now: Now) {
  return [
    column(name, 'integer', `The number of ${list}.`, (o) => recs(rec(o.spec)?.[list]).length),
    column('ParamKind', 'string', 'The kind of the parameters.', (o) => {
      const pk = rec(rec(o.spec)?.paramKind);
      return pk ? `${str(pk.apiVersion) ?? ''}/${str(pk.kind) ?? ''}` : '<unset>';
    }),
    ageColumn(now),
  ];
}

/** A policy's defaults (validating or mutating): failurePolicy Fail, and its matchConstraints'. */
export function defaultPolicy(o: KObject): void {
  const spec = rec(o.spec);
  if (!spec) return;
  spec.failurePolicy ??= 'Fail';
  defaultMatchResources(rec(spec.matchConstraints));
}

/** The table of a policy binding (validating or mutating): the policy, the parameters, the age. */
export function bindingColumns(now: Now) {
  return [
    column('PolicyName', 'string', 'The policy bound.', (o) => str(rec(o.spec)?.policyName) ?? ''),
    column('ParamRef', 'string', 'The parameters.', (o) => {
      const ref = rec(rec(o.spec)?.paramRef);
      return ref ? `${str(ref.namespace) ?? ''}/${str(ref.name) ?? '*'}` : '<unset>';
    }),
    ageColumn(now),
  ];
}

/** A policy binding's defaults (validating or mutating): its matchResources', and paramRef.parameterNotFoundAction Deny. */
export function defaultBinding(o: KObject): void {
  const spec = rec(o.spec);
  if (!spec) return;
  defaultMatchResources(rec(spec.matchResources));
  const ref = rec(spec.paramRef);
  if (ref) ref.parameterNotFoundAction ??= 'Deny';
}

/** Upstream SetDefaults_MatchResources (+ the rules' scope). */
export function defaultMatchResources(m: Record<string, unknown> | undefined): void {
  if (!m) return;
  m.matchPolicy ??= 'Equivalent';
  m.namespaceSelector ??= {};
  m.objectSelector ??= {};
  for (const r of [...recs(m.resourceRules), ...recs(m.excludeResourceRules)]) r.scope ??= '*';
}

export function validateMatchResources(p: string, value: unknown, rulesRequired: boolean): Cause[] {
  const m = rec(value);
  if (!m) return rulesRequired ? [required(p, '')] : [];
  const out: Cause[] = [];
  out.push(...validateLabelSelector(m.namespaceSelector, child(p, 'namespaceSelector')));
  out.push(...validateLabelSelector(m.objectSelector, child(p, 'objectSelector')));
  out.push(...oneOfOptional(child(p, 'matchPolicy'), m.matchPolicy, MATCH_POLICIES));
  const rules = recs(m.resourceRules);
  if (rulesRequired && rules.length === 0) out.push(required(child(p, 'resourceRules'), ''));
  for (const field of ['resourceRules', 'excludeResourceRules']) {
    recs(m[field]).forEach((r, i) => out.push(...validateRule(index(child(p, field), i), r)));
  }
  return out;
}

function compileCause(path: string, expr: string): Cause[] {
  const err = policyCompileError(expr);
  return err ? [invalid(path, expr, err)] : [];
}

function validateValidations(p: string, list: unknown): Cause[] {
  const out: Cause[] = [];
  recs(list).forEach((v, i) => {
    const vp = index(p, i);
    const expr = str(v.expression) ?? '';
    const msg = str(v.message) ?? '';
    if (expr.trim() === '') out.push(required(child(vp, 'expression'), 'expression is not specified'));
    else out.push(...compileCause(child(vp, 'expression'), expr));
    if (msg.includes('\n')) out.push(invalid(child(vp, 'message'), msg, 'message must not contain line breaks'));
    else if (expr.includes('\n') && msg === '') out.push(required(child(vp, 'message'), 'message must be specified if expression contains line breaks'));
    const me = str(v.messageExpression);
    if (me !== undefined && me.trim() === '') out.push(required(child(vp, 'messageExpression'), 'messageExpression must be non-empty if specified'));
    else if (me !== undefined) out.push(...compileCause(child(vp, 'messageExpression'), me));
    out.push(...oneOfOptional(child(vp, 'reason'), v.reason, REASONS));
  });
  return out;
}

export function validateVariables(p: string, list: unknown, compile: (expr: string) => string | undefined = policyCompileError): Cause[] {
  const out: Cause[] = [];
  const seen = new Set<string>();
  recs(list).forEach((v, i) => {
    const vp = index(p, i);
    const name = str(v.name) ?? '';
    if (name === '') out.push(required(child(vp, 'name'), 'name is not specified'));
    else if (!CEL_IDENT.test(name)) out.push(invalid(child(vp, 'name'), name, 'name is not a valid CEL identifier'));
    if (name !== '' && seen.has(name)) out.push(duplicate(child(vp, 'name'), name));
    seen.add(name);
    const expr = str(v.expression) ?? '';
    const err = expr.trim() === '' ? undefined : compile(expr);
    if (expr.trim() === '') out.push(required(child(vp, 'expression'), 'expression is not specified'));
    else if (err) out.push(invalid(child(vp, 'expression'), expr, err));
  });
  return out;
}

function validateAuditAnnotations(p: string, list: unknown, policy: string): Cause[] {
  const out: Cause[] = [];
  const seen = new Set<string>();
  recs(list).forEach((a, i) => {
    const ap = index(p, i);
    const key = str(a.key) ?? '';
    if (key === '') out.push(required(child(ap, 'key'), ''));
    else out.push(...qualifiedName(child(ap, 'key'), `${policy}/${key}`));
    if (key !== '' && seen.has(key)) out.push(duplicate(child(ap, 'key'), key));
    seen.add(key);
    const expr = str(a.valueExpression) ?? '';
    if (expr.trim() === '') out.push(required(child(ap, 'valueExpression'), 'valueExpression is not specified'));
    else out.push(...compileCause(child(ap, 'valueExpression'), expr));
  });
  return out;
}

export function validateParamKind(value: unknown): Cause[] {
  const pk = rec(value);
  if (!pk) return [];
  const out: Cause[] = [];
  if (!str(pk.apiVersion)) out.push(required('spec.paramKind.apiVersion', ''));
  else if (str(pk.apiVersion)!.split('/').length > 2) out.push(invalid('spec.paramKind.apiVersion', pk.apiVersion, 'must be a valid group/version'));
  if (!str(pk.kind)) out.push(required('spec.paramKind.kind', ''));
  return out;
}

/** Upstream validateValidatingAdmissionPolicySpec. */
function validatePolicy(o: KObject): Cause[] {
  const spec = rec(o.spec) ?? {};
  const out: Cause[] = validateParamKind(spec.paramKind);
  out.push(...validateMatchResources('spec.matchConstraints', spec.matchConstraints, true));
  if (recs(spec.validations).length === 0 && recs(spec.auditAnnotations).length === 0) {
    out.push(required('spec.validations', 'validations or auditAnnotations must contain at least one item'));
  }
  out.push(...validateValidations('spec.validations', spec.validations));
  out.push(...oneOfOptional('spec.failurePolicy', spec.failurePolicy, FAILURE_POLICIES));
  out.push(...validateAuditAnnotations('spec.auditAnnotations', spec.auditAnnotations, o.metadata.name ?? ''));
  out.push(...validateMatchConditions('spec.matchConditions', spec.matchConditions, policyCompileError));
  out.push(...validateVariables('spec.variables', spec.variables));
  return out;
}

/** Upstream validateParamRef (bindings of both policy kinds). */
export function validateParamRef(value: unknown): Cause[] {
  const ref = rec(value);
  if (!ref) return [];
  const out: Cause[] = [];
  const hasName = !!str(ref.name);
  const hasSel = rec(ref.selector) !== undefined;
  if (hasName && hasSel) out.push(forbidden('spec.paramRef.name', 'name and selector are mutually exclusive'));
  if (!hasName && !hasSel) out.push(required('spec.paramRef', 'one of name or selector must be specified'));
  out.push(...validateLabelSelector(ref.selector, 'spec.paramRef.selector'));
  const nf = ref.parameterNotFoundAction;
  if (nf === undefined || nf === null) out.push(required('spec.paramRef.parameterNotFoundAction', ''));
  else if (!NOT_FOUND_ACTIONS.includes(str(nf) ?? '')) out.push(notSupported('spec.paramRef.parameterNotFoundAction', nf, NOT_FOUND_ACTIONS));
  return out;
}

/** Upstream validateValidatingAdmissionPolicyBindingSpec. */
function validateBinding(o: KObject): Cause[] {
  const spec = rec(o.spec) ?? {};
  const out: Cause[] = [];
  if (!str(spec.policyName)) out.push(required('spec.policyName', ''));
  out.push(...validateParamRef(spec.paramRef));
  out.push(...validateMatchResources('spec.matchResources', spec.matchResources, false));
  const actions = strs(spec.validationActions);
  if (actions.length === 0) out.push(required('spec.validationActions', 'at least one validation action is required'));
  const seen = new Set<string>();
  actions.forEach((a, i) => {
    if (seen.has(a)) out.push(duplicate(index('spec.validationActions', i), a));
    seen.add(a);
    if (!ACTIONS.includes(a)) out.push(notSupported(index('spec.validationActions', i), a, ACTIONS));
  });
  if (seen.has('Deny') && seen.has('Warn')) {
    out.push(invalid('spec.validationActions', actions, 'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)'));
  }
  return out;
}

export function makeValidatingAdmissionPolicyType(now: Now = Date.now): ResourceType {
  return {
    group: 'admissionregistration.svc.io',
    version: 'v1',
    resource: 'validatingadmissionpolicies',
    singular: 'validatingadmissionpolicy',
    kind: 'ValidatingAdmissionPolicy',
    listKind: 'ValidatingAdmissionPolicyList',
    namespaced: false,
    categories: ['api-extensions'],
    schema: validatingAdmissionPolicySchema,
    hasStatus: true,
    specFields: ['spec'],
    tableColumns: policyColumns('Validations', 'validations', now),
    defaults: defaultPolicy,
    validate: validatePolicy,
  };
}

export function makeValidatingAdmissionPolicyBindingType(now: Now = Date.now): ResourceType {
  return {
    group: 'admissionregistration.svc.io',
    version: 'v1',
    resource: 'validatingadmissionpolicybindings',
    singular: 'validatingadmissionpolicybinding',
    kind: 'ValidatingAdmissionPolicyBinding',
    listKind: 'ValidatingAdmissionPolicyBindingList',
    namespaced: false,
    categories: ['api-extensions'],
    schema: validatingAdmissionPolicyBindingSchema,
    hasStatus: false,
    specFields: ['spec'],
    tableColumns: bindingColumns(now),
    defaults: defaultBinding,
    validate: validateBinding,
  };
}
