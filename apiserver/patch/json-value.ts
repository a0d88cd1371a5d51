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

/**
 * A deep copy of a JSON value; the result shares nothing with the input. Iterative, so that a
 * value of any depth (a JSON Patch can build one deeper than a body may be) copies without
 * overflowing the stack.
 */
export function deepClone<T>(v: T): T {
  if (!isContainer(v)) return v;
  const root = emptyLike(v);
  const from: Container[] = [v];
  const to: Container[] = [root];
  while (from.length > 0) {
    const src = from.pop()!;
    const dst = to.pop()!;
    if (Array.isArray(src)) {
      const out = dst as unknown[];
      for (const x of src) {
        if (isContainer(x)) {
          const c = emptyLike(x);
          out.push(c);
          from.push(x);
          to.push(c);
        } else {
          out.push(x);
        }
      }
    } else {
      const out = dst as JsonObject;
      for (const k of Object.keys(src)) {
        const x = src[k];
        if (isContainer(x)) {
          const c = emptyLike(x);
          setOwn(out, k, c);
          from.push(x);
          to.push(c);
        } else {
          setOwn(out, k, x);
        }
      }
    }
  }
  return root as T;
}

type Container = unknown[] | JsonObject;

function isContainer(v: unknown): v is Container {
  return typeof v === 'object' && v !== null;
}

function emptyLike(v: Container): Container {
  return Array.isArray(v) ? [] : {};
}

/** Where a caller bounding its work is told how much a walk cost (in elements and keys visited). */
export interface WorkMeter {
  charge(units: number): void;
}

/**
 * JSON equality: objects compare as unordered key sets, arrays element-wise, numbers by value.
 * Iterative like deepClone; work (elements and keys visited) is charged to meter when given.
 */
export function deepEqual(a: unknown, b: unknown, meter?: WorkMeter): boolean {
  const left: unknown[] = [a];
  const right: unknown[] = [b];
  while (left.length > 0) {
    const x = left.pop();
    const y = right.pop();
    if (x === y) continue;
    if (Array.isArray(x)) {
      if (!Array.isArray(y) || x.length !== y.length) return false;
      meter?.charge(x.length);
      for (let i = 0; i < x.length; i++) {
        left.push(x[i]);
        right.push(y[i]);
      }
    } else if (isJsonObject(x)) {
      if (!isJsonObject(y)) return false;
      const kx = Object.keys(x);
      const ky = Object.keys(y);
      meter?.charge(kx.length + ky.length);
      if (kx.length !== ky.length) return false;
      for (const k of kx) {
        if (!hasOwn(y, k)) return false;
        left.push(x[k]);
        right.push(y[k]);
      }
    } else {
      return false;
    }
  }
  return true;
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
