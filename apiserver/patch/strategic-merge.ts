/**
 * Strategic merge patch (application/strategic-merge-patch+json), following upstream's
 * apimachinery strategicpatch.StrategicMergePatch as the apiserver runs it (MergeParallelList and
 * IgnoreUnmatchedNulls on), with the schema standing in for Go struct tags:
 *
 * - object (not atomic) and map fields merge key by key; null deletes a key;
 * - atomic objects and lists without listType (or 'atomic') are replaced whole;
 * - listType 'map' lists merge element-wise by mapKeys[0] (upstream's patchMergeKey);
 * - listType 'set' lists merge as an ordered, de-duplicated union (upstream's patchStrategy merge
 *   on scalars; for object elements we compare whole values where upstream would refuse);
 * - where the schema says nothing (unknown field or type 'any') the value merges as RFC 7386.
 *
 * Directives: `$patch: replace | delete` on maps and list elements, `$retainKeys`,
 * `$deleteFromPrimitiveList/<field>` and `$setElementOrder/<field>`. Upstream rejects
 * `$patch: merge`; we accept it as the explicit form of the default (merge this map or element).
 * Result ordering of merged lists follows upstream: elements named by the patch (or by
 * $setElementOrder) take the patch's order, server-only elements keep their relative order and
 * are interleaved by their position in the live list.
 *
 * Errors: upstream answers 400 for malformed directives and 422 for "patch content doesn't
 * match retainKeys list"; its other merge errors (missing merge key, bad $patch value) surface as
 * 500, which we answer as 400 since the patch, not the server, is at fault.
 */
import { ApiError, errors } from '../api/errors';
import type { ArraySchema, Schema } from '../api/schema';
import { canonicalJson, deepClone, goTypeName, hasOwn, isJsonObject, setOwn, type JsonObject } from './json-value';
import { mergePatchInPlace } from './merge-patch';

const directiveMarker = '$patch';
const retainKeysDirective = '$retainKeys';
const setElementOrderPrefix = '$setElementOrder/';
const deleteFromPrimitiveListPrefix = '$deleteFromPrimitiveList/';

/**
 * Applies a strategic merge patch to doc under schema and returns the result; neither input is
 * mutated. Throws ApiError BadRequest for a malformed patch or directive, Invalid when the patch
 * content contradicts its $retainKeys.
 */
export function applyStrategicMergePatch(doc: unknown, patch: unknown, schema: Schema): unknown {
  if (!isJsonObject(patch)) {
    throw errors.badRequest(`json: cannot unmarshal ${goTypeName(patch)} into Go value of type map[string]interface {}`);
  }
  const original: JsonObject = isJsonObject(doc) ? deepClone(doc) : {};
  return mergeValue(original, patch, schema, '');
}

type Identity = (v: unknown) => string;

function isDirectiveKey(k: string): boolean {
  return (
    k === directiveMarker ||
    k === retainKeysDirective ||
    k.startsWith(setElementOrderPrefix) ||
    k.startsWith(deleteFromPrimitiveListPrefix)
  );
}

