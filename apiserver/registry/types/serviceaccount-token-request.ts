import { withMeta } from '../common-schemas';
import type { ResourceType } from '../resource-type';
import { atomicList, described, int64, map, obj, ptr, str, time, wrappedList } from '../schema-builders';

/**
 * authentication.svc.io/v1 TokenRequest, the body of POST serviceaccounts/{name}/token. It is
 * not a resource of its own (not registered, absent from discovery as upstream): the
 * serviceaccounts token sub-resource decodes and answers with it.
 */
const AUTHN = 'k8s.io.api.authentication.v1';

export const tokenRequestSchema = withMeta(`${AUTHN}.TokenRequest`, {
  spec: [
    2,
    described('Spec holds information about the request being evaluated.', obj(`${AUTHN}.TokenRequestSpec`, {
      audiences: [1, atomicList(str(), 'Intended audiences of the token; empty means the API server audiences.')],
      expirationSeconds: [4, ptr(int64('Requested duration of validity of the token (default 3600, at least 600).'))],
      boundObjectRef: [
        3,
        described('Reference to an object the token will be bound to; the token is only valid while it exists.', obj(`${AUTHN}.BoundObjectReference`, {
          kind: [1, str('Kind of the referent: Pod, Secret or Node.')],
          apiVersion: [2, str('API version of the referent (v1).')],
          name: [3, str('Name of the referent.')],
          uid: [4, str('UID of the referent.'), 'uID'],
        })),
      ],
      attestations: [5, map(wrappedList(`${AUTHN}.AttestationValue`, str()), 'Claims the token should attest to (alpha upstream; not issued here).')],
    })),
  ],
  status: [
    3,
    described('Status is filled in by the server and holds the issued token.', obj(`${AUTHN}.TokenRequestStatus`, {
      token: [1, ptr(str('The opaque bearer token.'))],
      expirationTimestamp: [2, time('The time of expiration of the returned token.')],
    })),
  ],
});

export const tokenRequestType: ResourceType = {
  group: 'authentication.svc.io',
  version: 'v1',
  resource: 'tokenrequests',
  singular: 'tokenrequest',
  kind: 'TokenRequest',
  listKind: 'TokenRequestList',
  namespaced: true,
  schema: tokenRequestSchema,
  hasStatus: false,
};
