import { labelSelectorRequirements, selectorMatchesLabels } from '../api/label-selector';
import type { KObject } from '../api/types';
import { celInput } from '../cel/admission-env';
import type { ResourceType } from '../registry/resource-type';
import type { AdmissionAttributes } from '../store/write-admission';
import { namespaceSelectorMatches, objectSelectorMatches, ruleMatches } from './admission-match';
import { hookGroup, spelled, spelledRequest } from './hook-spelling';
import type { PolicyInputs } from './policy-eval';
import { admissionRequest, uidOf } from './webhook-review';

/**
 * What ValidatingAdmissionPolicy and MutatingAdmissionPolicy share (upstream
 * k8s.io/apiserver/pkg/admission/plugin/policy/generic and matching): which (policy, binding)
 * pairs match a request (the policy's matchConstraints, then the binding's matchResources), the
 * parameter objects of a binding, and the request's CEL inputs — in the group spelling the
 * policy's matching rule names (./hook-spelling.ts, the rule webhooks follow).
 */

type Rec = Record<string, unknown>;

export interface PolicyDeps {
  policies: () => Promise<readonly KObject[]>;
  bindings: () => Promise<readonly KObject[]>;
  /** A namespace object (namespaceObject, and its labels for namespaceSelector). */
  namespace: (name: string) => Promise<KObject | undefined>;
  /** The served type of a paramKind (apiVersion in either group spelling). */
  paramType: (apiVersion: string, kind: string) => ResourceType | undefined;
  getParam: (t: ResourceType, namespace: string, name: string) => Promise<KObject | undefined>;
  listParams: (t: ResourceType, namespace: string) => Promise<readonly KObject[]>;
}

const recs = (v: unknown): Rec[] => (Array.isArray(v) ? v.filter((x): x is Rec => typeof x === 'object' && x !== null) : []);
const strOf = (v: unknown): string => (typeof v === 'string' ? v : '');
const byName = (a: KObject, b: KObject) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1);

/** One NamedRuleWithOperations: the rule, and its resourceNames when it lists any. */
function namedRuleMatches(rule: Rec, a: AdmissionAttributes): boolean {
  const names = Array.isArray(rule.resourceNames) ? rule.resourceNames : [];
  return ruleMatches(rule, a) && (names.length === 0 || names.includes(a.name));
}

/** Upstream's MatchResources: a resource rule (required for policies), no exclude rule, and the selectors. */
async function matchResources(m: Rec | undefined, a: AdmissionAttributes, rulesRequired: boolean, labels: (ns: string) => Promise<Record<string, string> | undefined>): Promise<boolean> {
  if (!m) return !rulesRequired;
  const rules = recs(m.resourceRules);
  if ((rulesRequired || rules.length > 0) && !rules.some((r) => namedRuleMatches(r, a))) return false;
  if (recs(m.excludeResourceRules).some((r) => namedRuleMatches(r, a))) return false;
  if (!objectSelectorMatches(m.objectSelector, a)) return false;
  return namespaceSelectorMatches(m.namespaceSelector, a, labels);
}

/** A binding that cannot be evaluated (its params); handled by the policy's failurePolicy. */
export class Misconfigured extends Error {}

export interface MatchedPolicies {
  /** [policy, binding] pairs in binding-name order. */
  matched: Array<[KObject, KObject]>;
  /** The request's namespace object, read once. */
  namespaceOf: (name: string) => Promise<KObject | undefined>;
}

