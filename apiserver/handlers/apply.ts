import { ApiError, errors, type Cause } from '../api/errors';
import { sameApiVersion } from '../api/group-names';
import { isObject, type KObject } from '../api/types';
import { apiVersionOf } from '../registry/resource-type';
import { parseDocument, readBody } from '../server/decode';
import { queryBool } from '../server/request-info';
import type { ApplyOptions } from '../store/object-store';
import { checkFields, parseFieldValidation } from '../validation/field-validation';
import { findUnknownFields, pruneUnknownFields } from '../validation/unknown-fields';
import { reply, writeContext, type ResourceRequest } from './context';

/** The group of PatchOptions in Status details (upstream's meta.k8s.io, served here as meta.svc.io). */
const META_GROUP = 'meta.svc.io';

/** 422 on PatchOptions, as upstream's ValidatePatchOptions answers (`PatchOptions.meta.k8s.io "" is invalid: ...`). */
export function patchOptionsInvalid(field: string, reason: string, message: string): ApiError {
  const causes: Cause[] = [{ reason, message, field }];
  return new ApiError('Invalid', `PatchOptions.${META_GROUP} "" is invalid: ${field}: ${message}`, { group: META_GROUP, kind: 'PatchOptions', name: '', causes });
}

/**
 * The applied configuration of a request (Appendix C): a YAML (or JSON) document, or CBOR behind
 * its gate, of the URL's kind and version, without managedFields (400 otherwise, upstream's
 * texts). Unknown and duplicate fields go by fieldValidation as for other writes: Strict
 * refuses them (400), Warn reports them, and both drop unknown fields before the merge
 * (upstream refuses fields not in the schema whatever the setting).
 */
export function appliedConfiguration(r: ResourceRequest, body: Buffer, format: 'yaml' | 'cbor'): { config: KObject; warnings: string[] } {
  const fv = parseFieldValidation(r.query.get('fieldValidation'));
  const { value, duplicates } = format === 'yaml' ? parseYaml(body) : parseDocument(body, format);
  if (!isObject(value)) throw errors.badRequest('error decoding patch: the applied configuration must be an object');
  const want = apiVersionOf(r.type);
  if (!sameApiVersion(value.apiVersion, want) || value.kind !== r.type.kind) {
    const gv = typeof value.apiVersion === 'string' ? (value.apiVersion.includes('/') ? value.apiVersion : `/${value.apiVersion}`) : '/';
    throw errors.badRequest(`invalid object type: ${gv}, Kind=${typeof value.kind === 'string' ? value.kind : ''}`);
  }
  if (value.metadata === undefined || value.metadata === null) value.metadata = {};
  if (!isObject(value.metadata)) throw errors.badRequest('error decoding patch: metadata must be an object');
  if (Array.isArray(value.metadata.managedFields)) throw errors.badRequest('metadata.managedFields must be nil');
  const warnings = checkFields({ unknown: findUnknownFields(value, r.type.schema), duplicates }, fv);
  pruneUnknownFields(value, r.type.schema);
  const config = value as KObject;
  if (config.metadata.name !== undefined && config.metadata.name !== r.info.name) {
    throw errors.badRequest(`the name of the object (${String(config.metadata.name)}) does not match the name on the URL (${r.info.name})`);
  }
  return { config, warnings };
}

/**
 * A YAML body; one that looks like JSON (kubectl, client-go and the Python client send JSON) is
 * read by the JSON reader first, a thirtieth of the YAML reader's cost for the same result (JSON
 * is YAML), and by the YAML reader when it is not JSON after all.
 */
function parseYaml(body: Buffer): ReturnType<typeof parseDocument> {
  let i = 0;
  while (i < body.length && (body[i] === 0x20 || body[i] === 0x0a || body[i] === 0x0d || body[i] === 0x09)) i++;
  if (body[i] === 0x7b) {
    try {
      return parseDocument(body, 'json');
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
    }
  }
  return parseDocument(body, 'yaml');
}

/** ?force, a boolean only for apply. */
export function applyForce(r: ResourceRequest): boolean {
  return r.query.has('force') ? queryBool(r.query, 'force') : false;
}

/**
 * PATCH with application/apply-patch+yaml (or +cbor behind CBORServingAndStorage): server-side
 * apply (spec 4.3, 4.4, Appendix C). fieldManager is required (422 as upstream); the object is
 * created when it does not exist (201), which needs the create permission besides patch (the
 * router authorized patch); dryRun, fieldValidation and admission as for other writes; 409 with
 * one cause per conflicting field unless force=true. `narrow` is what a sub-resource writes and owns.
 */
export async function handleApply(r: ResourceRequest, format: 'yaml' | 'cbor', narrow: Pick<ApplyOptions, 'keep' | 'only'> = {}): Promise<void> {
  const ctx = writeContext(r);
  if (!ctx.fieldManager) throw patchOptionsInvalid('fieldManager', 'FieldValueRequired', 'Required value: is required for apply patch');
  const force = applyForce(r);
  const { config, warnings } = appliedConfiguration(r, await readBody(r.req), format);
  const beforeCreate = async () => {
    if (!r.authorizeVerb) throw errors.internal('no authorizer provided, unable to authorize a create on update');
    await r.authorizeVerb('create');
  };
  const { object, created } = await r.store.apply(r.type, r.info.namespace, r.info.name, config, ctx, { force, beforeCreate, ...narrow });
  reply(r, created ? 201 : 200, object, { warnings });
}
