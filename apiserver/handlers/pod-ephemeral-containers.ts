import { ApiError, errors } from '../api/errors';
import { isObject, type KObject } from '../api/types';
import { applyPatch, type PatchFormat } from '../patch/patch-by-format';
import { checkObject, decodeObject, objectFormat, parseDocument, readBody } from '../server/decode';
import { bodyFormat } from '../server/negotiation';
import { parseFieldValidation } from '../validation/field-validation';
import { handleGet } from './get';
import { cborServed, reply, writeContext, type ResourceRequest } from './context';

/**
 * The pods/ephemeralcontainers sub-resource (register under '/pods/ephemeralcontainers'), as
 * upstream's EphemeralContainersREST: GET returns the pod; PUT takes a whole pod and PATCH (json,
 * merge, strategic merge) patches the current one, and of the result only
 * spec.ephemeralContainers is kept; everything else stays as stored (upstream's
 * dropNonEphemeralContainerUpdates). The write goes through the store with subresource
 * 'ephemeralcontainers', so the pod type's update rules apply: containers may only be added,
 * existing ones never changed or removed, new ones validated as ephemeral containers (422).
 * A resourceVersion in the body pins the write (409).
 */
export async function handlePodEphemeralContainers(r: ResourceRequest): Promise<void> {
  if (r.info.verb === 'get') return handleGet(r);
  if (r.info.verb !== 'update' && r.info.verb !== 'patch') {
    throw errors.methodNotAllowed(`the server does not allow this method on the requested resource (${r.req.method ?? ''})`);
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
    if (format === 'apply-patch' || format === 'apply-patch-cbor') throw new ApiError('UnsupportedMediaType', 'server-side apply (application/apply-patch+yaml) is not served by this version of svc-apiserver yet');
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
      const next = structuredClone(current);
      const spec = isObject(next.spec) ? next.spec : (next.spec = {});
      const eph = isObject(wanted.spec) ? wanted.spec.ephemeralContainers : undefined;
      if (eph === undefined || eph === null) delete spec.ephemeralContainers;
      else spec.ephemeralContainers = structuredClone(eph);
      if (pinned) next.metadata.resourceVersion = pinned;
      else delete next.metadata.resourceVersion;
      return next;
    },
    ctx,
  );
  reply(r, 200, object, { warnings });
}
