import { isObject } from '../api/types';

/**
 * Small typed readers and writers over decoded JSON, so kind code never casts `unknown` ad hoc.
 * Readers treat null like absent, as Go's JSON decoding does for optional fields.
 */

export type JsonMap = Record<string, unknown>;

/** The value as a plain object, or undefined. */
export function rec(v: unknown): JsonMap | undefined {
  return isObject(v) ? v : undefined;
}

/** The value as an array of plain objects (non-objects skipped); [] when not an array. */
export function recs(v: unknown): JsonMap[] {
  return Array.isArray(v) ? v.filter(isObject) : [];
}

/** The value as an array; [] when not an array. */
export function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** The value as a string, or undefined. */
export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** The value as a string array (non-strings skipped). */
export function strs(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/** The value as a finite number, or undefined. */
export function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** Follows a path of object keys; undefined as soon as a step is not an object. */
export function get(v: unknown, ...path: string[]): unknown {
  let cur: unknown = v;
  for (const p of path) {
    if (!isObject(cur)) return undefined;
    cur = cur[p];
  }
  return cur;
}

/** The string at a path, or ''. Mirrors reading a Go string field (zero value ''). */
export function strAt(v: unknown, ...path: string[]): string {
  return str(get(v, ...path)) ?? '';
}

/** Returns parent[k] as an object, creating (or replacing a non-object) when needed. */
export function ensureRec(parent: JsonMap, k: string): JsonMap {
  const cur = parent[k];
  if (isObject(cur)) return cur;
  const fresh: JsonMap = {};
  parent[k] = fresh;
  return fresh;
}

/** Sets parent[k] = value when the field is unset (undefined or null); '' counts as unset when emptyIsUnset. */
export function setDefault(parent: JsonMap, k: string, value: unknown, emptyIsUnset = true): void {
  const cur = parent[k];
  if (cur === undefined || cur === null || (emptyIsUnset && cur === '')) parent[k] = value;
}
