/**
 * A small wrapper over @bufbuild/cel for the expressions of the authentication configuration
 * (5.3), authorization matchConditions and admission policies: compile once (syntax, free
 * variables and function names checked up front, so a bad configuration is refused at load),
 * then evaluate many times under a cost budget (section 8).
 *
 * @bufbuild/cel has no cost tracking of its own. The budget is enforced by metering every
 * function call through a wrapping function resolver, and by rewriting the parsed expression so
 * each comprehension iteration and each list or map literal passes through a charging identity
 * function. Evaluation is synchronous, so one current meter per environment is enough.
 */
import type { CelEnv, CelInput, CelValue } from '@bufbuild/cel';
import type * as Cel from '@bufbuild/cel';
import { celExt, celLib, celRe2 } from './lazy';
import { escapeKeyFunc, objectLiteralsAsMaps } from './object-literals';
import { callCost, CostLimitExceeded, CostMeter, ITERATION_COST, LIST_LITERAL_COST, MAP_LITERAL_COST } from './cost';

type ParsedExpr = ReturnType<typeof Cel.parse>;
type Expr = ParsedExpr['expr'];
type FuncResolver = CelEnv['funcs'];
type FuncGroup = NonNullable<ReturnType<FuncResolver['find']>>;

/** Names of the charging identity functions the rewrite inserts; '@' keeps them out of reach of expression authors. */
const ITER_FN = '@svc_iter';
const LIST_FN = '@svc_list';
const MAP_FN = '@svc_map';

/** Operators the planner evaluates itself rather than through the function resolver. */
const PLANNER_OPERATORS = new Set(['_[_]', '_[?_]', '_?._', '_?_:_', '_&&_', '_||_', '@not_strictly_false', '__not_strictly_false__']);

export class CelCompileError extends Error {
  override readonly name = 'CelCompileError';
}

export class CelEvalError extends Error {
  override readonly name = 'CelEvalError';
  constructor(
    message: string,
    /** True when evaluation stopped because the cost budget ran out. */
    readonly costExceeded = false,
  ) {
    super(message);
  }
}

/** A plain JS rendering of a CEL result: celExt().strings, booleans, numbers, null, arrays and objects. */
export type CelResultValue = string | number | boolean | null | CelResultValue[] | { [k: string]: CelResultValue } | Uint8Array;

export interface CelProgram {
  readonly source: string;
  /** The variables the expression actually reads (e.g. claims.email_verified checks look for "claims"). */
  readonly variables: ReadonlySet<string>;
  /** Evaluates with the given variables; throws CelEvalError on an evaluation error or when the budget is exceeded. */
  evaluate(vars: Readonly<Record<string, unknown>>, meter?: CostMeter): CelResultValue;
}

export interface CelEnvironmentOptions {
  /** Variable names expressions may use (e.g. ["claims"] or ["user"]). */
  variables: readonly string[];
  /** Per-evaluation cost limit when evaluate() gets no meter; default upstream's 1,000,000. */
  perCallLimit?: number;
  /** Functions beyond the standard library and the strings extension (e.g. `optionalFuncs()`). */
  funcs?: () => readonly Cel.CelFunc[];
  /**
   * Object construction as MutatingAdmissionPolicy expressions write it (upstream's
   * `Object{spec: Object.spec{...}}` and `JSONPatch{op: ..., path: ...}`): such literals are
   * built as plain maps keyed by field name (see object-literals.ts); the `jsonpatch.escapeKey`
   * function is offered too.
   */
  objectLiterals?: boolean;
}

/**
 * One compilation environment: the standard library plus the strings extension (the
 * Kubernetes CEL libraries' string functions: lowerAscii, split, join, replace, indexOf, ...).
 */
export class CelEnvironment {
  private readonly base: CelEnv;
  private readonly metered: CelEnv;
  private current: CostMeter | undefined;
  private readonly vars: ReadonlySet<string>;

  constructor(private readonly opts: CelEnvironmentOptions) {
    this.vars = new Set(opts.variables);
    const identity = (name: string) => celLib().celFunc(name, [celLib().CelScalar.DYN], celLib().CelScalar.DYN, (v: CelValue) => v as CelInput);
    const extra = opts.objectLiterals ? [escapeKeyFunc()] : [];
    this.base = celLib().celEnv({ funcs: [...celExt().strings, ...(opts.funcs?.() ?? []), ...extra, identity(ITER_FN), identity(LIST_FN), identity(MAP_FN)] });
    this.metered = meteredEnv(this.base, () => this.current);
  }

