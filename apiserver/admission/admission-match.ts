import { sameGroup } from '../api/group-names';
import { labelSelectorRequirements, selectorMatchesLabels } from '../api/label-selector';
import type { KObject } from '../api/types';
import type { AdmissionAttributes } from '../store/write-admission';

/**
 * Which requests an admission webhook or policy cares about (upstream
 * k8s.io/apiserver/pkg/admission/plugin/webhook/predicates): rules by operation, group, version,
 * resource and sub-resource, and scope; the namespace selector over the namespace's labels; the
 * object selector over the old or new object's labels. Shared by the webhook dispatcher and
 * ValidatingAdmissionPolicy.
 *
 * matchPolicy Equivalent: svc serves every resource in one version, so the only equivalent forms
 * of a request are its group's two spellings (`apps.svc.io` and `apps.k8s.io`), which both match
 * whatever the policy; a rule naming a version svc does not serve matches nothing, as upstream's
 * equivalence only spans served versions (no conversion is therefore needed).
 */

type Rec = Record<string, unknown>;

const list = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** One rule (RuleWithOperations, flattened as in JSON) against the request (upstream ruleMatcher). */
export function ruleMatches(rule: Rec, a: Pick<AdmissionAttributes, 'operation' | 'type' | 'subresource' | 'namespace'>): boolean {
  const ops = list(rule.operations);
  if (!ops.includes('*') && !ops.includes(a.operation)) return false;
  const groups = list(rule.apiGroups);
  if (!groups.includes('*') && !groups.some((g) => sameGroup(g, a.type.group))) return false;
  const versions = list(rule.apiVersions);
  if (!versions.includes('*') && !versions.includes(a.type.version)) return false;
  if (!resourceMatches(list(rule.resources), a.type.resource, a.subresource)) return false;
  return scopeMatches(typeof rule.scope === 'string' ? rule.scope : '*', a.type.namespaced);
}

/** `pods` is the resource alone, `pods/status` one sub-resource, `*` every resource without sub-resources, `pods/*`, `*\/scale`, `*\/*`. */
export function resourceMatches(resources: readonly string[], resource: string, subresource: string): boolean {
  return resources.some((r) => {
    const slash = r.indexOf('/');
    const res = slash < 0 ? r : r.slice(0, slash);
    const sub = slash < 0 ? '' : r.slice(slash + 1);
    return (res === '*' || res === resource) && (sub === '*' || sub === subresource);
  });
}

/** Cluster: cluster-scoped resources only (namespaces are); Namespaced: namespaced ones only; sub-resources follow their parent. */
function scopeMatches(scope: string, namespaced: boolean): boolean {
  if (scope === 'Cluster') return !namespaced;
  if (scope === 'Namespaced') return namespaced;
  return true;
}

const labelsOf = (o: KObject | undefined): Record<string, string> | undefined => o?.metadata?.labels;

/** An empty (or absent) selector matches everything without reading any labels. */
export function isEmptySelector(sel: unknown): boolean {
  const reqs = labelSelectorRequirements(sel ?? {});
  return reqs !== null && reqs.length === 0;
}

/** Upstream's object selector: matches when the new or the old object's labels match; a request without objects does not. */
export function objectSelectorMatches(sel: unknown, a: Pick<AdmissionAttributes, 'object' | 'oldObject'>): boolean {
  if (isEmptySelector(sel)) return true;
  const reqs = labelSelectorRequirements(sel);
  return [a.object, a.oldObject].some((o) => o !== undefined && selectorMatchesLabels(reqs, labelsOf(o)));
}

/** Reads a namespace's labels (undefined: no such namespace); the dispatcher's lister. */
export type NamespaceLabels = (name: string) => Promise<Record<string, string> | undefined>;

/**
 * Upstream's namespace selector: a namespace object is matched by its own labels, other
 * cluster-scoped objects always match, namespaced ones by their namespace's labels (a namespace
 * that does not exist has none).
 */
export async function namespaceSelectorMatches(sel: unknown, a: Pick<AdmissionAttributes, 'object' | 'oldObject' | 'type' | 'namespace' | 'subresource'>, labels: NamespaceLabels): Promise<boolean> {
  if (isEmptySelector(sel)) return true;
  const reqs = labelSelectorRequirements(sel);
  if (a.type.group === '' && a.type.resource === 'namespaces') return selectorMatchesLabels(reqs, labelsOf(a.object ?? a.oldObject));
  if (!a.type.namespaced) return true;
  return selectorMatchesLabels(reqs, (await labels(a.namespace)) ?? {});
}
