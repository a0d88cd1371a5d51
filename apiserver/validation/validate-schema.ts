/**
 * Structural validation of a decoded object against its kind's schema: JSON types, required
 * fields, enums, integer ranges (int32, int64), the int-or-string, quantity and date-time
 * formats, plus duplicate keys in listType map lists. Unknown fields are not reported here (see unknown-fields.ts). Field paths
 * and messages follow upstream's field.Error and kube-openapi wording, e.g.
 * `spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`.
 *
 * As in upstream's typed decoding of built-in kinds, a JSON null is an unset field: it passes
 * every type check and only fails a required check.
 */
import type { Cause } from '../api/errors';
import { INT32_MAX, INT32_MIN } from '../api/integers';
import { isValidDateTime } from '../api/time';

export { isValidDateTime };
import type { ArraySchema, Schema, ScalarSchema } from '../api/schema';
import { canonicalJson, hasOwn, isJsonObject, jsonTypeName } from '../patch/json-value';

/** Returns one Cause per problem, in schema order; an empty list means obj is structurally valid. */
export function validateAgainstSchema(obj: unknown, schema: Schema): Cause[] {
  const out: Cause[] = [];
  walk(obj, schema, '', out);
  return out;
}

/** Upstream's quantity syntax: signed decimal, then a binary (Ki..Ei) or decimal (n..E) suffix or an exponent. */
const quantityPattern = /^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+|[KMGTPE]i|[numkMGTPE])?$/;

/** The regular expression upstream's ParseQuantity error message quotes. */
const quantityRegexText = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$';

/** Whether s is a Kubernetes quantity string such as "100m", "1Gi", "2", "1e3" or "0.5". */
export function isValidQuantity(s: string): boolean {
  return quantityPattern.test(s);
}

function walk(v: unknown, s: Schema, path: string, out: Cause[]): void {
  if (v === null || v === undefined) return;
  switch (s.type) {
    case 'any':
      return;
    case 'object': {
      if (!isJsonObject(v)) return void out.push(typeError(path, v, 'object'));
      for (const k of Object.keys(s.properties)) {
        if (hasOwn(v, k)) walk(v[k], s.properties[k], child(path, k), out);
      }
      for (const k of s.required ?? []) {
        if (!hasOwn(v, k) || v[k] === null) {
          out.push({ reason: 'FieldValueRequired', message: 'Required value', field: child(path, k) });
        }
      }
      return;
    }
    case 'map': {
      if (!isJsonObject(v)) return void out.push(typeError(path, v, 'object'));
      for (const k of Object.keys(v)) walk(v[k], s.values, `${path}[${k}]`, out);
      return;
    }
    case 'array': {
      if (!Array.isArray(v)) return void out.push(typeError(path, v, 'array'));
      v.forEach((x, i) => walk(x, s.items, `${path}[${i}]`, out));
      if (s.listType === 'map') checkDuplicateKeys(v, s, path, out);
      return;
    }
    default:
      checkScalar(v, s, path, out);
  }
}

