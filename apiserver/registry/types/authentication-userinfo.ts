import { atomicList, map, obj, str, wrappedList } from '../schema-builders';

/** authentication.svc.io UserInfo (spec 2.7), shared by TokenReview and SelfSubjectReview (upstream authentication/v1 UserInfo). */
export const userInfoSchema = obj('k8s.io.api.authentication.v1.UserInfo', {
  username: [1, str('The name that uniquely identifies this user among all active users.')],
  uid: [2, str('A unique value that identifies this user across time.')],
  groups: [3, atomicList(str(), 'The names of groups this user is a part of.')],
  extra: [4, map(wrappedList('k8s.io.api.authentication.v1.ExtraValue', str()), 'Any additional information provided by the authenticator.')],
});
