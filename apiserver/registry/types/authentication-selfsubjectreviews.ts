import { withMeta } from '../common-schemas';
import type { ResourceType } from '../resource-type';
import { described, obj } from '../schema-builders';
import { userInfoSchema } from './authentication-userinfo';

/**
 * authentication.svc.io SelfSubjectReview (spec 2.7, 4.9): a virtual resource whose create
 * answers with the caller's own user info (handlers/self-subject-review.ts). v1 plus the older
 * v1beta1 and v1alpha1, which kubectl auth whoami falls back to.
 */
export const selfSubjectReviewSchema = withMeta('k8s.io.api.authentication.v1.SelfSubjectReview', {
  status: [2, described('Status is filled in by the server with the user attributes.', obj('k8s.io.api.authentication.v1.SelfSubjectReviewStatus', { userInfo: [1, described('User attributes of the user making this request.', userInfoSchema)] }))],
});

export function makeSelfSubjectReviewType(version: 'v1' | 'v1beta1' | 'v1alpha1'): ResourceType {
  return {
    group: 'authentication.svc.io',
    version,
    resource: 'selfsubjectreviews',
    singular: 'selfsubjectreview',
    kind: 'SelfSubjectReview',
    listKind: 'SelfSubjectReviewList',
    namespaced: false,
    schema: selfSubjectReviewSchema,
    hasStatus: false,
    // Upstream: v1beta1 since 1.27, deprecated with v1 GA in 1.28, served until 1.31 (svc still serves it, warning).
    ...(version === 'v1beta1' ? { deprecation: { deprecatedIn: '1.28', removedIn: '1.31', replacement: { version: 'v1', kind: 'SelfSubjectReview' } } } : {}),
  };
}

export const selfSubjectReviewTypes: readonly ResourceType[] = [makeSelfSubjectReviewType('v1'), makeSelfSubjectReviewType('v1beta1'), makeSelfSubjectReviewType('v1alpha1')];
