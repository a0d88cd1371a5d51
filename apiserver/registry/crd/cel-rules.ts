import type { Cause } from '../../api/errors';
import { CelCompileError, CelEnvironment, CelEvalError, type CelProgram } from '../../cel/program';
import { CostMeter, DEFAULT_PER_CALL_LIMIT } from '../../cel/cost';
import { celOptional, optionalFuncs } from '../../cel/optional';
import { canonicalJson, isJsonObject } from '../../patch/json-value';
import { fieldError } from '../../api/errors';
import { forbidden, invalid, required } from '../field-errors';

/**
 * x-kubernetes-validations of a CRD version's schema (upstream's CEL validation rules): each
 * rule compiled once per CRD version, evaluated with `self` bound to the value at its node and,
 * for transition rules (those reading `oldSelf`), `oldSelf` the value the update replaces (only
 * where the old value correlates: object fields, map keys, listType map items by key; never on
 * create). A false result is a cause at the node's path (plus fieldPath) with message,
 * messageExpression's result or `failed rule: <rule>`, and the reason given (FieldValueInvalid by
 * default). Budgets, as upstream's: each evaluation at most 1,000,000 cost units (PerCallLimit),
 * one object's evaluations together at most 10,000,000 (RuntimeCELCostBudget).
 * optionalOldSelf: the transition rule runs on create and where no old value correlates too, with
 * oldSelf a CEL optional (optional.none() then, else optional.of the old value), as upstream.
 */

type Json = Record<string, unknown>;

/** Upstream's RuntimeCELCostBudget: every rule of one object together. */
export const OBJECT_COST_BUDGET = 10_000_000;

interface Rule {
  program: CelProgram;
  source: string;
  transition: boolean;
  /** optionalOldSelf: oldSelf is an optional and the rule runs without an old value too. */
  optionalOldSelf: boolean;
  message?: string;
  messageExpression?: CelProgram;
  reason: string;
  fieldPath?: string;
}

/** A schema node's rules and its children's, mirroring the schema. */
export interface CompiledNode {
  rules: Rule[];
  type: string;
  properties?: Record<string, CompiledNode>;
  items?: CompiledNode;
  additional?: CompiledNode;
  /** listType map keys (items correlate with the old list by them). */
  mapKeys?: string[];
}

let env: CelEnvironment | undefined;
const celEnv = () => (env ??= new CelEnvironment({ variables: ['self', 'oldSelf'], perCallLimit: DEFAULT_PER_CALL_LIMIT, funcs: optionalFuncs }));

const REASONS = ['FieldValueInvalid', 'FieldValueForbidden', 'FieldValueRequired', 'FieldValueDuplicate'];

/** Whether the schema has any x-kubernetes-validations (others are not compiled nor walked). */
export function hasRules(s: unknown): boolean {
  if (Array.isArray(s)) return s.some(hasRules);
  if (!isJsonObject(s)) return false;
  if (Array.isArray(s['x-kubernetes-validations']) && s['x-kubernetes-validations'].length > 0) return true;
  return Object.values(s).some(hasRules);
}

/** Compiles the rules of a schema; errors are causes at the CRD's schema path (e.g. spec.versions[0].schema.openAPIV3Schema). */
export function compileRules(schema: Json, path: string, errors: Cause[]): CompiledNode {
  const node: CompiledNode = { rules: [], type: typeof schema.type === 'string' ? schema.type : schema['x-kubernetes-int-or-string'] === true ? 'int-or-string' : 'any' };
  const list = Array.isArray(schema['x-kubernetes-validations']) ? schema['x-kubernetes-validations'] : [];
  list.forEach((r, i) => {
    const at = `${path}.x-kubernetes-validations[${i}]`;
    if (!isJsonObject(r) || typeof r.rule !== 'string' || !r.rule) return void errors.push(required(`${at}.rule`));
    const rule = compileOne(r, at, errors);
    if (rule) node.rules.push(rule);
  });
  if (isJsonObject(schema.properties)) {
    node.properties = {};
    for (const [k, v] of Object.entries(schema.properties)) if (isJsonObject(v)) node.properties[k] = compileRules(v, `${path}.properties[${k}]`, errors);
  }
  if (isJsonObject(schema.items)) node.items = compileRules(schema.items, `${path}.items`, errors);
  if (isJsonObject(schema.additionalProperties)) node.additional = compileRules(schema.additionalProperties, `${path}.additionalProperties`, errors);
  const keys = schema['x-kubernetes-list-map-keys'];
  if (schema['x-kubernetes-list-type'] === 'map' && Array.isArray(keys)) node.mapKeys = keys.filter((k): k is string => typeof k === 'string');
  return node;
}

