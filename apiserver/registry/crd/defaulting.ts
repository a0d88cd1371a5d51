import { isJsonObject } from '../../patch/json-value';

/**
 * Upstream's structural defaulting of custom resources (`default` in the schema): a field absent
 * from an object, or null where the schema is not nullable, takes a copy of its default, then the
 * defaults below it apply too; items of lists and values of maps are defaulted through `items` and
 * `additionalProperties`. Runs on every write (before validation) and every read from storage.
 * Changes obj in place.
 */
type Json = Record<string, unknown>;

export function applyDefaults(obj: unknown, schema: Json): void {
  walk(obj, schema);
}

function walk(v: unknown, s: Json): void {
  if (Array.isArray(v)) {
    if (isJsonObject(s.items)) for (const x of v) walk(x, s.items);
    return;
  }
  if (!isJsonObject(v)) return;
  const props = isJsonObject(s.properties) ? s.properties : undefined;
  if (props) {
    for (const [k, ps] of Object.entries(props)) {
      if (!isJsonObject(ps)) continue;
      const missing = !(k in v) || (v[k] === null && ps.nullable !== true);
      if (missing && ps.default !== undefined) v[k] = structuredClone(ps.default);
      if (k in v) walk(v[k], ps);
    }
  }
  if (isJsonObject(s.additionalProperties)) for (const x of Object.values(v)) walk(x, s.additionalProperties);
}

/** Whether a schema declares any default (objects of a schema without one need no defaulting pass). */
export function hasDefaults(s: unknown): boolean {
  if (Array.isArray(s)) return s.some(hasDefaults);
  if (!isJsonObject(s)) return false;
  if (s.default !== undefined) return true;
  return Object.values(s).some(hasDefaults);
}
