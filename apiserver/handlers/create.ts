import { ApiError } from '../api/errors';
import { bodyFormat } from '../server/negotiation';
import { decodeObject, objectFormat, readBody } from '../server/decode';
import { readsOf } from '../server/protobuf';
import { parseFieldValidation } from '../validation/field-validation';
import { cborServed, reply, writeContext, type ResourceRequest, protobufServed } from './context';

/** POST collection: 201 Created with the stored object (or what would be stored, with dryRun=All). */
export async function handleCreate(r: ResourceRequest): Promise<void> {
  const format = bodyFormat(r.req.headers['content-type'], 'POST', { protobuf: protobufServed(r), cbor: cborServed(r) });
  const fv = parseFieldValidation(r.query.get('fieldValidation'));
  const ctx = writeContext(r);
  const body = await readBody(r.req);
  const { object, warnings } = decodeObject(body, objectFormat(format), r.type, fv);
  if (!object.metadata.name && !object.metadata.generateName) {
    throw new ApiError('Invalid', `${r.type.kind} "" is invalid: metadata.name: Required value: name or generateName is required`, {
      kind: r.type.kind,
      causes: [{ reason: 'FieldValueRequired', message: 'Required value: name or generateName is required', field: 'metadata.name' }],
    });
  }
  const created = await r.store.create(r.type, r.info.namespace, object, ctx);
  // What a create answers is the stored version (not a dry run's): its protobuf goes to the cache of
  // encoded versions, so the get that usually follows copies it instead of decoding and encoding.
  const protobufCache = ctx.dryRun ? undefined : readsOf(r.store, r.type, true, r.info.servedGroup);
  reply(r, 201, created, { warnings, yaml: format === 'yaml' && /yaml/.test(r.req.headers.accept ?? ''), protobufCache });
}
