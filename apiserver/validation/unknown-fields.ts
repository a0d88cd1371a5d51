/**
 * Fields an object carries that its schema does not declare. Paths are written as upstream's
 * strict JSON decoder tracks them: a leading dot, "." before every object or map key and
 * "[i]" for list indices (`.spec.containers[0].bar`). A schema of type 'any' accepts anything
 * below it; values of the wrong JSON type are left to validateAgainstSchema.
 */
import type { Schema } from '../api/schema';
import { hasOwn, isJsonObject } from '../patch/json-value';

/** The paths of every field in obj that schema does not declare, in document order. */
export function findUnknownFields(obj: unknown, schema: Schema): string[] {
  const out: string[] = [];
  walk(obj, schema, '', out, false);
  return out;
}

/**
 * Removes every undeclared field from obj in place (what upstream's decoder does for
 * fieldValidation Ignore and Warn) and returns their paths, as findUnknownFields would.
 */
export function pruneUnknownFields(obj: unknown, schema: Schema): string[] {
  const out: string[] = [];
  walk(obj, schema, '', out, true);
  return out;
}

function walk(v: unknown, s: Schema, path: string, out: string[], prune: boolean): void {
  if (s.type === 'object' && isJsonObject(v)) {
    for (const k of Object.keys(v)) {
      const p = `${path}.${k}`;
      if (hasOwn(s.properties, k)) {
        walk(v[k], s.properties[k], p, out, prune);
      } else if (!s.preserveUnknownFields) {
        out.push(p);
        if (prune) delete v[k];
      }
    }
  } else if (s.type === 'map' && isJsonObject(v)) {
    for (const k of Object.keys(v)) walk(v[k], s.values, `${path}.${k}`, out, prune);
  } else if (s.type === 'array' && Array.isArray(v)) {
    v.forEach((x, i) => walk(x, s.items, `${path}[${i}]`, out, prune));
  }
}
