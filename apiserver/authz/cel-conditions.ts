import type { CelEnv, CelInput } from '@bufbuild/cel';
import type * as Cel from '@bufbuild/cel';
import { celExt, celLib } from '../cel/lazy';

/**
 * matchConditions of an authorization webhook (A.3): CEL boolean expressions over `request` (a
 * SubjectAccessReviewSpec v1 as JSON). Compiled once when the configuration loads; at most 64;
 * each must stay within a static cost budget (section 8: comparisons cost 1, a list literal 40,
 * regexes about length(regex) × length(input)) so that a configuration that could be expensive
 * per request is refused at load time rather than slowing every request.
 */

export const MAX_MATCH_CONDITIONS = 64;
/** Per-expression estimated cost limit (upstream's per-call limit for CEL in the API server). */
export const COST_LIMIT = 1_000_000;
/** Worst-case sizes assumed for the estimate: list lengths (groups, extra values) and string lengths in the request. */
export const ESTIMATE_LIST_SIZE = 1024;
export const ESTIMATE_STRING_SIZE = 1024;

export interface CompiledCondition {
  expression: string;
  cost: number;
  /** True or false, or throws Error (evaluation error or a non-boolean result). */
  eval(request: Record<string, unknown>): boolean;
}

type Node = { id?: bigint; exprKind: { case: string | undefined; value?: unknown } };

let env: CelEnv | undefined;
function celEnvironment(): CelEnv {
  env ??= celLib().celEnv({ funcs: celExt().strings });
  return env;
}

/** Compiles one expression; throws Error with the reason (syntax, unknown variable, cost over budget). */
export function compileCondition(expression: string): CompiledCondition {
  if (!expression.trim()) throw new Error('Required value');
  let parsed: ReturnType<typeof Cel.parse>;
  try {
    parsed = celLib().parse(expression);
  } catch (err) {
    throw new Error(`compilation failed: ${(err as Error).message}`, { cause: err });
  }
  const unknown = freeIdentifiers(parsed.expr as unknown as Node, new Set()).filter((n) => n !== 'request');
  if (unknown.length) throw new Error(`compilation failed: undeclared reference to '${unknown[0]}'`);
  const cost = estimateCost(parsed.expr);
  if (cost > COST_LIMIT) throw new Error(`estimated cost ${cost} exceeds the budget of ${COST_LIMIT}; simplify the expression`);
  const run = celLib().plan(celEnvironment(), parsed);
  return {
    expression,
    cost,
    eval(request) {
      // Plain JSON objects are CEL maps at run time; the input type only lists the library's own shapes.
      const v = run({ request: request as unknown as CelInput });
      if (celLib().isCelError(v)) throw new Error(v.message);
      if (typeof v !== 'boolean') throw new Error(`expression did not evaluate to a boolean`);
      return v;
    },
  };
}

function kids(n: Node): Node[] {
  const v = n.exprKind.value as Record<string, unknown> | undefined;
  if (!v) return [];
  switch (n.exprKind.case) {
    case 'selectExpr':
      return [v.operand as Node];
    case 'callExpr':
      return [...(v.target ? [v.target as Node] : []), ...(v.args as Node[])];
    case 'listExpr':
      return v.elements as Node[];
    case 'structExpr':
      return (v.entries as { mapKey?: Node; value: Node }[]).flatMap((e) => (e.mapKey ? [e.mapKey, e.value] : [e.value]));
    default:
      return [];
  }
}

/** Identifiers not bound by a comprehension. */
function freeIdentifiers(n: Node, bound: Set<string>): string[] {
  const v = n.exprKind.value as Record<string, unknown> | undefined;
  if (n.exprKind.case === 'identExpr') {
    const name = (v as { name: string }).name;
    return bound.has(name) ? [] : [name];
  }
  if (n.exprKind.case === 'comprehensionExpr' && v) {
    const inner = new Set([...bound, String(v.iterVar), String(v.accuVar)]);
    if (typeof v.iterVar2 === 'string' && v.iterVar2) inner.add(v.iterVar2);
    return [
      ...freeIdentifiers(v.iterRange as Node, bound),
      ...freeIdentifiers(v.accuInit as Node, bound),
      ...freeIdentifiers(v.loopCondition as Node, inner),
      ...freeIdentifiers(v.loopStep as Node, inner),
      ...freeIdentifiers(v.result as Node, inner),
    ];
  }
  return kids(n).flatMap((k) => freeIdentifiers(k, bound));
}

const STRING_SCAN = new Set(['contains', 'startsWith', 'endsWith', 'indexOf', 'lastIndexOf', 'lowerAscii', 'upperAscii', 'replace', 'split', 'trim', '_+_']);

/** Worst-case cost of an expression under the sizes above. */
export function estimateCost(n: Node): number {
  const v = n.exprKind.value as Record<string, unknown> | undefined;
  switch (n.exprKind.case) {
    case 'constExpr':
    case 'identExpr':
      return 1;
    case 'listExpr':
      return 40 + kids(n).reduce((s, k) => s + estimateCost(k), 0);
    case 'structExpr':
      return 30 + kids(n).reduce((s, k) => s + estimateCost(k), 0);
    case 'selectExpr':
      return 1 + estimateCost(v!.operand as Node);
    case 'callExpr': {
      const fn = String(v!.function);
      const args = kids(n);
      const sub = args.reduce((s, k) => s + estimateCost(k), 0);
      if (fn === 'matches') {
        // Linear-time regex engine: about length(regex) × length(input).
        const pattern = args[args.length - 1];
        const plen = pattern.exprKind.case === 'constExpr' ? String((pattern.exprKind.value as { constantKind: { value: unknown } }).constantKind.value).length : ESTIMATE_STRING_SIZE;
        return sub + plen * ESTIMATE_STRING_SIZE;
      }
      if (fn === '@in') return sub + ESTIMATE_LIST_SIZE;
      if (STRING_SCAN.has(fn)) return sub + Math.ceil(ESTIMATE_STRING_SIZE / 10);
      return sub + 1;
    }
    case 'comprehensionExpr': {
      const c = v as Record<string, Node>;
      const body = estimateCost(c.loopCondition) + estimateCost(c.loopStep);
      return estimateCost(c.iterRange) + estimateCost(c.accuInit) + ESTIMATE_LIST_SIZE * body + estimateCost(c.result);
    }
    default:
      return 1;
  }
}
