import { withMeta } from '../common-schemas';
import type { ResourceType } from '../resource-type';
import { atomicList, bool, described, obj, str } from '../schema-builders';
import { userInfoSchema } from './authentication-userinfo';

/**
 * authentication.svc.io TokenReview (spec 2.7), v1 and v1beta1: a virtual resource. Creating one
 * runs the token authenticators on spec.token (handlers/token-review.ts); nothing is stored, so
 * create is its only verb.
 */
const AUTHN = 'k8s.io.api.authentication.v1';

export const tokenReviewSchema = withMeta(`${AUTHN}.TokenReview`, {
  spec: [
    2,
    described('Spec holds information about the request being evaluated.', obj(`${AUTHN}.TokenReviewSpec`, {
      token: [1, str('The opaque bearer token.')],
      audiences: [2, atomicList(str(), 'Audiences the token should be valid for; empty means the API server audiences.')],
    })),
  ],
  status: [
    3,
    described('Status is filled in by the server and says whether the request can be authenticated.', obj(`${AUTHN}.TokenReviewStatus`, {
      authenticated: [1, bool('Whether the token is associated with a known user.')],
      user: [2, described('The UserInfo associated with the provided token.', userInfoSchema)],
      audiences: [4, atomicList(str(), 'Audiences the token is valid for, a subset of the requested ones.')],
      error: [3, str('Why the token could not be checked.')],
    })),
  ],
});

export function makeTokenReviewType(version: 'v1' | 'v1beta1'): ResourceType {
  return {
    group: 'authentication.svc.io',
    version,
    resource: 'tokenreviews',
    singular: 'tokenreview',
    kind: 'TokenReview',
    listKind: 'TokenReviewList',
    namespaced: false,
    schema: tokenReviewSchema,
    hasStatus: false,
    // Upstream deprecated v1beta1 in 1.19 and stopped serving it in 1.22 (spec 9.3); svc serves it for old webhook clients, with the warning.
    ...(version === 'v1beta1' ? { deprecation: { deprecatedIn: '1.19', removedIn: '1.22', replacement: { version: 'v1', kind: 'TokenReview' } } } : {}),
  };
}

export const tokenReviewTypes: readonly ResourceType[] = [makeTokenReviewType('v1'), makeTokenReviewType('v1beta1')];
