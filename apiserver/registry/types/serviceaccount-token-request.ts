import { withMeta } from '../common-schemas';
import type { ResourceType } from '../resource-type';
import { atomicList, int64, obj, str, time } from '../schema-builders';

/**
 * authentication.svc.io/v1 TokenRequest, the body of POST serviceaccounts/{name}/token. It is
 * not a resource of its own (not registered, absent from discovery as upstream): the
 * serviceaccounts token sub-resource decodes and answers with it.
 */
export const tokenRequestSchema = withMeta({
  spec: obj({
    audiences: atomicList(str(), 'Intended audiences of the token; empty means the API server audiences.'),
    expirationSeconds: int64('Requested duration of validity of the token (default 3600, at least 600).'),
    boundObjectRef: obj({
      kind: str('Kind of the referent: Pod, Secret or Node.'),
      apiVersion: str('API version of the referent (v1).'),
      name: str('Name of the referent.'),
      uid: str('UID of the referent.'),
    }),
  }),
  status: obj({
    token: str('The opaque bearer token.'),
    expirationTimestamp: time('The time of expiration of the returned token.'),
  }),
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