  /** Parses and checks an expression; throws CelCompileError naming what is wrong. */
  compile(source: string): CelProgram {
    let parsed: ParsedExpr;
    try {
      parsed = celLib().parse(source);
    } catch (err) {
      throw new CelCompileError(`compilation failed: ${firstLine((err as Error).message)}`);
    }
    const used = new Set<string>();
    const state = { nextId: maxId(parsed.expr) + 1n };
    const literalProblem = this.opts.objectLiterals ? objectLiteralsAsMaps(parsed.expr, state) : undefined;
    if (literalProblem) throw new CelCompileError(`compilation failed: ${literalProblem}`);
    check(parsed.expr, new Set(), this.vars, used, this.base.funcs);
    instrument(parsed.expr, state);
    let run: (ctx: Record<string, CelInput>) => unknown;
    try {
      run = celLib().plan(this.metered, parsed.expr);
    } catch (err) {
      throw new CelCompileError(`compilation failed: ${firstLine((err as Error).message)}`);
    }
    return {
      source,
      variables: used,
      evaluate: (vars, meter) => this.run(run, vars, meter),
    };
  }

  private run(fn: (ctx: Record<string, CelInput>) => unknown, vars: Readonly<Record<string, unknown>>, meter?: CostMeter): CelResultValue {
    const m = meter ?? new CostMeter(this.opts.perCallLimit);
    const previous = this.current;
    this.current = m;
    let out: unknown;
    try {
      out = fn(vars as Record<string, CelInput>);
    } catch (err) {
      if (err instanceof CostLimitExceeded) throw new CelEvalError(err.message, true);
      throw new CelEvalError(`evaluation failed: ${(err as Error).message}`);
    } finally {
      this.current = previous;
    }
    if (celLib().isCelError(out)) {
      if (out.cause instanceof CostLimitExceeded) throw new CelEvalError(out.cause.message, true);
      throw new CelEvalError(out.message);
    }
    return toJs(out as CelValue);
  }
}

function firstLine(s: string): string {
  return s.split('\n')[0] ?? s;
}

/** An environment whose functions charge the current meter before running. */
function meteredEnv(base: CelEnv, meter: () => CostMeter | undefined): CelEnv {
  const groups = new Map<string, FuncGroup | undefined>();
  const wrap = (name: string, g: FuncGroup): FuncGroup => {
    const fixed = name === ITER_FN ? ITERATION_COST : name === LIST_FN ? LIST_LITERAL_COST : name === MAP_FN ? MAP_LITERAL_COST : undefined;
    return {
      name: g.name,
      [Symbol.iterator]: () => g[Symbol.iterator](),
      call(id, target, args) {
        meter()?.charge(fixed ?? callCost(name, target, args));
        if (name === 'matches') {
          const input = target !== undefined ? target : args[0];
          const pattern = target !== undefined ? args[0] : args[1];
          if (typeof input === 'string' && typeof pattern === 'string') return cachedMatch(pattern, input, () => g.call(id, target, args));
        }
        return g.call(id, target, args);
      },
    };
  };
  const funcs = {
    [Symbol.iterator]: () => base.funcs[Symbol.iterator](),
    find(name: string): FuncGroup | undefined {
      if (!groups.has(name)) {
        const g = base.funcs.find(name);
        groups.set(name, g ? wrap(name, g) : undefined);
      }
      return groups.get(name);
    },
  };
  // plan() reads only namespace, registry and funcs of the environment.
  return { namespace: base.namespace, registry: base.registry, variables: base.variables, funcs } as unknown as CelEnv;
}

/** Compiled matches() patterns: cel-go compiles a constant pattern once; @bufbuild/cel compiles on every call. */
const patterns = new Map<string, { test(s: string): boolean } | null>();
const MAX_PATTERNS = 1000;

