import { ApiError, errors } from '../api/errors';
import { isObject } from '../api/types';
import { handleGet } from './get';
import { cborServed, reply, writeContext, type ResourceRequest } from './context';
import { decodeObject, objectFormat, readBody } from '../server/decode';
import { bodyFormat } from '../server/negotiation';
import { parseFieldValidation } from '../validation/field-validation';

/**
 * The certificatesigningrequests/approval sub-resource (register under
 * 'certificates.svc.io/certificatesigningrequests/approval'). GET returns the CSR; PUT takes a whole
 * CSR and, as upstream's csrApprovalStrategy, changes only status.conditions: spec, the issued
 * certificate and metadata stay as stored. The write goes through the store with subresource
 * 'approval', so the CSR type's rules apply (upstream ValidateCertificateSigningRequestApprovalUpdate:
 * Approved and Denied only with status True, never both, no duplicate types, none removed → 422;
 * condition timestamps filled by its update hook). A resourceVersion in the body pins the write (409).
 */
export async function handleCsrApproval(r: ResourceRequest): Promise<void> {
  if (r.info.verb === 'get') return handleGet(r);
  if (r.info.verb !== 'update') {
    throw new ApiError('MethodNotAllowed', `the server does not allow this method on the requested resource (${r.req.method ?? ''})`);
  }
  const format = bodyFormat(r.req.headers['content-type'], 'PUT', { protobuf: true, cbor: cborServed(r) });
  const fv = parseFieldValidation(r.query.get('fieldValidation'));
  const ctx = { ...writeContext(r), subresource: 'approval' };
  const body = await readBody(r.req);
  const { object: input, warnings } = decodeObject(body, objectFormat(format), r.type, fv);
  const name = r.info.name;
  if (input.metadata.name !== undefined && input.metadata.name !== name) {
    throw errors.badRequest(`the name of the object (${input.metadata.name}) does not match the name on the URL (${name})`);
  }
  const wanted = (input.status as { conditions?: unknown } | undefined)?.conditions;
  const { object } = await r.store.update(
    r.type,
    r.info.namespace,
    name,
    (current) => {
      const next = structuredClone(current!);
      const status = isObject(next.status) ? next.status : (next.status = {});
      if (wanted === undefined || wanted === null) delete status.conditions;
      else status.conditions = structuredClone(wanted);
      if (input.metadata.resourceVersion) next.metadata.resourceVersion = input.metadata.resourceVersion;
      else delete next.metadata.resourceVersion;
      if (input.metadata.uid) next.metadata.uid = input.metadata.uid;
      return next;
    },
    ctx,
  );
  reply(r, 200, object, { warnings });
}