function checkScalar(v: unknown, s: ScalarSchema, path: string, out: Cause[]): void {
  const t = jsonTypeName(v);
  switch (s.type) {
    case 'string':
      if (t !== 'string') return void out.push(typeError(path, v, 'string'));
      break;
    case 'integer': {
      if (t !== 'integer') return void out.push(typeError(path, v, 'integer'));
      const width = s.format === 'int32' ? 'int32' : 'int64';
      if (!fitsInteger(v as number, width)) return void out.push(rangeError(path, v as number, width));
      break;
    }
    case 'number':
      if (t !== 'integer' && t !== 'number') return void out.push(typeError(path, v, 'number'));
      break;
    case 'boolean':
      if (t !== 'boolean') return void out.push(typeError(path, v, 'boolean'));
      break;
    case 'int-or-string':
      if (t !== 'integer' && t !== 'string') return void out.push(typeError(path, v, 'integer or string'));
      // Upstream's IntOrString holds its integer as an int32.
      if (t === 'integer' && !fitsInteger(v as number, 'int32')) return void out.push(rangeError(path, v as number, 'int32'));
      break;
    case 'quantity':
      // Upstream's Quantity unmarshals JSON numbers as well as strings.
      if (t === 'integer' || t === 'number') break;
      if (t !== 'string') return void out.push(typeError(path, v, 'quantity'));
      if (!isValidQuantity(v as string)) {
        out.push({
          reason: 'FieldValueInvalid',
          message: `Invalid value: ${JSON.stringify(v)}: quantities must match the regular expression '${quantityRegexText}'`,
          field: path,
        });
        return;
      }
      break;
    case 'date-time':
      if (t !== 'string') return void out.push(typeError(path, v, 'string'));
      if (!isValidDateTime(v as string)) {
        out.push({
          reason: 'FieldValueInvalid',
          message: `Invalid value: ${JSON.stringify(v)}: ${inBody(path)} must be of type date-time: ${JSON.stringify(v)}`,
          field: path,
        });
        return;
      }
      break;
  }
  if (s.enum && typeof v === 'string' && !s.enum.includes(v)) {
    out.push({
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${JSON.stringify(v)}: supported values: ${s.enum.map((e) => JSON.stringify(e)).join(', ')}`,
      field: path,
    });
  }
}

/**
 * Whether an integral number is one the field's Go type holds and we store exactly. int32 is
 * upstream's own bound (a larger JSON number fails its decoding). For int64 ours is narrower:
 * JSON.parse has already rounded anything past 2^53 (9007199254740993 arrives as
 * 9007199254740992), and 1e20 is integral but no int64, so every value beyond
 * Number.MAX_SAFE_INTEGER is refused rather than stored as a number the client did not send.
 */
function fitsInteger(v: number, format: 'int32' | 'int64'): boolean {
  return format === 'int32' ? v >= INT32_MIN && v <= INT32_MAX : Number.isSafeInteger(v);
}

function rangeError(path: string, v: number, format: 'int32' | 'int64'): Cause {
  const bound =
    format === 'int32'
      ? `must be an int32, between ${INT32_MIN} and ${INT32_MAX}`
      : `must be between ${Number.MIN_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}: a larger int64 cannot be stored exactly`;
  const cause: Cause = { reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(v)}: ${inBody(path)} ${bound}` };
  if (path) cause.field = path;
  return cause;
}

/** Elements of a listType map list must be unique by their map keys (upstream: Duplicate value). */
function checkDuplicateKeys(list: unknown[], s: ArraySchema, path: string, out: Cause[]): void {
  const keys = s.mapKeys ?? [];
  if (keys.length === 0) return;
  const seen = new Set<string>();
  list.forEach((el, i) => {
    if (!isJsonObject(el) || !keys.some((k) => hasOwn(el, k))) return;
    const tuple: Record<string, unknown> = {};
    for (const k of keys) if (hasOwn(el, k)) tuple[k] = el[k];
    const id = canonicalJson(tuple);
    if (!seen.has(id)) {
      seen.add(id);
      return;
    }
    if (keys.length === 1) {
      out.push({ reason: 'FieldValueDuplicate', message: `Duplicate value: ${JSON.stringify(el[keys[0]])}`, field: `${path}[${i}].${keys[0]}` });
    } else {
      out.push({ reason: 'FieldValueDuplicate', message: `Duplicate value: ${JSON.stringify(tuple)}`, field: `${path}[${i}]` });
    }
  });
}

function typeError(path: string, v: unknown, want: string): Cause {
  const got = JSON.stringify(jsonTypeName(v));
  const cause: Cause = {
    reason: 'FieldValueTypeInvalid',
    message: `Invalid value: ${got}: ${inBody(path)} must be of type ${want}: ${got}`,
  };
  if (path) cause.field = path;
  return cause;
}

function inBody(path: string): string {
  return path ? `${path} in body` : 'body';
}

function child(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}
