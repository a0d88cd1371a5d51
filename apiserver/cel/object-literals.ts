import type * as Cel from '@bufbuild/cel';
import { celLib } from './lazy';

/**
 * Object construction in MutatingAdmissionPolicy expressions (upstream
 * k8s.io/apiserver/pkg/admission/plugin/policy/mutating): `Object{metadata: Object.metadata{...}}`
 * builds an apply configuration and `JSONPatch{op: "add", path: "/x", value: 1}` one JSON patch
 * operation. Upstream declares a CEL type per schema node; here such a literal is rewritten, once
 * at compile time, into a map literal keyed by its field names, which evaluates to the same JSON.
 *
 * What upstream checks at run time (CheckTypeNamesMatchFieldPathNames) is checked here when
 * compiling: a literal nested directly under a field (or in a list under it) must be named after
 * the path to it (`Object.spec{containers: [Object.spec.containers{...}]}`). Field names are not
 * checked against the resource's schema (upstream's type checker does).
 */

type Expr = ReturnType<typeof Cel.parse>['expr'];

const JSON_PATCH_FIELDS = new Set(['op', 'path', 'from', 'value']);

const isObjectType = (name: string): boolean => name === 'Object' || name.startsWith('Object.');

/** Rewrites every Object / JSONPatch literal of e into a map literal; returns the problem when one is misnamed or unknown. */
export function objectLiteralsAsMaps(e: Expr | undefined, state: { nextId: bigint }): string | undefined {
  let problem: string | undefined;
  const visit = (x: Expr | undefined, expected?: string): void => {
    if (!x || problem) return;
    const k = x.exprKind;
    switch (k.case) {
      case 'selectExpr':
        return visit(k.value.operand);
      case 'callExpr':
        visit(k.value.target);
        k.value.args.forEach((a) => visit(a));
        return;
      case 'listExpr':
        // A list literal passes the expected element type on (Object.spec.containers for each element).
        k.value.elements.forEach((a) => visit(a, expected));
        return;
      case 'comprehensionExpr':
        for (const part of [k.value.iterRange, k.value.accuInit, k.value.loopCondition, k.value.loopStep, k.value.result]) visit(part);
        return;
      case 'structExpr': {
        const name = k.value.messageName;
        if (name === '') {
          k.value.entries.forEach((en) => {
            if (en.keyKind.case === 'mapKey') visit(en.keyKind.value);
            visit(en.value);
          });
          return;
        }
        if (name !== 'JSONPatch' && !isObjectType(name)) {
          problem = `undeclared reference to '${name}'`;
          return;
        }
        if (expected !== undefined && isObjectType(name) && name !== expected) {
          problem = `type mismatch: unexpected type name "${name}", expected "${expected}", which matches field name path from root Object type`;
          return;
        }
        for (const en of k.value.entries) {
          if (en.keyKind.case !== 'fieldKey') continue;
          const field = en.keyKind.value;
          if (name === 'JSONPatch' && !JSON_PATCH_FIELDS.has(field)) {
            problem = `undefined field '${field}' of JSONPatch`;
            return;
          }
          visit(en.value, isObjectType(name) ? `${name}.${field}` : undefined);
          (en as { keyKind: unknown }).keyKind = { case: 'mapKey', value: stringConstant(field, state) };
        }
        (k.value as { messageName: string }).messageName = '';
        return;
      }
      default:
        return;
    }
  };
  visit(e);
  return problem;
}

function stringConstant(value: string, state: { nextId: bigint }): Expr {
  return {
    $typeName: 'cel.expr.Expr',
    id: state.nextId++,
    exprKind: { case: 'constExpr', value: { $typeName: 'cel.expr.Constant', constantKind: { case: 'stringValue', value } } },
  };
}

/** Upstream's jsonpatch.escapeKey: a map key as one JSON pointer token (RFC 6901: ~ as ~0, / as ~1). */
export function escapeKeyFunc(): ReturnType<ReturnType<typeof celLib>['celFunc']> {
  const cel = celLib();
  return cel.celFunc('jsonpatch.escapeKey', [cel.CelScalar.STRING], cel.CelScalar.STRING, (k: string) => k.replaceAll('~', '~0').replaceAll('/', '~1'));
}
