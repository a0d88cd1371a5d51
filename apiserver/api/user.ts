/** The identity a request acts as (spec 5: username, uid, groups, extra). */
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export const anonymousUser: UserInfo = { username: 'system:anonymous', groups: ['system:unauthenticated'] };
