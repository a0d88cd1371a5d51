import type { Cause } from '../../api/errors';
import { validateIndexesFormat } from '../../api/job-indexes';
import { CONDITION_STATUSES, nonNegative, qualifiedName } from '../common-validation';
import { child, duplicate, index, invalid, notSupported, required, tooLong, tooMany } from '../field-errors';
import { arr, num, rec, recs, str } from '../obj-access';
import { EXIT_CODE_OPERATORS, POD_FAILURE_POLICY_ACTIONS } from './job-schema';

/** Upstream's validation of a Job's podFailurePolicy and successPolicy (pkg/apis/batch/validation). */

const MAX_RULES = 20;
const MAX_EXIT_CODE_VALUES = 255;
const MAX_CONDITION_PATTERNS = 20;
const MAX_SUCCEEDED_INDEXES_LENGTH = 64 * 1024;

const quoted = (vals: readonly string[]) => `[${vals.map((v) => JSON.stringify(v)).join(' ')}]`;

function containerNames(spec: Record<string, unknown>): Set<string> {
  const podSpec = rec(rec(spec.template)?.spec) ?? {};
  return new Set([...recs(podSpec.containers), ...recs(podSpec.initContainers)].map((c) => str(c.name) ?? ''));
}

function onExitCodes(req: Record<string, unknown>, path: string, names: Set<string>): Cause[] {
  const out: Cause[] = [];
  const op = req.operator;
  const opPath = child(path, 'operator');
  if (op === undefined || op === null || op === '') out.push(required(opPath, `valid values: ${quoted(EXIT_CODE_OPERATORS)}`));
  else if (typeof op !== 'string' || !EXIT_CODE_OPERATORS.includes(op)) out.push(notSupported(opPath, op, EXIT_CODE_OPERATORS));
  const name = req.containerName;
  if (typeof name === 'string' && !names.has(name)) out.push(invalid(child(path, 'containerName'), name, 'must be one of the container or initContainer names in the pod template'));
  const valuesPath = child(path, 'values');
  const values = arr(req.values).filter((v): v is number => typeof v === 'number');
  if (values.length === 0) return [...out, invalid(valuesPath, req.values ?? [], 'at least one value is required')];
  if (values.length > MAX_EXIT_CODE_VALUES) return [...out, tooMany(valuesPath, values.length, MAX_EXIT_CODE_VALUES)];
  const seen = new Set<number>();
  let ordered = true;
  values.forEach((v, j) => {
    if (op === 'In' && v === 0) out.push(invalid(index(valuesPath, j), v, 'must not be 0 for the In operator'));
    if (seen.has(v)) out.push(duplicate(index(valuesPath, j), v));
    seen.add(v);
    if (j > 0 && values[j - 1] > v) ordered = false;
  });
  if (!ordered) out.push(invalid(valuesPath, values, 'must be ordered'));
  return out;
}

function onPodConditions(patterns: Record<string, unknown>[], path: string): Cause[] {
  const out: Cause[] = [];
  if (patterns.length > MAX_CONDITION_PATTERNS) out.push(tooMany(path, patterns.length, MAX_CONDITION_PATTERNS));
  patterns.forEach((p, j) => {
    const pp = index(path, j);
    out.push(...qualifiedName(child(pp, 'type'), str(p.type) ?? ''));
    const status = p.status;
    if (status === undefined || status === null || status === '') out.push(required(child(pp, 'status'), `valid values: ${quoted(CONDITION_STATUSES)}`));
    else if (typeof status !== 'string' || !CONDITION_STATUSES.includes(status)) out.push(notSupported(child(pp, 'status'), status, CONDITION_STATUSES));
  });
  return out;
}

function failurePolicyRule(spec: Record<string, unknown>, rule: Record<string, unknown>, path: string, names: Set<string>): Cause[] {
  const out: Cause[] = [];
  const action = rule.action;
  const actionPath = child(path, 'action');
  if (action === undefined || action === null || action === '') out.push(required(actionPath, `valid values: ${quoted(POD_FAILURE_POLICY_ACTIONS)}`));
  else if (action === 'FailIndex') {
    if (spec.backoffLimitPerIndex === undefined || spec.backoffLimitPerIndex === null) out.push(invalid(actionPath, action, 'requires the backoffLimitPerIndex to be set'));
  } else if (typeof action !== 'string' || !POD_FAILURE_POLICY_ACTIONS.includes(action)) out.push(notSupported(actionPath, action, POD_FAILURE_POLICY_ACTIONS));
  const codes = rec(rule.onExitCodes);
  const conditions = recs(rule.onPodConditions);
  if (codes) out.push(...onExitCodes(codes, child(path, 'onExitCodes'), names));
  if (conditions.length > 0) out.push(...onPodConditions(conditions, child(path, 'onPodConditions')));
  if (codes && conditions.length > 0) out.push(invalid(path, '', 'specifying both OnExitCodes and OnPodConditions is not supported'));
  if (!codes && conditions.length === 0) out.push(invalid(path, '', 'specifying one of OnExitCodes and OnPodConditions is required'));
  return out;
}

/** Upstream validatePodFailurePolicy. */
export function validatePodFailurePolicy(spec: Record<string, unknown>, path: string): Cause[] {
  const rules = recs(rec(spec.podFailurePolicy)?.rules);
  const rulesPath = child(path, 'rules');
  const out: Cause[] = [];
  if (rules.length > MAX_RULES) out.push(tooMany(rulesPath, rules.length, MAX_RULES));
  const names = containerNames(spec);
  rules.forEach((r, i) => out.push(...failurePolicyRule(spec, r, index(rulesPath, i), names)));
  return out;
}

/** Upstream validateSuccessPolicy (Indexed Jobs only). */
export function validateSuccessPolicy(spec: Record<string, unknown>, path: string): Cause[] {
  const policy = rec(spec.successPolicy) ?? {};
  const rules = recs(policy.rules);
  const rulesPath = child(path, 'rules');
  const out: Cause[] = [];
  if (spec.completionMode !== 'Indexed') out.push(invalid(path, policy, 'requires indexed completion mode'));
  if (rules.length === 0) out.push(required(rulesPath, 'at least one rule must be specified when the successPolicy is specified'));
  if (rules.length > MAX_RULES) out.push(tooMany(rulesPath, rules.length, MAX_RULES));
  const completions = num(spec.completions) ?? 0;
  rules.forEach((rule, i) => {
    const rp = index(rulesPath, i);
    const indexes = rule.succeededIndexes;
    const count = rule.succeededCount;
    if ((count === undefined || count === null) && (indexes === undefined || indexes === null)) out.push(required(rp, 'at least one of succeededCount or succeededIndexes must be specified'));
    let total = 0;
    if (typeof indexes === 'string') {
      const ip = child(rp, 'succeededIndexes');
      if (indexes.length > MAX_SUCCEEDED_INDEXES_LENGTH) out.push(tooLong(ip, MAX_SUCCEEDED_INDEXES_LENGTH));
      const parsed = validateIndexesFormat(indexes, completions);
      if ('error' in parsed) out.push(invalid(ip, indexes, `error parsing succeededIndexes: ${parsed.error}`));
      else total = parsed.total;
    }
    if (typeof count === 'number') {
      const cp = child(rp, 'succeededCount');
      out.push(...nonNegative(cp, count));
      if (count > completions) out.push(invalid(cp, count, `must be less than or equal to ${completions} (the number of specified completions)`));
      if (typeof indexes === 'string' && count > total) out.push(invalid(cp, count, `must be less than or equal to ${total} (the number of indexes in the specified succeededIndexes field)`));
    }
  });
  return out;
}
