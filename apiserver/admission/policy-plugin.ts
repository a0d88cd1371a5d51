import { ApiError, type Reason } from '../api/errors';
import { labelSelectorRequirements, selectorMatchesLabels } from '../api/label-selector';
import type { KObject } from '../api/types';
import type { ResourceType } from '../registry/resource-type';
import type { AdmissionAttributes } from '../store/write-admission';
import type { AdmissionPlugin } from './admission';
import { forbiddenSubject } from './resource-quota';
import { namespaceSelectorMatches, objectSelectorMatches, ruleMatches } from './admission-match';
import { celInput } from '../cel/admission-env';
import { evaluatePolicy, policyConditionsHold, policyVariables, type PolicyFailure, type PolicyInputs } from './policy-eval';
import { admissionRequest, uidOf } from './webhook-review';

/**
 * The ValidatingAdmissionPolicy plugin (upstream k8s.io/apiserver/pkg/admission/plugin/policy/validating):
 * for every ValidatingAdmissionPolicyBinding whose policy exists and whose policy's
 * matchConstraints and own matchResources match the request, the policy is evaluated once per
 * parameter object (none, the one named, or those selected); failed validations are enforced by
 * the binding's validationActions: Deny refuses with upstream's message, Warn adds a Warning,
 * Audit adds the `validation.policy.admission.k8s.io/validation_failure` audit annotation.
 * Errors (misconfiguration, evaluation errors, the cost budget) follow the policy's failurePolicy.
 * Requests for admissionregistration objects are exempt, as upstream's.
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

const EXEMPT_GROUP = 'admissionregistration.svc.io';
const FAILURE_ANNOTATION = 'validation.policy.admission.k8s.io/validation_failure';
const REASON_CODES: Record<string, number> = { Unauthorized: 401, Forbidden: 403, Invalid: 422, RequestEntityTooLarge: 413 };

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

class Misconfigured extends Error {}

export class ValidatingAdmissionPolicyPlugin implements AdmissionPlugin {
  readonly name = 'ValidatingAdmissionPolicy';
  readonly namesItself = true;

  constructor(private readonly d: PolicyDeps) {}

  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.type.group === EXEMPT_GROUP) return;
    const bindings = [...(await this.d.bindings())].sort(byName);
    if (bindings.length === 0) return;
    const policies = new Map((await this.d.policies()).map((p) => [p.metadata.name ?? '', p]));
    // Only the request's namespace is ever read (namespaceObject and the namespace selector).
    let nsObject: Promise<KObject | undefined> | undefined;
    const namespaceOf = (name: string) => (nsObject ??= this.d.namespace(name));
    const labels = async (ns: string) => (await namespaceOf(ns))?.metadata.labels;
    const matched: Array<[KObject, KObject]> = [];
    for (const binding of bindings) {
      const bspec = (binding.spec ?? {}) as Rec;
      const policy = policies.get(strOf(bspec.policyName));
      if (!policy) continue;
      const spec = (policy.spec ?? {}) as Rec;
      if (!(await matchResources(spec.matchConstraints as Rec | undefined, a, true, labels))) continue;
      if (!(await matchResources(bspec.matchResources as Rec | undefined, a, false, labels))) continue;
      matched.push([policy, binding]);
    }
    if (matched.length === 0) return;
    // Only the variables some matched policy reads are built (the request and the namespace cost a conversion and a read).
    const needed = new Set<string>();
    for (const [policy] of matched) for (const v of policyVariables((policy.spec ?? {}) as Rec)) needed.add(v);
    const inputs = await this.inputs(a, namespaceOf, needed);
    for (const [policy, binding] of matched) await this.evaluateBinding(a, policy, binding, inputs);
  }

  /** The request's CEL variables that are read, converted once (the objects once, shared by request.object and object). */
  private async inputs(a: AdmissionAttributes, namespaceOf: (name: string) => Promise<KObject | undefined>, needed: ReadonlySet<string>): Promise<PolicyInputs> {
    const withRequest = needed.has('request');
    const object = needed.has('object') || withRequest ? celInput(a.operation === 'DELETE' ? null : (a.object ?? null)) : null;
    const oldObject = needed.has('oldObject') || withRequest ? celInput(a.oldObject ?? null) : null;
    const request = withRequest ? { ...(celInput({ ...admissionRequest(a, uidOf(a)), object: null, oldObject: null }) as Rec), object, oldObject } : null;
    const namespaceObject = needed.has('namespaceObject') && a.type.namespaced ? celInput((await namespaceOf(a.namespace)) ?? null) : null;
    return { object, oldObject, request, namespaceObject };
  }

  private async evaluateBinding(a: AdmissionAttributes, policy: KObject, binding: KObject, inputs: PolicyInputs): Promise<void> {
    const spec = (policy.spec ?? {}) as Rec;
    const failures: PolicyFailure[] = [];
    const annotations: Record<string, string> = {};
    let params: Array<KObject | null>;
    try {
      params = await this.params(a, spec, (binding.spec ?? {}) as Rec);
    } catch (err) {
      if (!(err instanceof Misconfigured)) throw err;
      params = [];
      failures.push({ message: `failed to configure binding: ${err.message}`, reason: 'Invalid', index: -1, error: true });
    }
    for (const param of params) {
      const hold = policyConditionsHold(spec, inputs, param);
      if (hold === false) continue;
      if (hold instanceof Error) {
        failures.push({ message: hold.message, reason: 'Invalid', index: -1, error: true });
        continue;
      }
      const outcome = evaluatePolicy(spec, inputs, param);
      failures.push(...outcome.failures);
      for (const [k, v] of Object.entries(outcome.auditAnnotations)) annotations[k] = annotations[k] && annotations[k] !== v ? `${annotations[k]}, ${v}` : v;
    }
    const policyName = policy.metadata.name ?? '';
    for (const [k, v] of Object.entries(annotations)) {
      a.auditAnnotations ??= {};
      a.auditAnnotations[`${policyName}/${k}`] ??= v;
    }
    this.enforce(a, policyName, binding, spec, failures);
  }

  /** The parameter objects of a binding ([null] when the policy takes none or the binding names none). */
  private async params(a: AdmissionAttributes, spec: Rec, bspec: Rec): Promise<Array<KObject | null>> {
    const kind = spec.paramKind as Rec | undefined;
    const ref = bspec.paramRef as Rec | undefined;
    if (!kind || !ref) return [null];
    const t = this.d.paramType(strOf(kind.apiVersion), strOf(kind.kind));
    if (!t) throw new Misconfigured(`paramKind kind \`&ParamKind{APIVersion:${strOf(kind.apiVersion)},Kind:${strOf(kind.kind)},}\` not known`);
    let ns = strOf(ref.namespace);
    if (!t.namespaced && ns !== '') throw new Misconfigured('paramRef.namespace must not be provided for a cluster-scoped `paramKind`');
    if (t.namespaced && ns === '') ns = a.namespace;
    if (t.namespaced && ns === '') throw new Misconfigured('cannot use namespaced paramRef in policy binding that matches cluster-scoped resources');
    let found: KObject[];
    if (strOf(ref.name) !== '') {
      const p = await this.d.getParam(t, ns, strOf(ref.name));
      found = p ? [p] : [];
    } else {
      const reqs = labelSelectorRequirements(ref.selector ?? {});
      found = (await this.d.listParams(t, ns)).filter((p) => selectorMatchesLabels(reqs, p.metadata.labels));
    }
    if (found.length > 0) return found;
    if (ref.parameterNotFoundAction === 'Allow') return [];
    throw new Misconfigured('no params found for policy binding with `Deny` parameterNotFoundAction');
  }

  /** Upstream's validationActions: Deny refuses (the first failure), Warn and Audit record. */
  private enforce(a: AdmissionAttributes, policyName: string, binding: KObject, spec: Rec, failures: PolicyFailure[]): void {
    const bindingName = binding.metadata.name ?? '';
    const actions = Array.isArray((binding.spec as Rec | undefined)?.validationActions) ? ((binding.spec as Rec).validationActions as string[]) : [];
    const counted = failures.filter((f) => !f.error || spec.failurePolicy !== 'Ignore');
    const audit: Rec[] = [];
    let deny: ApiError | undefined;
    for (const f of counted) {
      if (actions.includes('Deny') && !deny) {
        const reason = (REASON_CODES[f.reason] ? f.reason : 'Invalid') as Reason;
        // Upstream wraps the decision in admission.NewForbidden (`<resource> "<name>" is forbidden: ...`), then sets the decision's reason and code.
        const message = `ValidatingAdmissionPolicy '${policyName}' with binding '${bindingName}' denied request: ${f.message}`;
        deny = new ApiError(reason, `${forbiddenSubject(a)} is forbidden: ${message}`, { name: a.name || undefined, group: a.type.group || undefined, kind: a.type.resource, causes: [{ reason: '', message }] }, REASON_CODES[reason]);
      }
      if (actions.includes('Warn')) a.warnings?.push(`Validation failed for ValidatingAdmissionPolicy '${policyName}' with binding '${bindingName}': ${f.message}`);
      if (actions.includes('Audit')) audit.push({ message: f.message, policy: policyName, binding: bindingName, expressionIndex: f.index, validationActions: actions });
    }
    if (audit.length > 0) {
      a.auditAnnotations ??= {};
      const before = a.auditAnnotations[FAILURE_ANNOTATION];
      a.auditAnnotations[FAILURE_ANNOTATION] = JSON.stringify([...(before ? (JSON.parse(before) as Rec[]) : []), ...audit]);
    }
    if (deny) throw deny;
  }
}
