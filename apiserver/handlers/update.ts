import { bodyFormat } from '../server/negotiation';
import { decodeObject, objectFormat, readBody } from '../server/decode';
import { parseFieldValidation } from '../validation/field-validation';
import { cborServed, reply, writeContext, type ResourceRequest, protobufServed } from './context';

/**
 * Resource types that may be created by PUT, as upstream's AllowCreateOnUpdate says
 * (events, endpoints and leases; everything else answers 404 for a missing object).
 */
const CREATE_ON_UPDATE = new Set(['events', 'endpoints', 'leases']);

/** PUT item: whole-object replace with optimistic concurrency (409 on a stale resourceVersion). */
export async function handleUpdate(r: ResourceRequest): Promise<void> {
  const format = bodyFormat(r.req.headers['content-type'], 'PUT', { protobuf: protobufServed(r), cbor: cborServed(r) });
  const fv = parseFieldValidation(r.query.get('fieldValidation'));
  const ctx = writeContext(r);
  const body = await readBody(r.req);
  const { object, warnings } = decodeObject(body, objectFormat(format), r.type, fv);
  const allowCreate = !r.info.subresource && CREATE_ON_UPDATE.has(r.type.resource);
  const { object: out, created } = await r.store.update(r.type, r.info.namespace, r.info.name, () => object, ctx, allowCreate);
  reply(r, created ? 201 : 200, out, { warnings });
}
