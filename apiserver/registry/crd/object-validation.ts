import type { Cause } from '../../api/errors';
import { canonicalJson, isJsonObject, jsonTypeName } from '../../patch/json-value';
import { isValidDateTime } from '../../api/time';
import { duplicate, invalid, notSupported, required, tooMany, typeInvalid } from '../field-errors';
import { validateObjectMeta } from '../meta-validation';

/**
 * The value checks of a custom resource against its version's structural schema that the
 * registry's Schema does not carry (types, required fields and list-map keys are checked through
 * it by validation/validate-schema.ts first): null where not nullable, enum, format, the numeric
 * bounds and multipleOf, string lengths and pattern, item and property counts, set uniqueness,
 * allOf/anyOf/oneOf/not, and x-kubernetes-embedded-resource (apiVersion, kind and valid
 * metadata). Messages are upstream's (kube-openapi's validate errors as apiextensions reports
 * them): `spec.size: Invalid value: 5: spec.size in body should be greater than or equal to 10`.
 */

type Json = Record<string, unknown>;

export function validateCustomObject(obj: unknown, schema: Json): Cause[] {
  const out: Cause[] = [];
  if (!isJsonObject(obj)) return out;
  const props = isJsonObject(schema.properties) ? schema.properties : {};
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'metadata' || k === 'apiVersion' || k === 'kind') continue;
    const s = props[k];
    if (isJsonObject(s)) walk(v, s, k, out);
  }
  return out;
}

function inBody(path: string): string {
  return path ? `${path} in body` : 'body';
}

function walk(v: unknown, s: Json, path: string, out: Cause[]): void {
  if (v === undefined) return;
  if (v === null) {
    if (s.nullable !== true && s['x-kubernetes-preserve-unknown-fields'] !== true && s.type !== undefined) {
      out.push(typeInvalid(path, 'null', `${inBody(path)} must be of type ${typeof s.type === 'string' ? s.type : 'object'}: "null"`));
    }
    return;
  }
  const before = out.length;
  if (Array.isArray(s.enum) && !s.enum.some((e) => canonicalJson(e) === canonicalJson(v))) {
    out.push(notSupported(path, v, s.enum.map((e) => (typeof e === 'string' ? e : JSON.stringify(e)))));
  }
  scalarChecks(v, s, path, out);
  if (Array.isArray(v)) arrayChecks(v, s, path, out);
  else if (isJsonObject(v)) objectChecks(v, s, path, out);
  combinators(v, s, path, out, before);
}

function scalarChecks(v: unknown, s: Json, path: string, out: Cause[]): void {
  if (typeof v === 'number') {
    const min = s.minimum;
    const max = s.maximum;
    if (typeof min === 'number') {
      if (s.exclusiveMinimum === true ? v <= min : v < min) out.push(invalid(path, v, `${inBody(path)} should be greater than ${s.exclusiveMinimum === true ? '' : 'or equal to '}${min}`));
    }
    if (typeof max === 'number') {
      if (s.exclusiveMaximum === true ? v >= max : v > max) out.push(invalid(path, v, `${inBody(path)} should be less than ${s.exclusiveMaximum === true ? '' : 'or equal to '}${max}`));
    }
    if (typeof s.multipleOf === 'number' && s.multipleOf > 0 && !Number.isInteger(v / s.multipleOf)) out.push(invalid(path, v, `${inBody(path)} should be a multiple of ${s.multipleOf}`));
    if (s.format === 'int32' && Number.isInteger(v) && (v < -2147483648 || v > 2147483647)) out.push(invalid(path, v, `${inBody(path)} must be of type int32: ${JSON.stringify(String(v))}`));
  }
  if (typeof v === 'string') {
    const len = [...v].length;
    if (typeof s.maxLength === 'number' && len > s.maxLength) out.push(invalid(path, v, `${inBody(path)} should be at most ${s.maxLength} chars long`));
    if (typeof s.minLength === 'number' && len < s.minLength) out.push(invalid(path, v, `${inBody(path)} should be at least ${s.minLength} chars long`));
    if (typeof s.pattern === 'string' && !patternOf(s.pattern).test(v)) out.push(invalid(path, v, `${inBody(path)} should match '${s.pattern}'`));
    if (typeof s.format === 'string' && !formatOk(s.format, v)) out.push(invalid(path, v, `${inBody(path)} must be of type ${s.format}: ${JSON.stringify(v)}`));
  }
}

const patterns = new Map<string, RegExp>();
function patternOf(p: string): RegExp {
  let re = patterns.get(p);
  if (!re) {
    // ECMA-262 like upstream's (OpenAPI pattern); unanchored: the value must contain a match.
    re = new RegExp(p, 'u');
    patterns.set(p, re);
  }
  return re;
}

