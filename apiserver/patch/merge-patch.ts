/**
 * RFC 7386 JSON Merge Patch (application/merge-patch+json), as upstream applies it with
 * evanphx/json-patch's MergePatch: objects merge recursively, null deletes a member, anything
 * else (arrays included) replaces. A non-object patch replaces the whole document, per the RFC;
 * the caller rejects a result that is not an object.
 */
import { deepClone, hasOwn, isJsonObject, setOwn, type JsonObject } from './json-value';

/** Applies patch to doc and returns the result; neither input is mutated. */
export function applyMergePatch(doc: unknown, patch: unknown): unknown {
  return mergePatchInPlace(deepClone(doc), patch);
}

/**
 * The RFC's MergePatch(Target, Patch) on a target this caller owns: target may be mutated and
 * returned; patch is never mutated and nothing in the result aliases it.
 */
export function mergePatchInPlace(target: unknown, patch: unknown): unknown {
  if (!isJsonObject(patch)) return deepClone(patch);
  const t: JsonObject = isJsonObject(target) ? target : {};
  for (const k of Object.keys(patch)) {
    const v = patch[k];
    if (v === null) {
      if (hasOwn(t, k)) delete t[k];
    } else {
      setOwn(t, k, mergePatchInPlace(hasOwn(t, k) ? t[k] : undefined, v));
    }
  }
  return t;
}
