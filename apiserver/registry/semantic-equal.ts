import { isObject } from '../api/types';

/**
 * Equality as upstream's apiequality.Semantic.DeepEqual sees decoded Go structs: a field that is
 * absent, null, '', 0, false, [] or {} equals its absent counterpart (Go cannot tell them apart after
 * decoding). Quantities are compared as strings: defaults() canonicalises them, so equal values
 * have equal spellings by the time objects are compared.
 */
export function semanticEqual(a: unknown, b: unknown): boolean {
  if (isZero(a) && isZero(b)) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => semanticEqual(x, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) if (!semanticEqual(a[k], b[k])) return false;
    return true;
  }
  return a === b;
}

/** True for Go zero values as they appear in decoded JSON. */
export function isZero(v: unknown): boolean {
  if (v === undefined || v === null || v === '' || v === 0 || v === false) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (isObject(v)) return Object.values(v).every(isZero);
  return false;
}

/** Paths (dotted, [i] for items) where two values differ semantically; a compact stand-in for upstream's cmp.Diff. */
export function diffPaths(a: unknown, b: unknown, path = '', out: string[] = []): string[] {
  if (semanticEqual(a, b)) return out;
  if (isObject(a) && isObject(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) diffPaths(a[k], b[k], path ? `${path}.${k}` : k, out);
  } else if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    a.forEach((x, i) => diffPaths(x, b[i], `${path}[${i}]`, out));
  } else out.push(path);
  return out;
}
