import { isObject } from './types';

/**
 * Whether two values serialize to the same JSON, without serializing them: members whose value
 * is undefined count as absent and undefined array elements as null, as JSON.stringify has it;
 * key order does not matter. One walk, no copies: the no-op-write and escalation checks compare
 * whole objects (up to the 3 MiB body limit) on every update.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i] ?? null, b[i] ?? null)) return false;
    return true;
  }
  if (!isObject(a) || !isObject(b)) return false;
  let defined = 0;
  for (const k of Object.keys(a)) {
    if (a[k] === undefined) continue;
    defined++;
    if (!jsonEqual(a[k], b[k])) return false;
  }
  for (const k of Object.keys(b)) if (b[k] !== undefined) defined--;
  return defined === 0;
}
