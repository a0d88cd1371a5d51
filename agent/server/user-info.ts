/** Who a request to the agent's server comes from, as authentication decided (upstream's user.Info). */
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** Upstream's superuser group: members are allowed everything without asking the API server. */
export const MASTERS_GROUP = 'system:masters';
export const ANONYMOUS_USER = 'system:anonymous';
export const UNAUTHENTICATED_GROUP = 'system:unauthenticated';
export const AUTHENTICATED_GROUP = 'system:authenticated';
