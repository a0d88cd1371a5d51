import { ApiError } from '../api/errors';
import { clampToSafeInteger, INT64_MAX, INT64_MIN, int64TextError, MAX_DURATION_SECONDS, parseInt64 } from '../api/integers';
import type { KObject } from '../api/types';
import { isObject } from '../api/types';
import { CBOR_MEDIA_TYPE } from '../codec/cbor-wire';
import { decodeObject as decodeProtobuf, PROTOBUF_MEDIA_TYPE } from '../codec/envelope';
import { deleteOptionsSchema } from '../registry/meta-schemas';
import { parseDocument, readBody } from '../server/decode';
import type { DeleteOptions } from '../store/object-store';
import { cborServed, listQuery, reply, writeContext, type ResourceRequest } from './context';

/** DELETE item (2.5 DeleteOptions in the body or the query). 200 with the object while it terminates, else a Success Status. */
export async function handleDelete(r: ResourceRequest): Promise<void> {
  const ctx = writeContext(r);
  const options = await deleteOptions(r);
  if (options.unsafeIgnoreReadError) return unsafeDelete(r);
  const { object, gone } = await r.store.delete(r.type, r.info.namespace, r.info.name, options, ctx);
  if (!gone) {
    reply(r, 200, object);
    return;
  }
  reply(r, 200, success(r, object));
}

/** DELETE collection: deletes every object the selectors match, with the same options each. */
export async function handleDeleteCollection(r: ResourceRequest): Promise<void> {
  const ctx = writeContext(r);
  const options = await deleteOptions(r);
  reply(r, 200, await r.store.deleteCollection(r.type, r.info.namespace, listQuery(r), options, ctx));
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

async function deleteOptions(r: ResourceRequest): Promise<DeleteOptions> {
  const body = await readBody(r.req);
  let o: Record<string, unknown> = {};
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
  const q = r.query;
  const out: DeleteOptions = {};
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the client's value, of whatever JSON type, as String() prints it
  const grace = q.get('gracePeriodSeconds') ?? (o.gracePeriodSeconds !== undefined ? String(o.gracePeriodSeconds) : null);
  if (grace !== null) out.gracePeriodSeconds = parseGracePeriod(grace);
  const policy = q.get('propagationPolicy') ?? (o.propagationPolicy as string | undefined);
  if (policy !== undefined && policy !== null) {
    if (policy !== 'Orphan' && policy !== 'Background' && policy !== 'Foreground') {
      throw new ApiError('BadRequest', `propagationPolicy: Unsupported value: "${policy}": supported values: "Background", "Foreground", "Orphan"`);
    }
    out.propagationPolicy = policy;
  }
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the client's value, of whatever JSON type, as String() prints it
  const orphan = q.get('orphanDependents') ?? (o.orphanDependents !== undefined ? String(o.orphanDependents) : null);
  if (orphan !== null) {
    out.orphanDependents = orphan === 'true';
    if (out.propagationPolicy) throw new ApiError('BadRequest', 'orphanDependents: Invalid value: cannot set both orphanDependents and propagationPolicy');
  }
  if (isObject(o.preconditions)) {
    const p = o.preconditions;
    out.preconditions = {
      uid: typeof p.uid === 'string' ? p.uid : undefined,
      resourceVersion: typeof p.resourceVersion === 'string' ? p.resourceVersion : undefined,
    };
  }
  if (o.ignoreStoreReadErrorWithClusterBreakingPotential === true) {
    // Spec 2.5: alpha, behind AllowUnsafeMalformedObjectDeletion, and alone: no other option may be set.
    if (!r.gates?.has('AllowUnsafeMalformedObjectDeletion')) {
      throw new ApiError('BadRequest', 'ignoreStoreReadErrorWithClusterBreakingPotential: Forbidden: the AllowUnsafeMalformedObjectDeletion feature gate is not enabled');
    }
    const others = [
      ['dryRun', r.query.getAll('dryRun').length > 0 || o.dryRun !== undefined],
      ['gracePeriodSeconds', out.gracePeriodSeconds !== undefined],
      ['orphanDependents', out.orphanDependents !== undefined],
      ['preconditions', out.preconditions !== undefined],
      ['propagationPolicy', out.propagationPolicy !== undefined],
    ].filter(([, set]) => set).map(([name]) => name);
    if (others.length > 0) {
      throw new ApiError('BadRequest', `ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: must not be combined with ${others.join(', ')}`);
    }
    out.unsafeIgnoreReadError = true;
  }
  return out;
}

/**
 * gracePeriodSeconds is an int64 (upstream's DeleteOptions): text that is not one is a 400. The
 * deletion deadline is now plus that many seconds, which upstream computes as a time.Duration
 * and which overflows past MAX_DURATION_SECONDS (about 292 years); a longer grace period is
 * refused here rather than wrapped or turned into an invalid date. Negative values stay (the
 * deleter treats them as 0).
 */
function parseGracePeriod(text: string): number {
  const n = parseInt64(text);
  if (n === undefined) {
    const why = int64TextError(text) === 'value out of range' ? `must be between ${INT64_MIN} and ${INT64_MAX}` : 'must be an integer';
    throw new ApiError('BadRequest', `gracePeriodSeconds: Invalid value: "${text}": ${why}`);
  }
  if (n > BigInt(MAX_DURATION_SECONDS)) {
    throw new ApiError('BadRequest', `gracePeriodSeconds: Invalid value: "${text}": must be at most ${MAX_DURATION_SECONDS} (about 292 years)`);
  }
  return clampToSafeInteger(n);
}
