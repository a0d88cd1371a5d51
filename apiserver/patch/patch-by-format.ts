/** Applies a PATCH body of one of the three transforming formats (named so that readers looking for server-side apply, Appendix C, do not land here). */
import { ApiError } from '../api/errors';
import { bodyLimitBytes, maxNestingDepth, measureJson } from './json-bounds';
import { applyJsonPatch, defaultJsonPatchBounds } from './json-patch';
import { isJsonObject } from './json-value';
import { applyMergePatch } from './merge-patch';
import { applyStrategicMergePatch } from './strategic-merge';

/** The PATCH body formats of spec 4.3 that transform the stored object (server-side apply is not one of them). */
export type PatchFormat = 'json-patch' | 'merge-patch' | 'strategic-merge-patch';

/** What a patch may produce and cost; the server's are the body limit (json-bounds.ts). */
export interface PatchBounds {
  /** Largest patched object (measureJson size). */
  maxBytes: number;
  /** JSON Patch only: upstream's accumulated copy limit and the work bound (json-patch.ts). */
  maxCopyBytes: number;
  maxWork: number;
}

export const defaultPatchBounds: PatchBounds = { maxBytes: bodyLimitBytes, ...defaultJsonPatchBounds };

/**
 * The object after applying a parsed patch of one format; the schema drives strategic merge's
 * list keys. Throws the format's ApiError for a patch that cannot apply, 413 when the patched
 * object is larger than bounds.maxBytes and 422 when it nests deeper than maxNestingDepth.
 *
 * A merge or strategic merge patch builds its result from the object and the patch, each value
 * at most once, so the result is never larger than both together; a JSON patch stays below
 * (object + patch + maxCopyBytes) while it applies (json-patch.ts). Upstream has no bound of its
 * own on the result: etcd refuses a value over its request limit, which kube-apiserver answers
 * with 413; the bound here also holds for dryRun, which never reaches the store.
 */
export function applyPatch(
  format: PatchFormat,
  current: unknown,
  patch: unknown,
  schema: Parameters<typeof applyStrategicMergePatch>[2],
  bounds: PatchBounds = defaultPatchBounds,
): unknown {
  const result = applyByFormat(format, current, patch, schema, bounds);
  const { size, depth } = measureJson(result, bounds.maxBytes);
  if (size > bounds.maxBytes) {
    throw new ApiError('RequestEntityTooLarge', `the patched object is larger than the limit of ${bounds.maxBytes} bytes`);
  }
  if (depth > maxNestingDepth && !withinManagedFieldsAllowance(result, depth)) {
    const message = `the patched object nests deeper than ${maxNestingDepth} levels of objects and arrays`;
    throw new ApiError('Invalid', message, { causes: [{ reason: 'FieldValueInvalid', message }] });
  }
  return result;
}

/**
 * The managedFields the server keeps for an object nest a few levels below the fields they own
 * (metadata.managedFields[i].fieldsV1.f:spec..., and {} for each owned leaf): an object whose
 * fields nest maxNestingDepth levels carries managedFields about 6 levels deeper. They are
 * allowed that much more, so that every stored object can be patched again; its other fields are not.
 */
const managedFieldsAllowance = 8;

function withinManagedFieldsAllowance(result: unknown, depth: number): boolean {
  if (depth > maxNestingDepth + managedFieldsAllowance || !isJsonObject(result) || !isJsonObject(result.metadata)) return false;
  const metadata = { ...result.metadata, managedFields: null };
  return measureJson({ ...result, metadata }).depth <= maxNestingDepth;
}

function applyByFormat(format: PatchFormat, current: unknown, patch: unknown, schema: Parameters<typeof applyStrategicMergePatch>[2], bounds: PatchBounds): unknown {
  switch (format) {
    case 'json-patch':
      return applyJsonPatch(current, patch, bounds);
    case 'merge-patch':
      return applyMergePatch(current, patch);
    case 'strategic-merge-patch':
      return applyStrategicMergePatch(current, patch, schema);
  }
}