/** matches() with the pattern compiled once; a pattern RE2 refuses goes to CEL's own call for its error. */
function cachedMatch(pattern: string, input: string, fallback: () => unknown): ReturnType<FuncGroup['call']> {
  let re = patterns.get(pattern);
  if (re === undefined) {
    try {
      re = celRe2().RE2JS.compile(pattern);
    } catch {
      re = null;
    }
    if (patterns.size >= MAX_PATTERNS) patterns.clear();
    patterns.set(pattern, re);
  }
  return re ? re.test(input) : (fallback() as ReturnType<FuncGroup['call']>);
}

function maxId(e: Expr | undefined): bigint {
  let max = 0n;
  walk(e, (n) => {
    if (n.id > max) max = n.id;
  });
  return max;
}

function walk(e: Expr | undefined, f: (e: Expr) => void): void {
  if (!e) return;
  f(e);
  const k = e.exprKind;
  switch (k.case) {
    case 'selectExpr':
      walk(k.value.operand, f);
      break;
    case 'callExpr':
      walk(k.value.target, f);
      k.value.args.forEach((a) => walk(a, f));
      break;
    case 'listExpr':
      k.value.elements.forEach((a) => walk(a, f));
      break;
    case 'structExpr':
      k.value.entries.forEach((en) => {
        if (en.keyKind.case === 'mapKey') walk(en.keyKind.value, f);
        walk(en.value, f);
      });
      break;
    case 'comprehensionExpr':
      walk(k.value.iterRange, f);
      walk(k.value.accuInit, f);
      walk(k.value.loopCondition, f);
      walk(k.value.loopStep, f);
      walk(k.value.result, f);
      break;
  }
}

/** A dotted name (a.b.c) for an identifier/select chain, as the planner resolves qualified function names. */
function qualifiedName(e: Expr | undefined): string | undefined {
  if (!e) return undefined;
  if (e.exprKind.case === 'identExpr') return e.exprKind.value.name;
  if (e.exprKind.case === 'selectExpr' && !e.exprKind.value.testOnly) {
    const q = qualifiedName(e.exprKind.value.operand);
    return q === undefined ? undefined : `${q}.${e.exprKind.value.field}`;
  }
  return undefined;
}

/** Rejects free identifiers that are not declared variables and calls of unknown functions (cel-go's "undeclared reference"). */
function check(e: Expr | undefined, scope: ReadonlySet<string>, vars: ReadonlySet<string>, used: Set<string>, funcs: FuncResolver): void {
  if (!e) return;
  const k = e.exprKind;
  switch (k.case) {
    case 'identExpr': {
      const name = k.value.name;
      if (scope.has(name)) return;
      if (!vars.has(name) && !TYPE_NAMES.has(name)) throw new CelCompileError(`compilation failed: undeclared reference to '${name}'`);
      used.add(name);
      return;
    }
    case 'selectExpr':
      return check(k.value.operand, scope, vars, used, funcs);
    case 'callExpr': {
      const fn = k.value.function;
      const q = qualifiedName(k.value.target);
      const qualifiedKnown = q !== undefined && !scope.has(q.split('.')[0]) && !vars.has(q.split('.')[0]) && funcs.find(`${q}.${fn}`) !== undefined;
      if (qualifiedKnown) {
        k.value.args.forEach((a) => check(a, scope, vars, used, funcs));
        return;
      }
      if (!PLANNER_OPERATORS.has(fn) && funcs.find(fn) === undefined) throw new CelCompileError(`compilation failed: undeclared reference to '${fn}'`);
      check(k.value.target, scope, vars, used, funcs);
      k.value.args.forEach((a) => check(a, scope, vars, used, funcs));
      return;
    }
    case 'listExpr':
      k.value.elements.forEach((a) => check(a, scope, vars, used, funcs));
      return;
    case 'structExpr':
      if (k.value.messageName !== '') throw new CelCompileError(`compilation failed: message construction (${k.value.messageName}) is not supported`);
      k.value.entries.forEach((en) => {
        if (en.keyKind.case === 'mapKey') check(en.keyKind.value, scope, vars, used, funcs);
        check(en.value, scope, vars, used, funcs);
      });
      return;
    case 'comprehensionExpr': {
      const c = k.value;
      check(c.iterRange, scope, vars, used, funcs);
      check(c.accuInit, scope, vars, used, funcs);
      const inner = new Set(scope);
      inner.add(c.iterVar);
      inner.add(c.accuVar);
      check(c.loopCondition, inner, vars, used, funcs);
      check(c.loopStep, inner, vars, used, funcs);
      const res = new Set(scope);
      res.add(c.accuVar);
      check(c.result, res, vars, used, funcs);
      return;
    }
    default:
      return;
  }
}

