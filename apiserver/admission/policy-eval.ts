import { celInput, mutatingPolicyCelEnv, policyCelEnv, ProgramCache } from '../cel/admission-env';
import { CostMeter } from '../cel/cost';
import { CelCompileError, type CelResultValue } from '../cel/program';

/**
 * One evaluation of a ValidatingAdmissionPolicy for one binding and one parameter object (upstream
 * k8s.io/apiserver/pkg/admission/plugin/policy/validating): its variables, then its validations
 * and audit annotations, all under one runtime cost budget. The result lists failed validations
 * (with their message and reason) and evaluation errors; what they do (Deny, Warn, Audit,
 * failurePolicy) is the plugin's business.
 *
 * Where we differ: variables are evaluated in order up front rather than lazily, so a variable
 * whose evaluation fails is an error of the policy even if no expression reads it.
 */

type Rec = Record<string, unknown>;

/** Upstream's per-evaluation runtime budget of a policy (RuntimeCELCostBudget). */
export const POLICY_COST_BUDGET = 10_000_000;

export interface PolicyFailure {
  /** The validation's message (messageExpression, message, or `failed expression: <expr>`). */
  message: string;
  /** The status reason: Invalid unless the validation names another. */
  reason: string;
  /** Index in spec.validations (-1 for errors outside validations). */
  index: number;
  /** True when this is an evaluation error rather than a validation that evaluated to false. */
  error: boolean;
}

export interface PolicyOutcome {
  failures: PolicyFailure[];
  auditAnnotations: Record<string, string>;
}

/** The CEL variables of a request, before variables and params; already CEL input (celInput), converted once per request. */
export interface PolicyInputs {
  object: unknown;
  oldObject: unknown;
  request: unknown;
  namespaceObject: unknown;
}

const programs = new ProgramCache(policyCelEnv);
/** MutatingAdmissionPolicy expressions: the same variables, plus Object / JSONPatch literals. */
export const mutatingPrograms = new ProgramCache(mutatingPolicyCelEnv);

export function evaluate(source: string, vars: Rec, meter: CostMeter, cache: ProgramCache = programs): CelResultValue {
  const program = cache.get(source);
  if (program instanceof CelCompileError) throw program;
  return program.evaluate(vars, meter);
}

const usedVariables = new WeakMap<Rec, ReadonlySet<string>>();

/** The CEL variables any expression of the policy reads (compiled programs know theirs); per spec object, which the informer replaces on change. */
export function policyVariables(spec: Rec, cache: ProgramCache = programs): ReadonlySet<string> {
  let used = usedVariables.get(spec);
  if (!used) {
    const out = new Set<string>();
    const sources: unknown[] = [];
    for (const v of Array.isArray(spec.validations) ? (spec.validations as Rec[]) : []) sources.push(v.expression, v.messageExpression);
    for (const key of ['variables', 'matchConditions'] as const) for (const v of Array.isArray(spec[key]) ? (spec[key] as Rec[]) : []) sources.push(v.expression);
    for (const v of Array.isArray(spec.auditAnnotations) ? (spec.auditAnnotations as Rec[]) : []) sources.push(v.valueExpression);
    for (const m of Array.isArray(spec.mutations) ? (spec.mutations as Rec[]) : []) sources.push((m.applyConfiguration as Rec | undefined)?.expression, (m.jsonPatch as Rec | undefined)?.expression);
    for (const s of sources) {
      if (typeof s !== 'string') continue;
      const p = cache.get(s);
      if (!(p instanceof CelCompileError)) for (const name of p.variables) out.add(name);
    }
    used = out;
    usedVariables.set(spec, used);
  }
  return used;
}

/** A message expression's value when usable: a non-blank one-line string (upstream otherwise falls back to message). */
function messageFrom(source: string, vars: Rec, meter: CostMeter): string | undefined {
  try {
    const v = evaluate(source, vars, meter);
    return typeof v === 'string' && v.trim() !== '' && !v.includes('\n') ? v : undefined;
  } catch {
    return undefined;
  }
}

