import { isObject } from '../api/types';

/**
 * Drops from the merged object the fields an applied configuration set to null (upstream applies
 * them as null, then its typed objects, which have no null fields, drop them). Follows only the
 * configuration's objects that hold a null; copies every object it changes, since the merged
 * object shares values with the live and applied ones.
 */
export function stripNulls(out: Record<string, unknown>, config: unknown): void {
  if (!isObject(config)) return;
  for (const [k, cv] of Object.entries(config)) {
    if (cv === null) {
      if (out[k] === null) delete out[k];
    } else if (isObject(cv) && isObject(out[k]) && holdsNull(cv)) {
      const copy = { ...out[k] };
      stripNulls(copy, cv);
      out[k] = copy;
    }
  }
}

function holdsNull(v: Record<string, unknown>): boolean {
  for (const x of Object.values(v)) if (x === null || (isObject(x) && holdsNull(x))) return true;
  return false;
}
