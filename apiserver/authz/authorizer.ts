import type { UserInfo } from '../api/user';
import type { RequestInfo } from '../server/request-info';

export type Decision = 'allow' | 'deny' | 'no-opinion';

/** Request attributes of A.1. */
export interface Attributes {
  user: UserInfo;
  info: RequestInfo;
}

/** One authorization mode (A.2): allow, deny (ends evaluation) or no opinion (next mode). Never throws for a decision. */
export interface Authorizer {
  readonly name: string;
  authorize(a: Attributes): Promise<{ decision: Decision; reason?: string }>;
}