/** The variables of spec.variables, each able to read those before it. */
export function evaluateVariables(spec: Rec, base: Rec, meter: CostMeter, cache: ProgramCache = programs): Rec {
  const values: Rec = {};
  for (const v of Array.isArray(spec.variables) ? (spec.variables as Rec[]) : []) {
    const name = typeof v.name === 'string' ? v.name : '';
    const source = typeof v.expression === 'string' ? v.expression : '';
    try {
      values[name] = celInput(evaluate(source, { ...base, variables: values }, meter, cache));
    } catch (err) {
      throw new Error(`variable "${name}" failed: ${(err as Error).message}`, { cause: err });
    }
  }
  return values;
}

/** The policy's matchConditions with params: true (all hold), false (one is false), or the first error. */
export function policyConditionsHold(spec: Rec, inputs: PolicyInputs, params: unknown, cache: ProgramCache = programs): boolean | Error {
  const conditions = Array.isArray(spec.matchConditions) ? (spec.matchConditions as Rec[]) : [];
  if (conditions.length === 0) return true;
  const vars: Rec = { ...inputs, params: celInput(params ?? null), variables: {} };
  const meter = new CostMeter(POLICY_COST_BUDGET);
  let failure: Error | undefined;
  for (const c of conditions) {
    try {
      const v = evaluate(typeof c.expression === 'string' ? c.expression : '', vars, meter, cache);
      if (v === false) return false;
      if (v !== true) throw new Error('the expression did not evaluate to a bool');
    } catch (err) {
      failure ??= new Error(`failed to evaluate match condition "${String(c.name)}": ${(err as Error).message}`);
    }
  }
  return failure ?? true;
}

/** Runs variables, validations and audit annotations of one (policy, binding, param) evaluation. */
export function evaluatePolicy(spec: Rec, inputs: PolicyInputs, params: unknown): PolicyOutcome {
  const meter = new CostMeter(POLICY_COST_BUDGET);
  const base: Rec = { ...inputs, params: celInput(params ?? null) };
  const out: PolicyOutcome = { failures: [], auditAnnotations: {} };
  let vars: Rec;
  try {
    vars = { ...base, variables: evaluateVariables(spec, base, meter) };
  } catch (err) {
    out.failures.push({ message: (err as Error).message, reason: 'Invalid', index: -1, error: true });
    return out;
  }
  const validations = Array.isArray(spec.validations) ? (spec.validations as Rec[]) : [];
  validations.forEach((v, index) => {
    const source = typeof v.expression === 'string' ? v.expression : '';
    const reason = typeof v.reason === 'string' && v.reason !== '' ? v.reason : 'Invalid';
    let result: CelResultValue;
    try {
      result = evaluate(source, vars, meter);
    } catch (err) {
      out.failures.push({ message: `expression '${source}' resulted in error: ${(err as Error).message}`, reason, index, error: true });
      return;
    }
    if (result === true) return;
    if (result !== false) {
      out.failures.push({ message: `expression '${source}' resulted in error: the expression did not evaluate to a bool`, reason, index, error: true });
      return;
    }
    const fromExpression = typeof v.messageExpression === 'string' ? messageFrom(v.messageExpression, vars, meter) : undefined;
    const message = fromExpression ?? (typeof v.message === 'string' && v.message !== '' ? v.message : `failed expression: ${source.trim()}`);
    out.failures.push({ message, reason, index, error: false });
  });
  for (const a of Array.isArray(spec.auditAnnotations) ? (spec.auditAnnotations as Rec[]) : []) {
    try {
      const value = evaluate(typeof a.valueExpression === 'string' ? a.valueExpression : '', vars, meter);
      if (typeof value === 'string' && value !== '') out.auditAnnotations[String(a.key)] = value.slice(0, 10 * 1024);
      else if (value !== null && typeof value !== 'string') throw new Error('valueExpression must evaluate to a string or null');
    } catch (err) {
      out.failures.push({ message: `audit annotation "${String(a.key)}": ${(err as Error).message}`, reason: 'Invalid', index: -1, error: true });
    }
  }
  return out;
}
