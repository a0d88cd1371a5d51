import type { UserInfo } from '../api/user';
import type { Authorizer } from './authorizer';
import type { PolicyRule } from './rbac-rules';

/** What an authorizer can say about everything a user may do (upstream authorizer.RuleResolver). */
export interface RuleList {
  rules: PolicyRule[];
  /** True when the list may miss permissions (e.g. graph- or webhook-based decisions). */
  incomplete: boolean;
  error?: string;
}

/** An authorizer that can list a user's rules in a namespace, for SelfSubjectRulesReview. */
export interface RuleLister {
  /** The rules the user holds in the namespace; never throws. */
  rulesFor(user: UserInfo, namespace: string): RuleList;
}

export function isRuleLister(z: Authorizer): z is Authorizer & RuleLister {
  return typeof (z as Partial<RuleLister>).rulesFor === 'function';
}

/** SelfSubjectRulesReview status: resource and non-resource rules of every authorizer, in order. */
export interface RulesReviewStatus {
  resourceRules: { verbs: string[]; apiGroups?: string[]; resources?: string[]; resourceNames?: string[] }[];
  nonResourceRules: { verbs: string[]; nonResourceURLs: string[] }[];
  incomplete: boolean;
  evaluationError?: string;
}

/** Collects the rules of every authorizer in the chain (an authorizer that cannot list marks the result incomplete). */
export function rulesReview(authorizers: readonly Authorizer[], user: UserInfo, namespace: string): RulesReviewStatus {
  const out: RulesReviewStatus = { resourceRules: [], nonResourceRules: [], incomplete: false };
  const errs: string[] = [];
  for (const z of authorizers) {
    if (!isRuleLister(z)) {
      out.incomplete = true;
      continue;
    }
    const r = z.rulesFor(user, namespace);
    if (r.incomplete) out.incomplete = true;
    if (r.error) errs.push(r.error);
    for (const rule of r.rules) {
      if (rule.nonResourceURLs?.length) out.nonResourceRules.push({ verbs: [...rule.verbs], nonResourceURLs: [...rule.nonResourceURLs] });
      else {
        const rr: RulesReviewStatus['resourceRules'][number] = { verbs: [...rule.verbs], apiGroups: [...(rule.apiGroups ?? [])], resources: [...(rule.resources ?? [])] };
        if (rule.resourceNames?.length) rr.resourceNames = [...rule.resourceNames];
        out.resourceRules.push(rr);
      }
    }
  }
  if (errs.length) out.evaluationError = errs.join('; ');
  return out;
}
