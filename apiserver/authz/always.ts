import type { UserInfo } from '../api/user';
import type { Attributes, Authorizer, Decision } from './authorizer';
import type { RuleList, RuleLister } from './rule-lister';

/** A.2 AlwaysAllow: allows every request, anonymous ones included (testing only, as upstream). */
export class AlwaysAllow implements Authorizer, RuleLister {
  readonly name = 'AlwaysAllow';

  authorize(_a: Attributes): Promise<{ decision: Decision; reason?: string }> {
    return Promise.resolve({ decision: 'allow' });
  }

  rulesFor(_user: UserInfo): RuleList {
    return {
      rules: [
        { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
        { verbs: ['*'], nonResourceURLs: ['*'] },
      ],
      incomplete: false,
    };
  }
}

/** A.2 AlwaysDeny: denies every request (ends evaluation; testing only). */
export class AlwaysDeny implements Authorizer, RuleLister {
  readonly name = 'AlwaysDeny';

  authorize(_a: Attributes): Promise<{ decision: Decision; reason?: string }> {
    return Promise.resolve({ decision: 'deny', reason: 'Everything is forbidden.' });
  }

  rulesFor(_user: UserInfo): RuleList {
    return { rules: [], incomplete: false };
  }
}
