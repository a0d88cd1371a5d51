/**
 * Helpers for plain JSON values (the decoded request and stored object bodies) shared by the
 * patch engines and the validators. Keys are always read and written as own properties so a
 * body key such as "__proto__" or "constructor" is data, never the prototype chain.
 */

export type JsonObject = Record<string, unknown>;

/** True for a JSON object (not null, not an array). */
export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Whether o has k as an own property. */
export function hasOwn(o: object, k: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, k);
}

/** Sets o[k] as an own, enumerable data property, even for "__proto__". */
export function setOwn(o: JsonObject, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true });
  else o[k] = v;
}

/** A deep copy of a JSON value; the result shares nothing with the input. */
export function deepClone<T>(v: T): T {
  if (Array.isArray(v)) return (v as unknown[]).map((x) => deepClone(x)) as T;
  if (isJsonObject(v)) {
    const out: JsonObject = {};
    for (const k of Object.keys(v)) setOwn(out, k, deepClone(v[k]));
    return out as T;
  }
  return v;
}

/** JSON equality: objects compare as unordered key sets, arrays element-wise, numbers by value. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (isJsonObject(a)) {
    if (!isJsonObject(b)) return false;
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    for (const k of ka) if (!hasOwn(b, k) || !deepEqual(a[k], b[k])) return false;
    return true;
  }
  return false;
}

/** A canonical string for a JSON value (object keys sorted), usable as a Map key for identity. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (isJsonObject(v)) {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k])}`)
      .join(',')}}`;
  }
  return v === undefined ? 'undefined' : JSON.stringify(v);
}

/** The JSON type name of a value as OpenAPI names it (integer when a number has no fraction). */
export function jsonTypeName(v: unknown): 'null' | 'boolean' | 'integer' | 'number' | 'string' | 'array' | 'object' {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  switch (typeof v) {
    case 'boolean':
      return 'boolean';
    case 'number':
      return Number.isInteger(v) ? 'integer' : 'number';
    case 'string':
      return 'string';
    default:
      return 'object';
  }
}

/** Go's encoding/json name for a JSON value's kind, as upstream's unmarshal errors print it. */
export function goTypeName(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object') return 'object';
  return typeof v === 'boolean' ? 'bool' : typeof v;
}