function childSchema(s: Schema | undefined, key: string): Schema | undefined {
  if (!s) return undefined;
  if (s.type === 'object') return hasOwn(s.properties, key) ? s.properties[key] : undefined;
  if (s.type === 'map') return s.values;
  if (s.type === 'any') return s;
  return undefined;
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** Merges patchV (never null here) into orig, which this module owns and may mutate. */
function mergeValue(orig: unknown, patchV: unknown, schema: Schema | undefined, path: string): unknown {
  if (!schema || schema.type === 'any') return mergePatchInPlace(orig, patchV);
  if (isJsonObject(patchV)) {
    const granular = schema.type === 'map' || (schema.type === 'object' && !schema.atomic);
    if (granular && isJsonObject(orig)) return mergeMap(orig, patchV, schema, path);
    return materialize(patchV, schema, path);
  }
  if (Array.isArray(patchV)) {
    if (schema.type === 'array' && Array.isArray(orig)) return mergeList(orig, patchV, schema, path);
    return materialize(patchV, schema, path);
  }
  return patchV;
}

/**
 * The value a patch fragment stands for when there is nothing to merge it into: merged into an
 * empty value, so directives are applied and nulls dropped (upstream only drops the nulls).
 */
function materialize(v: unknown, schema: Schema | undefined, path: string): unknown {
  if (!schema || schema.type === 'any') return mergePatchInPlace(undefined, v);
  if (isJsonObject(v)) return mergeMap({}, v, schema, path);
  if (Array.isArray(v)) return schema.type === 'array' ? mergeList([], v, schema, path) : deepClone(v);
  return v;
}

function mergeMap(original: JsonObject, patch: JsonObject, schema: Schema, path: string): JsonObject {
  if (hasOwn(patch, directiveMarker)) {
    const d = patch[directiveMarker];
    if (d === 'delete') return {};
    if (d === 'replace') return mergeMap({}, omit(patch, directiveMarker), schema, path);
    if (d !== 'merge') throw badPatchType(d, patch);
  }
  if (hasOwn(patch, retainKeysDirective)) applyRetainKeys(original, patch, path);

  // $setElementOrder first: it merges its list together with the list's patch (as upstream's
  // mergePatchIntoOriginal does), so those lists are skipped below.
  const handled = new Set<string>();
  for (const k of Object.keys(patch)) {
    if (!k.startsWith(setElementOrderPrefix)) continue;
    const field = k.slice(setElementOrderPrefix.length);
    if (applySetElementOrder(original, patch, field, patch[k], childSchema(schema, field), join(path, field))) {
      handled.add(field);
    }
  }

  for (const k of Object.keys(patch)) {
    if (isDirectiveKey(k) || handled.has(k)) continue;
    const v = patch[k];
    if (v === null) {
      if (hasOwn(original, k)) delete original[k];
      continue;
    }
    const fs = childSchema(schema, k);
    const p = join(path, k);
    setOwn(original, k, hasOwn(original, k) ? mergeValue(original[k], v, fs, p) : materialize(v, fs, p));
  }

  for (const k of Object.keys(patch)) {
    if (!k.startsWith(deleteFromPrimitiveListPrefix)) continue;
    const field = k.slice(deleteFromPrimitiveListPrefix.length);
    const del = patch[k];
    if (!Array.isArray(del)) throw errors.badRequest('invalid patch format of primitive list');
    const cur = hasOwn(original, field) ? original[field] : undefined;
    if (Array.isArray(cur)) {
      const drop = new Set(del.map(canonicalJson));
      setOwn(original, field, cur.filter((x) => !drop.has(canonicalJson(x))));
    }
  }
  return original;
}

/** Upstream's applyRetainKeysDirective: keys of original not listed are cleared before merging. */
function applyRetainKeys(original: JsonObject, patch: JsonObject, path: string): void {
  const rk = patch[retainKeysDirective];
  if (!Array.isArray(rk) || !rk.every((x) => typeof x === 'string')) {
    throw errors.badRequest('invalid patch format of retainKeys');
  }
  const keep = new Set<string>(rk);
  for (const k of Object.keys(patch)) {
    if (isDirectiveKey(k) || patch[k] === null || keep.has(k)) continue;
    const message = "patch content doesn't match retainKeys list";
    throw new ApiError('Invalid', message, { causes: [{ reason: 'FieldValueInvalid', message, field: join(path, k) }] });
  }
  for (const k of Object.keys(original)) if (!keep.has(k)) delete original[k];
}

/**
 * Handles `$setElementOrder/<field>`: merges the field's patch list (if any) and orders the result
 * by the directive. Returns whether the field's patch was consumed.
 */
function applySetElementOrder(
  original: JsonObject,
  patch: JsonObject,
  field: string,
  order: unknown,
  fs: Schema | undefined,
  path: string,
): boolean {
  if (!Array.isArray(order)) throw errors.badRequest('invalid patch format of setElementOrder list');
  // Only merging lists have an order to set; elsewhere the directive has nothing to act on.
  if (!fs || fs.type !== 'array' || (fs.listType !== 'map' && fs.listType !== 'set')) return false;
  const hasPatch = hasOwn(patch, field);
  const pv = patch[field];
  if (hasPatch && !Array.isArray(pv)) return false;
  const ov = hasOwn(original, field) ? original[field] : undefined;
  const hasOrig = Array.isArray(ov);
  if (!hasOrig && !hasPatch) return false;

  const key = fs.listType === 'map' ? mergeKeyOf(fs, path) : undefined;
  if (key !== undefined) {
    for (const e of order) if (!isJsonObject(e) || !hasOwn(e, key)) throw noMergeKey(e, key);
  }
  const id = key !== undefined ? mapKeyIdentity(key) : canonicalJson;
  if (hasPatch) checkOrderConsistent(pv as unknown[], order, id);

  const serverIds = hasOrig ? (ov as unknown[]).map(id) : [];
  let merged: unknown[];
  if (hasOrig && hasPatch) merged = mergeList(ov as unknown[], pv as unknown[], fs, path);
  else if (hasPatch) merged = mergeList([], pv as unknown[], fs, path);
  else merged = ov as unknown[];
  setOwn(original, field, reorder(merged, order.map(id), serverIds, id));
  return true;
}

/** Upstream's validatePatchWithSetOrderList: the patch list must be a subsequence of the order list. */
function checkOrderConsistent(patchList: unknown[], order: unknown[], id: Identity): void {
  const orderIds = order.map(id);
  let pos = 0;
  for (const x of patchList) {
    if (isJsonObject(x) && hasOwn(x, directiveMarker)) continue;
    const k = id(x);
    while (pos < orderIds.length && orderIds[pos] !== k) pos++;
    if (pos >= orderIds.length) {
      throw errors.badRequest(
        `the order in patch list ${JSON.stringify(patchList)} doesn't match $setElementOrder list ${JSON.stringify(order)}`,
      );
    }
    pos++;
  }
}

function mergeList(orig: unknown[], patch: unknown[], schema: ArraySchema, path: string): unknown[] {
  if (schema.listType === 'set') return mergeSet(orig, patch);
  if (schema.listType !== 'map') return deepClone(patch);
  const key = mergeKeyOf(schema, path);
  // Upstream merges scalar elements as a set whatever the merge key says.
  if (patch.every((x) => !isJsonObject(x)) && orig.every((x) => !isJsonObject(x))) return mergeSet(orig, patch);

  const id = mapKeyIdentity(key);
  const serverIds = orig.map(id);
  let current = orig;
  const regular: JsonObject[] = [];
  // Deleted keys are collected and filtered out once: filtering per directive was quadratic.
  const deleted = new Set<string>();
  let replace = false;
  for (const el of patch) {
    if (!isJsonObject(el)) {
      throw errors.badRequest(`${path}: cannot merge ${JSON.stringify(el)} into a list of objects merged by key ${key}`);
    }
    if (!hasOwn(el, directiveMarker)) {
      regular.push(el);
      continue;
    }
    const d = el[directiveMarker];
    if (d === 'delete') {
      if (!hasOwn(el, key)) throw noMergeKey(el, key);
      deleted.add(id(el));
    } else if (d === 'replace') {
      // Upstream: the list becomes the patch's other elements; keep scanning for other directives.
      replace = true;
    } else if (d === 'merge') {
      regular.push(omit(el, directiveMarker));
    } else {
      throw badPatchType(d, el);
    }
  }
  if (replace) current = [];
  else if (deleted.size > 0) current = current.filter((o) => !deleted.has(id(o)));

  const positions = new Map<string, number>();
  current.forEach((o, i) => {
    const k = id(o);
    if (!positions.has(k)) positions.set(k, i);
  });
  for (const el of regular) {
    if (!hasOwn(el, key)) throw noMergeKey(el, key);
    const k = id(el);
    const at = positions.get(k);
    if (at !== undefined) {
      current[at] = mergeValue(current[at], el, schema.items, `${path}[${at}]`);
    } else {
      positions.set(k, current.length);
      current.push(materialize(el, schema.items, `${path}[${current.length}]`));
    }
  }
  return reorder(current, regular.map(id), serverIds, id);
}

/** Ordered union without duplicates (upstream's deduplicateScalars), then the merge ordering. */
function mergeSet(orig: unknown[], patch: unknown[]): unknown[] {
  const seen = new Set<string>();
  const merged: unknown[] = [];
  for (const x of orig) {
    const k = canonicalJson(x);
    if (!seen.has(k)) {
      seen.add(k);
      merged.push(x);
    }
  }
  for (const x of patch) {
    const k = canonicalJson(x);
    if (!seen.has(k)) {
      seen.add(k);
      merged.push(deepClone(x));
    }
  }
  return reorder(merged, patch.map(canonicalJson), orig.map(canonicalJson), canonicalJson);
}

/**
 * Upstream's normalizeElementOrder: elements named in patchIds take that order, the others keep
 * the live order, and the two runs are interleaved by live position (mergeSortedSlice).
 */
function reorder(merged: unknown[], patchIds: string[], serverIds: string[], id: Identity): unknown[] {
  const patchIndex = firstIndex(patchIds);
  const serverIndex = firstIndex(serverIds);
  const fromPatch = sortByIndex(
    merged.filter((x) => patchIndex.has(id(x))),
    patchIndex,
    id,
  );
  const serverOnly = sortByIndex(
    merged.filter((x) => !patchIndex.has(id(x))),
    serverIndex,
    id,
  );
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < serverOnly.length || j < fromPatch.length) {
    if (i >= serverOnly.length) out.push(fromPatch[j++]);
    else if (j >= fromPatch.length) out.push(serverOnly[i++]);
    else {
      const li = serverIndex.get(id(serverOnly[i]));
      const ri = serverIndex.get(id(fromPatch[j]));
      if (li !== undefined && ri !== undefined && li < ri) out.push(serverOnly[i++]);
      else out.push(fromPatch[j++]);
    }
  }
  return out;
}

