import { errors } from '../api/errors';
import type { Attributes, Authorizer, Decision } from './authorizer';
import { AuthorizerChain, forbiddenMessage } from './chain';

export const MASTERS_GROUP = 'system:masters';

/** The overall outcome: allowed or not, and whether an authorizer denied outright (SubjectAccessReview status.denied). */
export interface ChainDecision {
  allowed: boolean;
  denied: boolean;
  reason: string;
}

/**
 * The AuthorizerChain the server uses, plus decide() for callers that need the decision rather
 * than a 403 (the review APIs, the escalation check) and replace() for configuration reloads.
 * Order and semantics as A.1: the first allow or deny ends evaluation; none → denied;
 * system:masters is allowed without asking anyone (A.2).
 */
export class AuthorizationChain extends AuthorizerChain {
  private current: readonly Authorizer[];

  constructor(authorizers: readonly Authorizer[]) {
    super(authorizers);
    this.current = authorizers;
  }

  /** Swaps the authorizer list atomically (requests in flight finish with the old one). */
  replace(authorizers: readonly Authorizer[]): void {
    this.current = authorizers;
  }

  /** The authorizers in order. */
  list(): readonly Authorizer[] {
    return this.current;
  }

  /** Evaluates the chain; never throws for a decision (an authorizer error counts as no opinion with its message). */
  async decide(a: Attributes): Promise<ChainDecision> {
    if (a.user.groups.includes(MASTERS_GROUP)) return { allowed: true, denied: false, reason: '' };
    const reasons: string[] = [];
    for (const z of this.current) {
      let d: { decision: Decision; reason?: string };
      try {
        d = await z.authorize(a);
      } catch (err) {
        reasons.push(`${z.name}: ${(err as Error).message}`);
        continue;
      }
      if (d.decision === 'allow') return { allowed: true, denied: false, reason: d.reason ?? '' };
      if (d.decision === 'deny') return { allowed: false, denied: true, reason: d.reason ?? '' };
      if (d.reason) reasons.push(d.reason);
    }
    return { allowed: false, denied: false, reason: reasons.join('; ') };
  }

  /** Resolves when allowed; rejects with upstream's 403 message otherwise. */
  override async authorize(a: Attributes): Promise<void> {
    const d = await this.decide(a);
    if (!d.allowed) throw errors.forbidden(forbiddenMessage(a, d.reason));
  }
}
