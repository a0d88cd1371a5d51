import type * as Cel from '@bufbuild/cel';
import { celLib } from './lazy';

/**
 * CEL optional values, as far as Kubernetes' transition rules with optionalOldSelf need them
 * (upstream's cel-go optional library): `hasValue()`, `value()`, `orValue(x)`, `optional.none()`
 * and `optional.of(x)`. @bufbuild/cel has no optional type, so an optional is a map with a
 * reserved key (`@svc.optional`, no key a CRD schema can declare: property names there are plain
 * JSON names the CRD author picks, and this one is never produced by converting an object, as
 * `celOptional` is the only producer).
 */

const KEY = '@svc.optional';
const VALUE = '@svc.value';

/** An optional for CEL: of the value, or none when it is undefined. */
export function celOptional(value: unknown): Record<string, unknown> {
  return value === undefined ? { [KEY]: false } : { [KEY]: true, [VALUE]: value };
}

interface CelMapLike {
  has(k: unknown): boolean;
  get(k: unknown): unknown;
}

function asOptional(v: unknown): CelMapLike {
  const m = v as Partial<CelMapLike> | null;
  if (m && typeof m.has === 'function' && typeof m.get === 'function' && m.has(KEY)) return m as CelMapLike;
  throw new Error('no such overload: the receiver is not an optional');
}

let funcs: readonly Cel.CelFunc[] | undefined;

/** The functions of optionals, for CelEnvironmentOptions.funcs. */
export function optionalFuncs(): readonly Cel.CelFunc[] {
  if (funcs) return funcs;
  const cel = celLib();
  const DYN = cel.CelScalar.DYN;
  funcs = [
    cel.celMethod('hasValue', DYN, [], cel.CelScalar.BOOL, function () {
      return asOptional(this).get(KEY) === true;
    }),
    cel.celMethod('value', DYN, [], DYN, function () {
      const o = asOptional(this);
      // cel-go's wording for value() of an empty optional.
      if (o.get(KEY) !== true) throw new Error('optional.none() dereference');
      return o.get(VALUE) as Cel.CelInput;
    }),
    cel.celMethod('orValue', DYN, [DYN], DYN, function (other) {
      const o = asOptional(this);
      return (o.get(KEY) === true ? o.get(VALUE) : other) as Cel.CelInput;
    }),
    cel.celFunc('optional.none', [], DYN, () => celOptional(undefined) as Cel.CelInput),
    cel.celFunc('optional.of', [DYN], DYN, (v) => celOptional(v) as Cel.CelInput),
  ];
  return funcs;
}
