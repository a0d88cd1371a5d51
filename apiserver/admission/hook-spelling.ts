/**
 * The group name a webhook is spoken to in. svc keeps one canonical spelling (svc.io) of every
 * group served under two names (api/group-names.ts); a stock webhook knows only upstream's
 * (k8s.io). A hook therefore sees the request, its kind and resource and both objects in the
 * spelling its matching rule names, and in upstream's when the rule says "*": as upstream's
 * matchPolicy Equivalent sends a request in the group and version of the rule that matched. Its
 * patch is applied to what it saw, then turned back to the canonical spelling.
 */
import { sameGroup, upstreamGroup } from '../api/group-names';
import type { KObject } from '../api/types';
import { servedObject } from '../server/group-alias';
import type { AdmissionAttributes } from '../store/write-admission';
import { ruleMatches } from './admission-match';

type Rec = Record<string, unknown>;

/** The spelling of a.type.group the first matching rule names ("*": upstream's name, when the group has one). */
export function hookGroup(rules: readonly Rec[], a: Pick<AdmissionAttributes, 'operation' | 'type' | 'subresource' | 'namespace'>): string {
  const canonical = a.type.group;
  const rule = rules.find((r) => ruleMatches(r, a));
  const named = (Array.isArray(rule?.apiGroups) ? (rule.apiGroups as unknown[]) : []).find((g): g is string => typeof g === 'string' && g !== '*' && sameGroup(g, canonical));
  return named ?? upstreamGroup(canonical) ?? canonical;
}

/** An object (or null) moved between two spellings of its group. */
export function spelled<T extends KObject | null | undefined>(o: T, from: string, to: string): T {
  return from === to || !o ? o : (servedObject(o, from, to) as T);
}

/** An AdmissionRequest (webhook-review.ts's admissionRequest) in the hook's spelling: kind, resource, their request* twins, object and oldObject. */
export function spelledRequest(req: Rec, canonical: string, group: string): Rec {
  if (group === canonical) return req;
  const regroup = (v: unknown) => ((v as Rec | undefined)?.group === canonical ? { ...(v as Rec), group } : v);
  return {
    ...req,
    kind: regroup(req.kind),
    resource: regroup(req.resource),
    requestKind: regroup(req.requestKind),
    requestResource: regroup(req.requestResource),
    object: spelled(req.object as KObject | null, canonical, group),
    oldObject: spelled(req.oldObject as KObject | null, canonical, group),
  };
}
