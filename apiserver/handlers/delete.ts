import { ApiError } from '../api/errors';
import type { KObject } from '../api/types';
import { isObject } from '../api/types';
import { CBOR_MEDIA_TYPE } from '../codec/cbor-wire';
import { decodeObject as decodeProtobuf, PROTOBUF_MEDIA_TYPE } from '../codec/envelope';
import { deleteOptionsSchema } from '../registry/meta-schemas';
import { parseDocument, readBody } from '../server/decode';
import { cborServed, listQuery, reply, writeContext, type ResourceRequest } from './context';
import { deleteOptionsFrom, type RequestDeleteOptions } from './delete-options';

/** DELETE item (2.5 DeleteOptions in the body or the query). 200 with the object while it terminates, else a Success Status. */
export async function handleDelete(r: ResourceRequest): Promise<void> {
  const ctx = writeContext(r);
  const { options, dryRun } = await deleteOptions(r);
  // dryRun may come in the body (kubectl delete --dry-run=server sends it there), not only the query.
  if (dryRun) ctx.dryRun = true;
  if (options.unsafeIgnoreReadError) return unsafeDelete(r);
  const { object, gone } = await r.store.delete(r.type, r.info.namespace, r.info.name, options, ctx);
  const warnings = defaultPropagationWarnings(r, options);
  if (!gone) {
    reply(r, 200, object, { warnings });
    return;
  }
  reply(r, 200, success(r, object), { warnings });
}

/** The type's warning when a delete names no propagation policy and gets its default (upstream: Jobs orphan their pods). */
function defaultPropagationWarnings(r: ResourceRequest, options: RequestDeleteOptions['options']): string[] {
  const warning = r.type.deletion?.defaultPropagation?.warning;
  return warning && options.propagationPolicy === undefined && options.orphanDependents === undefined ? [warning] : [];
}

/** DELETE collection: deletes every object the selectors match, with the same options each. */
export async function handleDeleteCollection(r: ResourceRequest): Promise<void> {
  const ctx = writeContext(r);
  const { options, dryRun } = await deleteOptions(r);
  if (dryRun) ctx.dryRun = true;
  reply(r, 200, await r.store.deleteCollection(r.type, r.info.namespace, listQuery(r), options, ctx), { warnings: defaultPropagationWarnings(r, options) });
}

/**
 * The unsafe deletion of spec 2.5: removes an object that cannot be read, skipping finalizers,
 * preconditions and admission. A readable object is refused, so the option cannot bypass them.
 */
async function unsafeDelete(r: ResourceRequest): Promise<void> {
  // As upstream (KEP-3926): besides delete, the caller needs the extra verb
  // unsafe-delete-ignore-read-errors on the resource, so ordinary deleters cannot skip finalizers.
  if (!r.authorizeVerb) throw new ApiError('InternalError', 'unsafe deletion needs an authorizer');
  await r.authorizeVerb('unsafe-delete-ignore-read-errors');
  try {
    await r.store.get(r.type, r.info.namespace, r.info.name);
  } catch (err) {
    if (err instanceof ApiError && err.code === 500) {
      await r.store.remove(r.type, r.info.namespace, r.info.name);
      r.log.warn({ resource: r.type.resource, namespace: r.info.namespace, name: r.info.name, user: r.user.username }, 'unsafe deletion of an undecodable object');
      reply(r, 200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: r.info.name, group: r.type.group || undefined, kind: r.type.resource } });
      return;
    }
    throw err;
  }
  throw new ApiError('BadRequest', 'ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: the object can be read; delete it normally');
}

function success(r: ResourceRequest, obj: KObject): Record<string, unknown> {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    details: { name: obj.metadata.name, group: r.type.group || undefined, kind: r.type.resource, uid: obj.metadata.uid },
  };
}

/** The request's DeleteOptions: the body (JSON or YAML) decoded here, merged with the query by deleteOptionsFrom. */
async function deleteOptions(r: ResourceRequest): Promise<RequestDeleteOptions> {
  const body = await readBody(r.req);
  let o: Record<string, unknown> | undefined;
  const ct = r.req.headers['content-type'] ?? '';
  const mediaType = ct.split(';')[0].trim().toLowerCase();
  const cbor = mediaType === CBOR_MEDIA_TYPE;
  if (cbor && !cborServed(r)) {
    throw new ApiError('UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, ${PROTOBUF_MEDIA_TYPE}`);
  }
  // A CBOR body is binary: blank text means nothing only in JSON and YAML.
  if (body.length > 0 && (cbor || body.toString('utf8').trim() !== '')) {
    // kubectl (drain, debug --copy-to) sends its DeleteOptions as protobuf.
    const value =
      mediaType === PROTOBUF_MEDIA_TYPE ? decodeProtobuf(deleteOptionsSchema, body) : parseDocument(body, cbor ? 'cbor' : /yaml/.test(ct) ? 'yaml' : 'json').value;
    if (!isObject(value)) throw new ApiError('BadRequest', 'DeleteOptions must be an object');
    if (value.kind !== undefined && value.kind !== 'DeleteOptions') {
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the client's value, of whatever JSON type, as String() prints it
      throw new ApiError('BadRequest', `the kind in the data (${String(value.kind)}) does not match the expected kind (DeleteOptions)`);
    }
    o = value;
  }
  return deleteOptionsFrom(r.query, o, r.gates);
}
