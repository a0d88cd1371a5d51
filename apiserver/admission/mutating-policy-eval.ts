import type { Schema } from '../api/schema';
import { isObject, type KObject } from '../api/types';
import { mergeValues } from '../apply/merge';
import { isAtomicContainer } from '../apply/typed';
import { celInput } from '../cel/admission-env';
import { CostMeter } from '../cel/cost';
import { applyJsonPatch } from '../patch/json-patch';
import { evaluate, evaluateVariables, mutatingPrograms, POLICY_COST_BUDGET, type PolicyInputs } from './policy-eval';

/**
 * One evaluation of a MutatingAdmissionPolicy for one binding and one parameter object (upstream
 * k8s.io/apiserver/pkg/admission/plugin/policy/mutating and its patch package): the mutations in
 * order, each seeing the object as the ones before left it, all under one runtime cost budget.
 *
 * - ApplyConfiguration: the expression's Object{...} is merged into the object with
 *   structured-merge-diff's merge (apply/merge.ts, the same merge as server-side apply, without
 *   field ownership); it may not set atomic lists, maps or structs (upstream refuses them: an
 *   atomic value would be replaced whole, dropping what the configuration does not name).
 * - JSONPatch: the expression's list of JSONPatch{op, path, from, value} is applied as RFC 6902.
 *
 * Errors are returned with upstream's wording; what they do (failurePolicy) is the plugin's business.
 */

type Rec = Record<string, unknown>;

export class MutationError extends Error {}

/** Upstream's findAtomics: the paths where an apply configuration sets an atomic container. */
export function atomicPaths(v: unknown, s: Schema | undefined, path = ''): string[] {
  if (!s || v === null || typeof v !== 'object') return [];
  if (isAtomicContainer(s)) return [path];
  const out: string[] = [];
  if (s.type === 'object' && isObject(v)) {
    for (const [k, x] of Object.entries(v)) out.push(...atomicPaths(x, s.properties[k], `${path}.${k}`));
  } else if (s.type === 'map' && isObject(v)) {
    for (const [k, x] of Object.entries(v)) out.push(...atomicPaths(x, s.values, `${path}[${JSON.stringify(k)}]`));
  } else if (s.type === 'array' && Array.isArray(v)) {
    v.forEach((x, i) => out.push(...atomicPaths(x, s.items, `${path}[${i}]`)));
  }
  return out;
}

function applyConfiguration(object: KObject, result: unknown, schema: Schema): KObject {
  if (!isObject(result)) throw new MutationError(`unsupported return type from ApplyConfiguration expression: ${result === null ? 'null_type' : Array.isArray(result) ? 'list' : typeof result}`);
  const atomics = atomicPaths(result, schema);
  if (atomics.length > 0) throw new MutationError(`error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: ${atomics.join(', ')}`);
  // Upstream gives the configuration the object's apiVersion and kind before merging.
  const config = { ...result, apiVersion: object.apiVersion, kind: object.kind };
  try {
    return mergeValues(object, config, schema) as KObject;
  } catch (err) {
    throw new MutationError(`error applying patch: failed to merge patch: ${(err as Error).message}`);
  }
}

function jsonPatch(object: KObject, result: unknown): KObject {
  if (!Array.isArray(result)) throw new MutationError('type mismatch: JSONPatchType.expression should evaluate to array');
  const ops = result.map((op) => {
    if (!isObject(op)) throw new MutationError('type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch');
    return op;
  });
  try {
    return applyJsonPatch(object, ops) as KObject;
  } catch (err) {
    throw new MutationError(`JSON Patch: ${(err as Error).message}`);
  }
}

/** Runs the policy's mutations on a copy of object; returns the mutated object or throws (evaluation or patch errors). */
export function mutateWithPolicy(spec: Rec, object: KObject, schema: Schema, inputs: PolicyInputs, params: unknown): KObject {
  const meter = new CostMeter(POLICY_COST_BUDGET);
  let current = object;
  for (const m of Array.isArray(spec.mutations) ? (spec.mutations as Rec[]) : []) {
    // Each mutation sees the object (and request.object) as the mutations before it left it.
    const obj = current === object ? inputs.object : celInput(current);
    const request = isObject(inputs.request) && current !== object ? { ...inputs.request, object: obj } : inputs.request;
    const base: Rec = { ...inputs, object: obj, request, params: celInput(params ?? null) };
    const vars: Rec = { ...base, variables: evaluateVariables(spec, base, meter, mutatingPrograms) };
    const apply = m.patchType === 'ApplyConfiguration';
    const source = (apply ? (m.applyConfiguration as Rec | undefined)?.expression : (m.jsonPatch as Rec | undefined)?.expression) ?? '';
    const result = evaluate(typeof source === 'string' ? source : '', vars, meter, mutatingPrograms);
    current = apply ? applyConfiguration(current, result, schema) : jsonPatch(current, result);
  }
  return current;
}
