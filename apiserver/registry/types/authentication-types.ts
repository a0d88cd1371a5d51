import type { ResourceType } from '../resource-type';
import { selfSubjectReviewTypes } from './authentication-selfsubjectreviews';
import { tokenReviewTypes } from './authentication-tokenreviews';

/**
 * The authentication.svc.io resources (TokenReview v1/v1beta1, SelfSubjectReview
 * v1/v1beta1/v1alpha1). They are virtual: register them so discovery and the router know them,
 * and route their creates to the handlers in Authentication.virtualCreates.
 */
export const authenticationTypes: readonly ResourceType[] = [...tokenReviewTypes, ...selfSubjectReviewTypes];
