import { fieldError, type Cause } from '../api/errors';

/**
 * Field-level causes worded as upstream's apimachinery field.Error bodies ("Required value",
 * `Invalid value: "x": detail`, ...) and typed with its StatusCause reasons, so clients that
 * print or match these strings see what they expect.
 */

/** Upstream's FieldImmutableErrorMsg. */
export const IMMUTABLE = 'field is immutable';

/** Renders a bad value as field.Error does: strings quoted, numbers and booleans bare, the rest as JSON. */
export function formatValue(v: unknown): string {
  if (v === undefined || v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

function withDetail(body: string, detail?: string): string {
  return detail ? `${body}: ${detail}` : body;
}

export function required(field: string, detail = ''): Cause {
  return fieldError(field, withDetail('Required value', detail), 'FieldValueRequired');
}

export function invalid(field: string, value: unknown, detail: string): Cause {
  return fieldError(field, withDetail(`Invalid value: ${formatValue(value)}`, detail), 'FieldValueInvalid');
}

export function typeInvalid(field: string, value: unknown, detail: string): Cause {
  return fieldError(field, withDetail(`Invalid value: ${formatValue(value)}`, detail), 'FieldValueTypeInvalid');
}

export function notSupported(field: string, value: unknown, valid: readonly string[]): Cause {
  const detail = valid.length ? `supported values: ${valid.map((s) => JSON.stringify(s)).join(', ')}` : '';
  return fieldError(field, withDetail(`Unsupported value: ${formatValue(value)}`, detail), 'FieldValueNotSupported');
}

export function duplicate(field: string, value: unknown, detail = ''): Cause {
  return fieldError(field, withDetail(`Duplicate value: ${formatValue(value)}`, detail), 'FieldValueDuplicate');
}

export function forbidden(field: string, detail: string): Cause {
  return fieldError(field, withDetail('Forbidden', detail), 'FieldValueForbidden');
}

export function tooLong(field: string, max: number): Cause {
  return fieldError(field, `Too long: may not be more than ${max} ${max === 1 ? 'byte' : 'bytes'}`, 'FieldValueTooLong');
}

export function tooMany(field: string, actual: number, max: number): Cause {
  return fieldError(field, `Too many: ${actual}: must have at most ${max} items`, 'FieldValueTooMany');
}

export function notFound(field: string, value: unknown): Cause {
  return fieldError(field, `Not found: ${formatValue(value)}`, 'FieldValueNotFound');
}

/** ValidateImmutableField: an Invalid cause carrying the new value when it differs from the old. */
export function immutable(field: string, value: unknown): Cause {
  return invalid(field, value, IMMUTABLE);
}

/** Field path builders in upstream's field.Path string form: a.b, a[0], a[key]. */
export function child(base: string, name: string): string {
  return base ? `${base}.${name}` : name;
}
export function index(base: string, i: number): string {
  return `${base}[${i}]`;
}
export function key(base: string, k: string): string {
  return `${base}[${k}]`;
}

/** Hand-written causes that a rule of the kind's schema also states (see coveredByDeclarative). */
const coveredCauses = new WeakSet<Cause>();

/**
 * Marks a hand-written cause as one whose rule the kind's schema also states (upstream's
 * field.Error MarkCoveredByDeclarative, KEP-5073): with the DeclarativeValidation gate the store
 * compares it with the schema's own cause for that field, and with DeclarativeValidationTakeover
 * the schema's cause answers instead (store/declarative-validation.ts). A mark, not a field: the
 * cause on the wire is unchanged.
 */
export function coveredByDeclarative(c: Cause): Cause {
  coveredCauses.add(c);
  return c;
}

/** Whether coveredByDeclarative marked this cause. */
export function isCoveredByDeclarative(c: Cause): boolean {
  return coveredCauses.has(c);
}
