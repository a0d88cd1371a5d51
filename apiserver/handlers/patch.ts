import { ApiError } from '../api/errors';
import { handleApply, patchOptionsInvalid } from './apply';
import { bodyFormat } from '../server/negotiation';
import { checkObject, parseDocument, readBody } from '../server/decode';
import { applyPatch, type PatchFormat } from '../patch/patch-by-format';
import { parseFieldValidation } from '../validation/field-validation';
import { cborServed, reply, writeContext, type ResourceRequest } from './context';

/**
 * PATCH item (4.3): json-patch, merge-patch and strategic-merge-patch. The patch is re-applied to
 * the latest object when a concurrent write wins, unless it pins metadata.resourceVersion.
 * Server-side apply (apply-patch+yaml, and +cbor behind its gate) is apply.ts's.
 */
export async function handlePatch(r: ResourceRequest): Promise<void> {
  // For PATCH, bodyFormat answers a patch format or apply-patch (415 otherwise); with the
  // CBORServingAndStorage gate, application/apply-patch+cbor is apply too (spec 4.3).
  const format = bodyFormat(r.req.headers['content-type'], 'PATCH', { cbor: cborServed(r), strategicMerge: !r.type.customResource });
  if (format === 'apply-patch' || format === 'apply-patch-cbor') return handleApply(r, format === 'apply-patch' ? 'yaml' : 'cbor');
  if (r.query.has('force')) throw patchOptionsInvalid('force', 'FieldValueForbidden', 'Forbidden: may not be specified for non-apply patch');
  const fv = parseFieldValidation(r.query.get('fieldValidation'));
  const ctx = writeContext(r);
  const { value: patch, duplicates } = parseDocument(await readBody(r.req), 'json');
  let warnings: string[] = [];
  const { object } = await r.store.update(
    r.type,
    r.info.namespace,
    r.info.name,
    (current) => {
      if (!current) throw new ApiError('NotFound', `${r.type.resource} "${r.info.name}" not found`);
      const checked = checkObject(applyPatch(format as PatchFormat, current, patch, r.type.schema), duplicates, r.type, fv);
      warnings = checked.warnings;
      // A patch that does not mention resourceVersion applies to whatever is current.
      const pinned = pinnedVersion(patch, format);
      if (!pinned) delete checked.object.metadata.resourceVersion;
      return checked.object;
    },
    { ...ctx },
  );
  reply(r, 200, object, { warnings });
}

function pinnedVersion(patch: unknown, format: string): boolean {
  if (format === 'json-patch') {
    return Array.isArray(patch) && patch.some((op) => typeof op === 'object' && op !== null && String((op as { path?: unknown }).path).startsWith('/metadata/resourceVersion'));
  }
  const meta = (patch as { metadata?: { resourceVersion?: unknown } } | null)?.metadata;
  return typeof meta?.resourceVersion === 'string' && meta.resourceVersion !== '';
}
