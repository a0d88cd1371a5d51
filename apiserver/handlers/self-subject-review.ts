import { errors } from '../api/errors';
import type { KObject } from '../api/types';
import { decodeObject, objectFormat, readBody } from '../server/decode';
import { bodyFormat } from '../server/negotiation';
import { parseFieldValidation } from '../validation/field-validation';
import { cborServed, reply, type ResourceRequest } from './context';

/**
 * POST /apis/authentication.svc.io/v1/selfsubjectreviews (4.9): answers 201 with the caller's
 * own user info (after impersonation, as upstream) in status.userInfo; nothing is stored. The
 * router sends creates of "authentication.svc.io/selfsubjectreviews" here; other verbs are 405.
 */
export async function handleSelfSubjectReview(r: ResourceRequest): Promise<void> {
  if (r.info.verb !== 'create' || r.info.name) throw errors.methodNotAllowed(`the server does not allow this method on the requested resource (${r.req.method ?? ''})`);
  const format = bodyFormat(r.req.headers['content-type'], 'POST', { protobuf: true, cbor: cborServed(r) });
  const body = await readBody(r.req);
  // kubectl auth whoami sends only kind and apiVersion; an empty body is accepted as that.
  const { object, warnings } =
    body.length === 0 || (format !== 'cbor' && body.toString('utf8').trim() === '')
      ? { object: { metadata: {} } as KObject, warnings: [] as string[] }
      : decodeObject(body, objectFormat(format), r.type, parseFieldValidation(r.query.get('fieldValidation')));
  const u = r.user;
  const out: KObject = {
    apiVersion: r.type.group + '/' + r.type.version,
    kind: 'SelfSubjectReview',
    metadata: { ...object.metadata, creationTimestamp: undefined },
    status: {
      userInfo: { username: u.username, ...(u.uid ? { uid: u.uid } : {}), groups: u.groups, ...(u.extra && Object.keys(u.extra).length > 0 ? { extra: u.extra } : {}) },
    },
  };
  reply(r, 201, out, { warnings });
}
