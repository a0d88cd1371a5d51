import { atomicList, map, obj, str } from '../schema-builders';

/** authentication.svc.io UserInfo (spec 2.7), shared by TokenReview and SelfSubjectReview. */
export const userInfoSchema = obj({
  username: str('The name that uniquely identifies this user among all active users.'),
  uid: str('A unique value that identifies this user across time.'),
  groups: atomicList(str(), 'The names of groups this user is a part of.'),
  extra: map(atomicList(str()), 'Any additional information provided by the authenticator.'),
});