function firstIndex(ids: string[]): Map<string, number> {
  const m = new Map<string, number>();
  ids.forEach((k, i) => {
    if (!m.has(k)) m.set(k, i);
  });
  return m;
}

/** Stable sort by position in index; elements not in it keep their relative order at the end. */
function sortByIndex(items: unknown[], index: Map<string, number>, id: Identity): unknown[] {
  const pos = (x: unknown) => index.get(id(x)) ?? Number.MAX_SAFE_INTEGER;
  return items
    .map((x, i) => ({ x, i, p: pos(x) }))
    .sort((a, b) => a.p - b.p || a.i - b.i)
    .map((e) => e.x);
}

function mergeKeyOf(schema: ArraySchema, path: string): string {
  const key = schema.mapKeys?.[0];
  // A listType map without keys is a bug in the server's own schema, not in the request.
  if (!key) throw errors.internal(`cannot merge lists without merge key for ${path}`);
  return key;
}

/** Elements of a keyed list are the same element when their merge-key values are equal. */
function mapKeyIdentity(key: string): Identity {
  return (v) => (isJsonObject(v) && hasOwn(v, key) ? 'k' + canonicalJson(v[key]) : 'v' + canonicalJson(v));
}

function omit(o: JsonObject, key: string): JsonObject {
  const out: JsonObject = {};
  for (const k of Object.keys(o)) if (k !== key) setOwn(out, k, o[k]);
  return out;
}

function badPatchType(d: unknown, m: unknown): ApiError {
  return errors.badRequest(`unknown patch type: ${typeof d === 'string' ? d : JSON.stringify(d)} in map: ${JSON.stringify(m)}`);
}

function noMergeKey(m: unknown, key: string): ApiError {
  return errors.badRequest(`map: ${JSON.stringify(m)} does not contain declared merge key: ${key}`);
}
