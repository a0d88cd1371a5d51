import { canonicalGroup } from '../api/group-names';

/**
 * RBAC policy rules (A.6) and how one rule matches a request, as upstream's rbac/v1 helpers
 * (RuleAllows, VerbMatches, APIGroupMatches, ResourceMatches, ResourceNameMatches,
 * NonResourceURLMatches).
 */

export interface PolicyRule {
  verbs: readonly string[];
  apiGroups?: readonly string[];
  resources?: readonly string[];
  resourceNames?: readonly string[];
  nonResourceURLs?: readonly string[];
}

/** The request fields a rule looks at (a subset of RequestInfo, so review APIs can build one). */
export interface RuleRequest {
  isResourceRequest: boolean;
  verb: string;
  apiGroup: string;
  resource: string;
  subresource: string;
  name: string;
  path: string;
}

export const ALL = '*';

/** True when the rule grants the request. */
export function ruleAllows(r: RuleRequest, rule: PolicyRule): boolean {
  if (!verbMatches(rule, r.verb)) return false;
  if (!r.isResourceRequest) return nonResourceURLMatches(rule, r.path);
  const combined = r.subresource ? `${r.resource}/${r.subresource}` : r.resource;
  return apiGroupMatches(rule, r.apiGroup) && resourceMatches(rule, combined, r.subresource) && resourceNameMatches(rule, r.name);
}

export function verbMatches(rule: PolicyRule, verb: string): boolean {
  for (const v of rule.verbs) if (v === ALL || v === verb) return true;
  return false;
}

/**
 * A group's svc.io and k8s.io names are one group (issue 17): a rule naming either grants
 * requests under either (the router hands authorization the canonical name; a review or a
 * webhook may carry the other).
 */
export function apiGroupMatches(rule: PolicyRule, group: string): boolean {
  const want = canonicalGroup(group);
  for (const g of rule.apiGroups ?? []) if (g === ALL || g === group || canonicalGroup(g) === want) return true;
  return false;
}

/** `*` matches everything, `x/y` that sub-resource exactly, and `*\/y` sub-resource y of any resource. */
export function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  for (const res of rule.resources ?? []) {
    if (res === ALL || res === combined) return true;
    if (subresource && res.length === subresource.length + 2 && res.startsWith('*/') && res.endsWith(subresource)) return true;
  }
  return false;
}

/** An empty resourceNames list matches any name (including none); otherwise the name must be listed. */
export function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  const names = rule.resourceNames ?? [];
  if (names.length === 0) return true;
  return names.includes(name);
}

/** Exact path, `*`, or a trailing `*` as a prefix wildcard. */
export function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  for (const u of rule.nonResourceURLs ?? []) {
    if (u === ALL || u === path) return true;
    if (u.endsWith('*') && path.startsWith(u.slice(0, -1))) return true;
  }
  return false;
}

/** Reads a rule from decoded JSON, dropping anything that is not a string list. */
export function toPolicyRule(v: unknown): PolicyRule {
  const o = (typeof v === 'object' && v !== null ? v : {}) as Record<string, unknown>;
  const list = (x: unknown): string[] => (Array.isArray(x) ? x.filter((s): s is string => typeof s === 'string') : []);
  const rule: PolicyRule = { verbs: list(o.verbs) };
  if (Array.isArray(o.apiGroups)) rule.apiGroups = list(o.apiGroups);
  if (Array.isArray(o.resources)) rule.resources = list(o.resources);
  if (Array.isArray(o.resourceNames)) rule.resourceNames = list(o.resourceNames);
  if (Array.isArray(o.nonResourceURLs)) rule.nonResourceURLs = list(o.nonResourceURLs);
  return rule;
}

/** Upstream's compact rule rendering, used in escalation errors: {APIGroups:["a"], Resources:["b"], Verbs:["get"]}. */
export function compactRule(rule: PolicyRule): string {
  const parts: string[] = [];
  const q = (xs: readonly string[]) => `[${xs.map((x) => JSON.stringify(x)).join(' ')}]`;
  if (rule.apiGroups?.length) parts.push(`APIGroups:${q(rule.apiGroups)}`);
  if (rule.resources?.length) parts.push(`Resources:${q(rule.resources)}`);
  if (rule.resourceNames?.length) parts.push(`ResourceNames:${q(rule.resourceNames)}`);
  if (rule.nonResourceURLs?.length) parts.push(`NonResourceURLs:${q(rule.nonResourceURLs)}`);
  parts.push(`Verbs:${q(rule.verbs)}`);
  return `{${parts.join(', ')}}`;
}
