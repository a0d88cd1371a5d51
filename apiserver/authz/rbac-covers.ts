import { canonicalGroup } from '../api/group-names';
import { ALL, type PolicyRule } from './rbac-rules';

/**
 * Escalation checks (A.6): whether a set of owner rules covers every permission of another set,
 * as upstream's rbac validation.Covers: each servant rule is broken down into single
 * (group, resource, verb[, name]) or (URL, verb) atoms, and each atom must be covered by one owner rule.
 */

/** The servant rules' atoms that no owner rule covers (empty: covered). */
export function uncoveredRules(owner: readonly PolicyRule[], servant: readonly PolicyRule[]): PolicyRule[] {
  const missing: PolicyRule[] = [];
  for (const rule of servant) {
    for (const atom of breakdown(rule)) {
      if (!owner.some((o) => ruleCovers(o, atom))) missing.push(atom);
    }
  }
  return missing;
}

/** Splits a rule into rules of one group, one resource, one verb and at most one name (or one URL and one verb). */
export function breakdown(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const group of rule.apiGroups ?? []) {
    for (const resource of rule.resources ?? []) {
      for (const verb of rule.verbs) {
        const names = rule.resourceNames ?? [];
        if (names.length === 0) out.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
        for (const name of names) out.push({ apiGroups: [group], resources: [resource], resourceNames: [name], verbs: [verb] });
      }
    }
  }
  for (const url of rule.nonResourceURLs ?? []) {
    for (const verb of rule.verbs) out.push({ nonResourceURLs: [url], verbs: [verb] });
  }
  return out;
}

/** Upstream ruleCovers: the owner rule grants everything the sub rule grants. */
export function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const verbs = owner.verbs.includes(ALL) || hasAll(owner.verbs, sub.verbs);
  // Either name of a group covers the other (issue 17): compared canonical.
  const groups = (owner.apiGroups ?? []).includes(ALL) || hasAll((owner.apiGroups ?? []).map(canonicalGroup), (sub.apiGroups ?? []).map(canonicalGroup));
  const resources = resourceCoversAll(owner.resources ?? [], sub.resources ?? []);
  const urls = nonResourceURLsCoverAll(owner.nonResourceURLs ?? [], sub.nonResourceURLs ?? []);
  const ownerNames = owner.resourceNames ?? [];
  const subNames = sub.resourceNames ?? [];
  const names = subNames.length === 0 ? ownerNames.length === 0 : ownerNames.length === 0 || hasAll(ownerNames, subNames);
  return verbs && groups && resources && names && urls;
}

function hasAll(set: readonly string[], want: readonly string[]): boolean {
  return want.every((w) => set.includes(w));
}

function resourceCoversAll(set: readonly string[], covers: readonly string[]): boolean {
  if (set.includes(ALL) || hasAll(set, covers)) return true;
  for (const path of covers) {
    if (set.includes(path)) continue;
    const slash = path.indexOf('/');
    if (slash < 0) return false;
    if (!set.includes(`*/${path.slice(slash + 1)}`)) return false;
  }
  return true;
}

function nonResourceURLsCoverAll(set: readonly string[], covers: readonly string[]): boolean {
  return covers.every((path) => set.some((owner) => owner === path || (owner.endsWith('*') && path.startsWith(owner.replace(/\*+$/, '')))));
}

/** A rule granting everything: what an aggregationRule needs (upstream fullAuthority). */
export const FULL_AUTHORITY: readonly PolicyRule[] = [
  { verbs: [ALL], apiGroups: [ALL], resources: [ALL] },
  { verbs: [ALL], nonResourceURLs: [ALL] },
];
