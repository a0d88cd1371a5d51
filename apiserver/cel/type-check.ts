import type * as Cel from '@bufbuild/cel';
import type { Schema } from '../api/schema';
import { celLib } from './lazy';

/**
 * Type checking of admission policy expressions against the schemas of the resources they will
 * see (upstream's ValidatingAdmissionPolicy type checker, k8s.io/apiserver/pkg/admission/plugin/
 * policy/validating/typechecking.go, which declares `object`, `oldObject` and `params` with the
 * kinds' OpenAPI schemas and compiles with cel-go's checker). @bufbuild/cel has no checker for
 * schema-typed variables, so this walks the parsed expression and follows field selections from
 * the typed variables: a field a struct does not declare, or a selection on a list or a scalar, is
 * reported in cel-go's wording and layout (`ERROR: <input>:line:col: undefined field 'x'` with the
 * source line and a caret). Index access, map values and the iteration variables of macros over
 * typed lists and maps are followed; anything else is dynamic and not checked (upstream also
 * checks function overloads and result types, which this does not).
 */

type Expr = ReturnType<typeof Cel.parse>['expr'];
type Scope = ReadonlyMap<string, Schema | undefined>;

interface Issue {
  offset: number;
  message: string;
}

/** CEL's name for what a schema types a value as (in "type 'list' does not support field selection"). */
function celTypeName(s: Schema): string {
  switch (s.type) {
    case 'array':
      return 'list';
    case 'integer':
      return 'int';
    case 'number':
      return 'double';
    case 'boolean':
      return 'bool';
    case 'date-time':
      return 'google.protobuf.Timestamp';
    default:
      return 'string';
  }
}

/** Whether a schema is dynamic to CEL (no declared structure): any, int-or-string. */
const isDyn = (s: Schema): boolean => s.type === 'any' || s.type === 'int-or-string';

class Checker {
  readonly issues: Issue[] = [];
  constructor(private readonly positions: Readonly<Record<string, number>>) {}

  private report(e: Expr, message: string): void {
    this.issues.push({ offset: this.positions[String(e.id)] ?? 0, message });
  }

  /** The schema of e's value when known (undefined: dynamic); reports bad selections on the way. */
  typeOf(e: Expr | undefined, scope: Scope): Schema | undefined {
    if (!e) return undefined;
    const k = e.exprKind;
    switch (k.case) {
      case 'identExpr':
        return scope.get(k.value.name);
      case 'selectExpr':
        return this.select(e, this.typeOf(k.value.operand, scope), k.value.field, k.value.testOnly);
      case 'callExpr': {
        const args = k.value.args.map((a) => this.typeOf(a, scope));
        this.typeOf(k.value.target, scope);
        if ((k.value.function === '_[_]' || k.value.function === '_[?_]') && args[0]) {
          const c = args[0];
          return c.type === 'array' ? c.items : c.type === 'map' ? c.values : undefined;
        }
        return undefined;
      }
      case 'listExpr':
        k.value.elements.forEach((x) => this.typeOf(x, scope));
        return undefined;
      case 'structExpr':
        k.value.entries.forEach((en) => {
          if (en.keyKind.case === 'mapKey') this.typeOf(en.keyKind.value, scope);
          this.typeOf(en.value, scope);
        });
        return undefined;
      case 'comprehensionExpr': {
        const c = k.value;
        const range = this.typeOf(c.iterRange, scope);
        this.typeOf(c.accuInit, scope);
        const inner = new Map(scope);
        // A list's elements, or a map's keys (strings, not checked further).
        inner.set(c.iterVar, range?.type === 'array' ? range.items : undefined);
        inner.set(c.accuVar, undefined);
        this.typeOf(c.loopCondition, inner);
        this.typeOf(c.loopStep, inner);
        const result = new Map(scope);
        result.set(c.accuVar, undefined);
        this.typeOf(c.result, result);
        return undefined;
      }
      default:
        return undefined;
    }
  }

  private select(e: Expr, on: Schema | undefined, field: string, testOnly: boolean): Schema | undefined {
    if (!on || isDyn(on)) return undefined;
    if (on.type === 'object') {
      const prop = on.properties[field];
      if (!prop) {
        this.report(e, `undefined field '${field}'`);
        return undefined;
      }
      return testOnly ? undefined : prop;
    }
    if (on.type === 'map') return testOnly ? undefined : on.values;
    this.report(e, `type '${celTypeName(on)}' does not support field selection`);
    return undefined;
  }
}

/** cel-go's rendering of one issue: position, message, the source line and a caret under the column. */
function render(source: string, issue: Issue): string {
  const before = source.slice(0, issue.offset);
  const line = before.split('\n').length;
  const lineStart = before.lastIndexOf('\n') + 1;
  const column = issue.offset - lineStart;
  const text = source.split('\n')[line - 1] ?? '';
  return `ERROR: <input>:${line}:${column + 1}: ${issue.message}\n | ${text}\n | ${'.'.repeat(column)}^`;
}

/**
 * The type errors of one expression when the variables of `roots` have those schemas (others are
 * dynamic), rendered as cel-go renders its issues (joined by newlines); '' when there are none
 * or the expression does not parse (compilation reports that).
 */
export function typeCheckExpression(source: string, roots: Readonly<Record<string, Schema | undefined>>): string {
  let parsed: ReturnType<typeof Cel.parse>;
  try {
    parsed = celLib().parse(source);
  } catch {
    return '';
  }
  const positions = (parsed.sourceInfo?.positions ?? {}) as Record<string, number>;
  const checker = new Checker(positions);
  checker.typeOf(parsed.expr, new Map(Object.entries(roots)));
  return checker.issues.map((i) => render(source, i)).join('\n');
}