/** The (policy, binding) pairs that match the request, bindings in name order (as upstream's sorted informer list). */
export async function matchedPolicies(d: PolicyDeps, a: AdmissionAttributes): Promise<MatchedPolicies> {
  // Only the request's namespace is ever read (namespaceObject and the namespace selector).
  let nsObject: Promise<KObject | undefined> | undefined;
  const namespaceOf = (name: string) => (nsObject ??= d.namespace(name));
  const matched: Array<[KObject, KObject]> = [];
  const bindings = [...(await d.bindings())].sort(byName);
  if (bindings.length === 0) return { matched, namespaceOf };
  const policies = new Map((await d.policies()).map((p) => [p.metadata.name ?? '', p]));
  const labels = async (ns: string) => (await namespaceOf(ns))?.metadata.labels;
  for (const binding of bindings) {
    const bspec = (binding.spec ?? {}) as Rec;
    const policy = policies.get(strOf(bspec.policyName));
    if (!policy) continue;
    const spec = (policy.spec ?? {}) as Rec;
    if (!(await matchResources(spec.matchConstraints as Rec | undefined, a, true, labels))) continue;
    if (!(await matchResources(bspec.matchResources as Rec | undefined, a, false, labels))) continue;
    matched.push([policy, binding]);
  }
  return { matched, namespaceOf };
}

/** The parameter objects of a binding ([null] when the policy takes none or the binding names none); throws Misconfigured. */
export async function bindingParams(d: PolicyDeps, a: AdmissionAttributes, spec: Rec, bspec: Rec): Promise<Array<KObject | null>> {
  const kind = spec.paramKind as Rec | undefined;
  const ref = bspec.paramRef as Rec | undefined;
  if (!kind || !ref) return [null];
  const t = d.paramType(strOf(kind.apiVersion), strOf(kind.kind));
  if (!t) throw new Misconfigured(`paramKind kind \`&ParamKind{APIVersion:${strOf(kind.apiVersion)},Kind:${strOf(kind.kind)},}\` not known`);
  let ns = strOf(ref.namespace);
  if (!t.namespaced && ns !== '') throw new Misconfigured('paramRef.namespace must not be provided for a cluster-scoped `paramKind`');
  if (t.namespaced && ns === '') ns = a.namespace;
  if (t.namespaced && ns === '') throw new Misconfigured('cannot use namespaced paramRef in policy binding that matches cluster-scoped resources');
  let found: KObject[];
  if (strOf(ref.name) !== '') {
    const p = await d.getParam(t, ns, strOf(ref.name));
    found = p ? [p] : [];
  } else {
    const reqs = labelSelectorRequirements(ref.selector ?? {});
    found = (await d.listParams(t, ns)).filter((p) => selectorMatchesLabels(reqs, p.metadata.labels));
  }
  if (found.length > 0) return found;
  if (ref.parameterNotFoundAction === 'Allow') return [];
  throw new Misconfigured('no params found for policy binding with `Deny` parameterNotFoundAction');
}

/**
 * The spelling of a two-name group a policy sees the request in: the one its first matching
 * matchConstraints rule names, upstream's k8s.io name for "*" (hookGroup, as for webhooks; upstream's
 * matchPolicy Equivalent hands a policy the request as the rule that matched names it).
 */
export function policyGroup(spec: Rec, a: AdmissionAttributes): string {
  const rules = recs((spec.matchConstraints as Rec | undefined)?.resourceRules).filter((r) => namedRuleMatches(r, a));
  return hookGroup(rules, a);
}

/**
 * The request's CEL variables that are read, converted once (the objects once, shared by
 * request.object and object), in the group spelling `group` (policyGroup): object, oldObject and
 * request's kinds and resources.
 */
export async function policyInputs(a: AdmissionAttributes, namespaceOf: (name: string) => Promise<KObject | undefined>, needed: ReadonlySet<string>, group = a.type.group): Promise<PolicyInputs> {
  const withRequest = needed.has('request');
  const canonical = a.type.group;
  const object = needed.has('object') || withRequest ? celInput(spelled(a.operation === 'DELETE' ? null : (a.object ?? null), canonical, group)) : null;
  const oldObject = needed.has('oldObject') || withRequest ? celInput(spelled(a.oldObject ?? null, canonical, group)) : null;
  const request = withRequest ? { ...(celInput(spelledRequest({ ...admissionRequest(a, uidOf(a)), object: null, oldObject: null }, canonical, group)) as Rec), object, oldObject } : null;
  const namespaceObject = needed.has('namespaceObject') && a.type.namespaced ? celInput((await namespaceOf(a.namespace)) ?? null) : null;
  return { object, oldObject, request, namespaceObject };
}