const FORMATS: Record<string, (v: string) => boolean> = {
  'date-time': isValidDateTime,
  datetime: isValidDateTime,
  date: (v) => /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(`${v}T00:00:00Z`)) && new Date(`${v}T00:00:00Z`).toISOString().startsWith(v),
  byte: (v) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(v),
  uuid: (v) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(v),
  email: (v) => /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(v),
  hostname: (v) => v.length <= 255 && /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*\.?$/.test(v),
  ipv4: (v) => /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/.test(v),
  ipv6: (v) => v.includes(':') && /^[0-9a-fA-F:.]+$/.test(v),
  cidr: (v) => /^[0-9a-fA-F:.]+\/\d{1,3}$/.test(v),
  mac: (v) => /^(?:[0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$/.test(v),
  uri: (v) => URL.canParse(v),
  duration: (v) => /^[-+]?(?:\d+(?:\.\d*)?(?:ns|us|µs|ms|s|m|h))+$/.test(v) || v === '0',
};

/** Formats upstream checks for custom resources; other formats (int32 on strings, password, ...) pass, as upstream ignores them. */
function formatOk(format: string, v: string): boolean {
  const check = FORMATS[format];
  return check ? check(v) : true;
}

function arrayChecks(v: unknown[], s: Json, path: string, out: Cause[]): void {
  if (typeof s.maxItems === 'number' && v.length > s.maxItems) out.push(tooMany(path, v.length, s.maxItems));
  if (typeof s.minItems === 'number' && v.length < s.minItems) out.push(invalid(path, v.length, `${inBody(path)} should have at least ${s.minItems} items`));
  if (s['x-kubernetes-list-type'] === 'set') {
    const seen = new Set<string>();
    v.forEach((x, i) => {
      const k = canonicalJson(x);
      if (seen.has(k)) out.push(duplicate(`${path}[${i}]`, x));
      seen.add(k);
    });
  }
  const items = isJsonObject(s.items) ? s.items : undefined;
  if (items) v.forEach((x, i) => walk(x, items, `${path}[${i}]`, out));
}

function objectChecks(v: Json, s: Json, path: string, out: Cause[]): void {
  const n = Object.keys(v).length;
  if (typeof s.maxProperties === 'number' && n > s.maxProperties) out.push(tooMany(path, n, s.maxProperties));
  if (typeof s.minProperties === 'number' && n < s.minProperties) out.push(invalid(path, n, `${inBody(path)} should have at least ${s.minProperties} properties`));
  const props = isJsonObject(s.properties) ? s.properties : undefined;
  const additional = isJsonObject(s.additionalProperties) ? s.additionalProperties : undefined;
  for (const [k, x] of Object.entries(v)) {
    const ps = props?.[k];
    if (isJsonObject(ps)) walk(x, ps, `${path}.${k}`, out);
    else if (additional) walk(x, additional, `${path}[${k}]`, out);
  }
  if (s['x-kubernetes-embedded-resource'] === true) embedded(v, path, out);
}

/** x-kubernetes-embedded-resource: apiVersion and kind required, metadata a valid ObjectMeta (name optional). */
function embedded(v: Json, path: string, out: Cause[]): void {
  if (typeof v.apiVersion !== 'string' || !v.apiVersion) out.push(required(`${path}.apiVersion`, 'must not be empty'));
  if (typeof v.kind !== 'string' || !v.kind) out.push(required(`${path}.kind`, 'must not be empty'));
  if (isJsonObject(v.metadata)) {
    // An embedded object's name is optional (a template's), so only its form is checked.
    for (const c of validateObjectMeta(v.metadata, { namespaced: false, nameRule: 'subdomain', strictFinalizers: false })) {
      if (c.field === 'metadata.name' && c.reason === 'FieldValueRequired') continue;
      out.push({ ...c, field: c.field ? `${path}.${c.field}` : path });
    }
  }
}

function combinators(v: unknown, s: Json, path: string, out: Cause[], before: number): void {
  const passes = (x: unknown) => {
    const sub: Cause[] = [];
    if (isJsonObject(x)) walk(v, x, path, sub);
    if (isJsonObject(x) && typeof x.type === 'string' && !typeFits(v, x.type)) sub.push(invalid(path, v, 'type'));
    if (isJsonObject(x) && Array.isArray(x.required) && isJsonObject(v)) for (const r of x.required) if (typeof r === 'string' && !(r in v)) sub.push(required(`${path}.${r}`));
    return sub.length === 0;
  };
  if (out.length > before) return;
  if (Array.isArray(s.allOf) && !s.allOf.every(passes)) out.push(invalid(path, v, `${inBody(path)} must validate all the schemas (allOf)`));
  if (Array.isArray(s.anyOf) && !s.anyOf.some(passes)) out.push(invalid(path, v, `${inBody(path)} must validate at least one schema (anyOf)`));
  if (Array.isArray(s.oneOf) && s.oneOf.filter(passes).length !== 1) out.push(invalid(path, v, `${inBody(path)} must validate one and only one schema (oneOf)`));
  if (isJsonObject(s.not) && passes(s.not)) out.push(invalid(path, v, `${inBody(path)} must not validate the schema (not)`));
}

function typeFits(v: unknown, type: string): boolean {
  const t = jsonTypeName(v);
  return t === type || (type === 'number' && t === 'integer');
}
