import { isDeepStrictEqual } from 'node:util';
import { isObject } from '../api/types';

/**
 * Equality as upstream's apiequality.Semantic.DeepEqual sees decoded Go structs: a field that is
 * absent, null, '', 0, false, [] or {} equals its absent counterpart (Go cannot tell them apart after
 * decoding). Quantities are compared as strings: defaults() canonicalises them, so equal values
 * have equal spellings by the time objects are compared.
 */
export function semanticEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (isObject(a) && isObject(b)) {
    for (const k of Object.keys(a)) if (!semanticEqual(a[k], b[k])) return false;
    for (const k of Object.keys(b)) if (!(k in a) && !isZero(b[k])) return false;
    return true;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => semanticEqual(x, b[i]));
  }
  // Different shapes (or scalars that differ) are equal only as two zero values. Asked here, at the
  // first difference, rather than at every level on the way down: a zero-check of each level would
  // walk the subtree below it again, quadratic in the depth of a hostile object.
  return isZero(a) && isZero(b);
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
  if (a === b) return out;
  if (isObject(a) && isObject(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) diffPaths(a[k], b[k], path ? `${path}.${k}` : k, out);
  } else if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    a.forEach((x, i) => diffPaths(x, b[i], `${path}[${i}]`, out));
  } else if (!semanticEqual(a, b)) out.push(path);
  return out;
}

/**
 * A JSON value as upstream would hold it after decoding into its Go type and writing it back: an
 * object field that is null (or an empty list) is the same as an absent one. Unlike isZero, '', 0,
 * false and {} are kept: a pointer field set to 0 (runAsUser: 0) is not an absent one. Used where
 * a change must be told from a re-spelling (a StatefulSet's immutable fields, a DaemonSet's
 * template generation, the templates controllers keep as revisions).
 */
export function decodedForm(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(decodedForm);
  if (!isObject(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (x === null || x === undefined || (Array.isArray(x) && x.length === 0)) continue;
    out[k] = decodedForm(x);
  }
  return out;
}

/** Deep equality of the decodedForm of two values (key order ignored). */
export function decodedEqual(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(decodedForm(a), decodedForm(b));
}
