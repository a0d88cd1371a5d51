/**
 * The expression cost model of spec section 8, shaped after upstream's CEL cost tracker
 * (k8s.io/apiserver/pkg/cel and cel-go's runtime cost): simple operations cost 1, a list literal
 * has base cost 40 (map literal 30), string and list work costs a tenth of the sizes involved,
 * and regular expressions cost the length of the pattern times the length of the input
 * (upstream's factors: ceil(0.25 × pattern) × ceil(0.1 × input)).
 */

/** Upstream's per-expression runtime limit (apiserver cel.PerCallLimit). */
export const DEFAULT_PER_CALL_LIMIT = 1_000_000;

export const LIST_LITERAL_COST = 40;
export const MAP_LITERAL_COST = 30;
export const ITERATION_COST = 1;

/** Thrown (inside evaluation) when an expression spends more than its budget; the evaluator reports it as an error. */
export class CostLimitExceeded extends Error {
  constructor(readonly limit: number) {
    super(`operation cancelled: actual cost limit exceeded (limit ${limit})`);
  }
}

/**
 * Running cost of one evaluation, or of several evaluations sharing a total budget (some
 * resources have a total over all their rules, section 8).
 */
export class CostMeter {
  private spent = 0;
  constructor(readonly limit: number = DEFAULT_PER_CALL_LIMIT) {}

  /** Adds cost; throws CostLimitExceeded once the total passes the limit. */
  charge(n: number): void {
    this.spent += n;
    if (this.spent > this.limit) throw new CostLimitExceeded(this.limit);
  }

  /** Cost spent so far. */
  get total(): number {
    return this.spent;
  }
}

/** Size in cost units of one argument: characters of a string, bytes, or elements of a list or map. */
export function sizeOf(v: unknown): number {
  if (typeof v === 'string') return v.length;
  if (v instanceof Uint8Array) return v.length;
  if (typeof v === 'object' && v !== null && 'size' in v && typeof (v).size === 'number') return (v as { size: number }).size;
  return 0;
}

/** Functions whose cost does not depend on argument sizes beyond the base cost of 1. */
const CONSTANT_COST = new Set(['size', '_<_', '_<=_', '_>_', '_>=_', '!_', '-_', 'int', 'uint', 'double', 'bool', 'type', 'dyn', 'duration', 'timestamp', 'has']);

/** Cost of one function call with its evaluated target and arguments. */
export function callCost(name: string, target: unknown, args: readonly unknown[]): number {
  if (name === 'matches') {
    const input = target !== undefined ? target : args[0];
    const pattern = target !== undefined ? args[0] : args[1];
    return 1 + Math.ceil(0.25 * sizeOf(pattern)) * Math.ceil(0.1 * sizeOf(input));
  }
  if (CONSTANT_COST.has(name)) return 1;
  let size = sizeOf(target);
  for (const a of args) size += sizeOf(a);
  return 1 + Math.ceil(0.1 * size);
}
