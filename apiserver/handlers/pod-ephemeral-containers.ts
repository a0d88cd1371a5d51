import { ApiError, errors } from '../api/errors';
import { isObject, type KObject } from '../api/types';
import { applyPatch, type PatchFormat } from '../patch/patch-by-format';
import { checkObject, decodeObject, objectFormat, parseDocument, readBody } from '../server/decode';
import { bodyFormat } from '../server/negotiation';
import { parseFieldValidation } from '../validation/field-validation';
import { handleGet } from './get';
import { setOf } from '../apply/field-set';
import { handleApply } from './apply';
import { cborServed, reply, writeContext, type ResourceRequest } from './context';

/**
 * The pods/ephemeralcontainers sub-resource (register under '/pods/ephemeralcontainers'), as
 * upstream's EphemeralContainersREST: GET returns the pod; PUT takes a whole pod and PATCH (json,
 * merge, strategic merge) patches the current one, and of the result only
 * spec.ephemeralContainers is kept; everything else stays as stored (upstream's
 * dropNonEphemeralContainerUpdates). The write goes through the store with subresource
 * 'ephemeralcontainers', so the pod type's update rules apply: containers may only be added,
 * existing ones never changed or removed, new ones validated as ephemeral containers (422).
 * A resourceVersion in the body pins the write (409). Server-side apply merges the configuration
 * onto the pod as on the main resource, under an entry with subresource ephemeralcontainers, and
 * keeps of the result only the list, as the other writes.
 */
export async function handlePodEphemeralContainers(r: ResourceRequest): Promise<void> {
  if (r.info.verb === 'get') return handleGet(r);
  if (r.info.verb !== 'update' && r.info.verb !== 'patch') {
    throw errors.methodNotAllowed(`the server does not allow this method on the requested resource (${r.req.method ?? ''})`);
  }
  if (r.info.verb === 'patch') {
    const format = bodyFormat(r.req.headers['content-type'], 'PATCH', { cbor: cborServed(r) });
    if (format === 'apply-patch' || format === 'apply-patch-cbor') {
      const keep = (applied: KObject, current: KObject | null) => {
        const next = onlyEphemeral(current!, applied, applied.metadata.resourceVersion);
        if (applied.metadata.managedFields) next.metadata.managedFields = applied.metadata.managedFields;
        else delete next.metadata.managedFields;
        return next;
      };
      return handleApply(r, format === 'apply-patch' ? 'yaml' : 'cbor', { keep, only: EPHEMERAL_ONLY });
    }
  }
  const fv = parseFieldValidation(r.query.get('fieldValidation'));
  const ctx = writeContext(r);
  const body = await readBody(r.req);
  let warnings: string[] = [];
  let compute: (current: KObject) => { object: KObject; pinned: string | undefined };
  if (r.info.verb === 'update') {
    const format = bodyFormat(r.req.headers['content-type'], 'PUT', { cbor: cborServed(r) });
    const decoded = decodeObject(body, objectFormat(format), r.type, fv);
    warnings = decoded.warnings;
    const input = decoded.object;
    if (input.metadata.name !== undefined && input.metadata.name !== r.info.name) {
      throw errors.badRequest(`the name of the object (${input.metadata.name}) does not match the name on the URL (${r.info.name})`);
    }
    compute = () => ({ object: input, pinned: input.metadata.resourceVersion || undefined });
  } else {
    const format = bodyFormat(r.req.headers['content-type'], 'PATCH', { cbor: cborServed(r) });
    const { value: patch, duplicates } = parseDocument(body, 'json');
    compute = (current) => {
      const checked = checkObject(applyPatch(format as PatchFormat, current, patch, r.type.schema), duplicates, r.type, fv);
      warnings = checked.warnings;
      const meta = (patch as { metadata?: { resourceVersion?: unknown } } | null)?.metadata;
      const pinned = format !== 'json-patch' && typeof meta?.resourceVersion === 'string' && meta.resourceVersion !== '' ? meta.resourceVersion : undefined;
      return { object: checked.object, pinned };
    };
  }
  const { object } = await r.store.update(
    r.type,
    r.info.namespace,
    r.info.name,
    (current) => {
      if (!current) throw new ApiError('NotFound', `pods "${r.info.name}" not found`);
      const { object: wanted, pinned } = compute(current);
      return onlyEphemeral(current, wanted, pinned);
    },
    ctx,
  );
  reply(r, 200, object, { warnings });
}

/** What an applier owns through this sub-resource (upstream's include filter for it). */
const EPHEMERAL_ONLY = setOf([['f:spec', 'f:ephemeralContainers']]);

/** The current pod with the wanted spec.ephemeralContainers and nothing else of it (upstream's dropNonEphemeralContainerUpdates). */
function onlyEphemeral(current: KObject, wanted: KObject, pinned: string | undefined): KObject {
  const next = structuredClone(current);
  const spec = isObject(next.spec) ? next.spec : (next.spec = {});
  const eph = isObject(wanted.spec) ? wanted.spec.ephemeralContainers : undefined;
  if (eph === undefined || eph === null) delete spec.ephemeralContainers;
  else spec.ephemeralContainers = structuredClone(eph);
  if (pinned) next.metadata.resourceVersion = pinned;
  else delete next.metadata.resourceVersion;
  return next;
}