function compileOne(r: Json, at: string, errors: Cause[]): Rule | undefined {
  const source = r.rule as string;
  let program: CelProgram;
  try {
    program = celEnv().compile(source);
  } catch (err) {
    if (!(err instanceof CelCompileError)) throw err;
    errors.push(invalid(`${at}.rule`, source, err.message));
    return undefined;
  }
  const reason = typeof r.reason === 'string' ? r.reason : 'FieldValueInvalid';
  if (!REASONS.includes(reason)) errors.push(fieldError(`${at}.reason`, `Unsupported value: ${JSON.stringify(reason)}: supported values: ${REASONS.map((x) => JSON.stringify(x)).join(', ')}`, 'FieldValueNotSupported'));
  const transition = program.variables.has('oldSelf');
  const optionalOldSelf = r.optionalOldSelf === true;
  // Upstream: only a rule reading oldSelf may set it (false included).
  if (r.optionalOldSelf !== undefined && r.optionalOldSelf !== null && !transition) errors.push(invalid(`${at}.optionalOldSelf`, r.optionalOldSelf, 'may not be set if oldSelf is not used in rule'));
  let messageExpression: CelProgram | undefined;
  if (typeof r.messageExpression === 'string') {
    try {
      messageExpression = celEnv().compile(r.messageExpression);
    } catch (err) {
      if (!(err instanceof CelCompileError)) throw err;
      errors.push(invalid(`${at}.messageExpression`, r.messageExpression, err.message));
    }
  }
  if (r.fieldPath !== undefined && (typeof r.fieldPath !== 'string' || !r.fieldPath.startsWith('.'))) errors.push(invalid(`${at}.fieldPath`, r.fieldPath, 'fieldPath must be a valid path'));
  return {
    program,
    source,
    transition,
    optionalOldSelf,
    reason,
    ...(typeof r.message === 'string' ? { message: r.message } : {}),
    ...(messageExpression ? { messageExpression } : {}),
    ...(typeof r.fieldPath === 'string' ? { fieldPath: r.fieldPath } : {}),
  };
}

/** Evaluates every rule of node over obj's fields (old: the object an update replaces). */
export function evaluateRules(node: CompiledNode, obj: unknown, old: unknown): Cause[] {
  const out: Cause[] = [];
  const meter = new CostMeter(OBJECT_COST_BUDGET);
  try {
    if (isJsonObject(obj) && node.properties) {
      for (const [k, child] of Object.entries(node.properties)) {
        if (k === 'metadata' || k === 'apiVersion' || k === 'kind') continue;
        if (obj[k] !== undefined) walk(child, obj[k], isJsonObject(old) ? old[k] : undefined, k, out, meter);
      }
    }
    rules(node, obj, old, '', out, meter);
  } catch (err) {
    if (!(err instanceof BudgetExhausted)) throw err;
    out.push(invalid(err.path, err.type, 'validation failed due to running out of cost budget, no further validation rules will be run'));
  }
  return out;
}

class BudgetExhausted extends Error {
  constructor(
    readonly path: string,
    readonly type: string,
  ) {
    super('budget');
  }
}