/** Type identifiers usable in expressions such as type(x) == list. */
const TYPE_NAMES = new Set(['bool', 'int', 'uint', 'double', 'string', 'bytes', 'list', 'map', 'null_type', 'type', 'dyn']);

/**
 * Wraps each comprehension's loop condition (one charge per iteration) and each list or map
 * literal written by the author in a charging identity call. The lists that the map and filter
 * macros build internally (accumulator init and the one-element list appended per step) are
 * left alone: the iteration charge covers them.
 */
function instrument(e: Expr | undefined, state: { nextId: bigint }, macroLists: Set<Expr> = new Set()): void {
  if (!e) return;
  const k = e.exprKind;
  switch (k.case) {
    case 'selectExpr':
      instrument(k.value.operand, state, macroLists);
      return;
    case 'callExpr':
      instrument(k.value.target, state, macroLists);
      k.value.args.forEach((a) => instrument(a, state, macroLists));
      return;
    case 'listExpr':
      k.value.elements.forEach((a) => instrument(a, state, macroLists));
      if (!macroLists.has(e)) wrapInPlace(e, LIST_FN, state);
      return;
    case 'structExpr':
      k.value.entries.forEach((en) => {
        if (en.keyKind.case === 'mapKey') instrument(en.keyKind.value, state, macroLists);
        instrument(en.value, state, macroLists);
      });
      wrapInPlace(e, MAP_FN, state);
      return;
    case 'comprehensionExpr': {
      const c = k.value;
      if (c.accuInit?.exprKind.case === 'listExpr') macroLists.add(c.accuInit);
      markAppendedLists(c.loopStep, c.accuVar, macroLists);
      instrument(c.iterRange, state, macroLists);
      instrument(c.accuInit, state, macroLists);
      instrument(c.loopCondition, state, macroLists);
      instrument(c.loopStep, state, macroLists);
      instrument(c.result, state, macroLists);
      if (c.loopCondition) wrapInPlace(c.loopCondition, ITER_FN, state);
      return;
    }
    default:
      return;
  }
}

/** Finds `accu + [x]` in a macro's loop step (also under the filter macro's conditional). */
function markAppendedLists(step: Expr | undefined, accu: string, out: Set<Expr>): void {
  if (!step || step.exprKind.case !== 'callExpr') return;
  const call = step.exprKind.value;
  if (call.function === '_?_:_') {
    call.args.forEach((a) => markAppendedLists(a, accu, out));
    return;
  }
  if (call.function === '_+_' && call.args.length === 2) {
    const [l, r] = call.args;
    if (l?.exprKind.case === 'identExpr' && l.exprKind.value.name === accu && r?.exprKind.case === 'listExpr') out.add(r);
  }
}

/** Turns node e into fn(<old e>), keeping e's id on the outer call so error positions stay right. */
function wrapInPlace(e: Expr, fn: string, state: { nextId: bigint }): void {
  const inner = { ...e, id: state.nextId++ } as Expr;
  (e as { exprKind: unknown }).exprKind = {
    case: 'callExpr',
    value: { $typeName: 'cel.expr.Expr.Call', function: fn, args: [inner] },
  };
}

/** CEL values as plain JS: int/uint become numbers, lists arrays, maps objects keyed by the string form of the key. */
export function toJs(v: CelValue): CelResultValue {
  if (v === null || typeof v === 'string' || typeof v === 'boolean' || typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof Uint8Array) return v;
  if (celLib().isCelUint(v)) return Number(v.value);
  if (celLib().isCelList(v)) return [...v].map((x) => toJs(x));
  if (celLib().isCelMap(v)) {
    const out: { [k: string]: CelResultValue } = {};
    for (const [k, x] of v) out[celLib().isCelUint(k) ? String(k.value) : String(k)] = toJs(x);
    return out;
  }
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- whatever else CEL returns (a type, a message) is printed as String() prints it
  return String(v);
}
