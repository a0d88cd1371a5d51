import { errors } from '../api/errors';
import type { KObject } from '../api/types';
import { isObject } from '../api/types';
import type { TokenReviewer } from '../authn/token-reviewer';
import { decodeObject, objectFormat, readBody } from '../server/decode';
import { bodyFormat } from '../server/negotiation';
import { parseFieldValidation } from '../validation/field-validation';
import { cborServed, reply, type ResourceRequest } from './context';

/**
 * POST /apis/authentication.svc.io/{v1,v1beta1}/tokenreviews (spec 2.7): runs the token
 * authenticators on spec.token and answers 201 with the status; nothing is stored. The router
 * sends creates of "authentication.svc.io/tokenreviews" here; other verbs are 405.
 */
export function makeTokenReviewHandler(reviewer: TokenReviewer): (r: ResourceRequest) => Promise<void> {
  return async (r) => {
    if (r.info.verb !== 'create' || r.info.name) throw errors.methodNotAllowed(`the server does not allow this method on the requested resource (${r.req.method ?? ''})`);
    const format = bodyFormat(r.req.headers['content-type'], 'POST', { protobuf: true, cbor: cborServed(r) });
    const body = await readBody(r.req);
    const { object, warnings } = decodeObject(body, objectFormat(format), r.type, parseFieldValidation(r.query.get('fieldValidation')));
    const spec = isObject(object.spec) ? object.spec : {};
    const token = typeof spec.token === 'string' ? spec.token : '';
    // Upstream's wording for an empty token.
    if (token === '') throw errors.badRequest('token is required for TokenReview in authentication');
    const audiences = Array.isArray(spec.audiences) ? spec.audiences.filter((a): a is string => typeof a === 'string') : [];
    const s = await reviewer.review(token, audiences);
    const status: Record<string, unknown> = { authenticated: s.authenticated };
    if (s.user) {
      status.user = { username: s.user.username, ...(s.user.uid ? { uid: s.user.uid } : {}), groups: s.user.groups, ...(s.user.extra ? { extra: s.user.extra } : {}) };
    } else status.user = {};
    if (s.audiences) status.audiences = s.audiences;
    if (s.error) status.error = s.error;
    const out: KObject = { apiVersion: object.apiVersion, kind: 'TokenReview', metadata: { ...object.metadata, creationTimestamp: undefined }, spec, status };
    reply(r, 201, out, { warnings });
  };
}