function walk(node: CompiledNode, v: unknown, old: unknown, path: string, out: Cause[], meter: CostMeter): void {
  if (v === null || v === undefined) return;
  if (isJsonObject(v)) {
    const oldObj = isJsonObject(old) ? old : undefined;
    if (node.properties) {
      for (const [k, child] of Object.entries(node.properties)) if (v[k] !== undefined) walk(child, v[k], oldObj?.[k], `${path}.${k}`, out, meter);
    }
    if (node.additional) for (const [k, x] of Object.entries(v)) walk(node.additional, x, oldObj?.[k], `${path}[${k}]`, out, meter);
  } else if (Array.isArray(v) && node.items) {
    const oldList = Array.isArray(old) ? old : [];
    v.forEach((x, i) => walk(node.items!, x, node.mapKeys ? correlate(x, oldList, node.mapKeys) : undefined, `${path}[${i}]`, out, meter));
  }
  rules(node, v, old, path, out, meter);
}

/** The old item with the same list-map keys. */
function correlate(item: unknown, old: unknown[], keys: string[]): unknown {
  if (!isJsonObject(item)) return undefined;
  const id = canonicalJson(keys.map((k) => item[k] ?? null));
  return old.find((o) => isJsonObject(o) && canonicalJson(keys.map((k) => o[k] ?? null)) === id);
}

function rules(node: CompiledNode, v: unknown, old: unknown, path: string, out: Cause[], total: CostMeter): void {
  if (node.rules.length === 0 || v === undefined) return;
  const self = toCel(v, node);
  for (const r of node.rules) {
    if (r.transition && old === undefined && !r.optionalOldSelf) continue;
    const oldSelf = old === undefined ? undefined : toCel(old, node);
    const vars = r.transition ? { self, oldSelf: r.optionalOldSelf ? celOptional(oldSelf) : oldSelf } : { self };
    const call = new CostMeter(DEFAULT_PER_CALL_LIMIT);
    let result: unknown;
    try {
      result = r.program.evaluate(vars, call);
    } catch (err) {
      total.charge(Math.min(call.total, total.limit));
      if (!(err instanceof CelEvalError)) throw err;
      out.push(invalid(path || '<nil>', typeName(node), err.costExceeded ? `call cost exceeds limit for rule: ${r.source}` : err.message));
      continue;
    }
    try {
      total.charge(call.total);
    } catch {
      throw new BudgetExhausted(path, typeName(node));
    }
    if (result === true) continue;
    out.push(failure(r, vars, path, node));
  }
}

function failure(r: Rule, vars: Readonly<Record<string, unknown>>, path: string, node: CompiledNode): Cause {
  let message = r.message ?? `failed rule: ${r.source}`;
  if (r.messageExpression) {
    try {
      const m = r.messageExpression.evaluate(vars);
      if (typeof m === 'string' && m.trim() !== '' && !m.includes('\n')) message = m;
    } catch {
      // Upstream falls back to message (or the default) when messageExpression fails.
    }
  }
  const field = r.fieldPath ? `${path}${r.fieldPath}` : path;
  switch (r.reason) {
    case 'FieldValueForbidden':
      return forbidden(field, message);
    case 'FieldValueRequired':
      return required(field, message);
    case 'FieldValueDuplicate':
      return fieldError(field, `Duplicate value: ${JSON.stringify(typeName(node))}: ${message}`, 'FieldValueDuplicate');
    default:
      return invalid(field, typeName(node), message);
  }
}

function typeName(node: CompiledNode): string {
  return node.type === 'any' ? 'object' : node.type;
}

/** A JSON value as CEL sees it: integers of integer (and int-or-string) fields as CEL ints. */
function toCel(v: unknown, node: CompiledNode | undefined): unknown {
  if (typeof v === 'number') return (node?.type === 'integer' || node?.type === 'int-or-string') && Number.isInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map((x) => toCel(x, node?.items));
  if (isJsonObject(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = toCel(x, node?.properties?.[k] ?? node?.additional);
    return out;
  }
  return v;
}
