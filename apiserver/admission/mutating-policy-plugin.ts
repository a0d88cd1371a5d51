import { ApiError, type Reason } from '../api/errors';
import type { KObject } from '../api/types';
import type { AdmissionAttributes } from '../store/write-admission';
import type { AdmissionPlugin } from './admission';
import { mutateWithPolicy } from './mutating-policy-eval';
import { bindingParams, matchedPolicies, Misconfigured, policyInputs, type PolicyDeps } from './policy-bindings';
import { mutatingPrograms, policyConditionsHold, policyVariables } from './policy-eval';

/**
 * The MutatingAdmissionPolicy plugin (upstream k8s.io/apiserver/pkg/admission/plugin/policy/mutating),
 * in the mutating phase before the mutating webhooks, as upstream orders them: for every
 * MutatingAdmissionPolicyBinding (in name order) whose policy exists and matches the request
 * (matchConstraints, the binding's matchResources, matchConditions), the policy's mutations run
 * once per parameter object, and the result is defaulted as upstream's dispatcher does. Errors (misconfiguration, evaluation, a patch that does not apply)
 * are collected and, for policies whose failurePolicy is Fail, refuse the request as upstream's
 * generic policy dispatcher words it: `policy '<p>' with binding '<b>' denied request: <error>`.
 * Policies with reinvocationPolicy IfNeeded run once more when a later policy changed the object.
 *
 * Inactive unless the MutatingAdmissionPolicy feature gate is on (upstream's plugin is in the
 * default set and checks the gate). DELETE is never mutated; admissionregistration objects are
 * exempt, as upstream's. Where we differ: reinvocation covers this plugin's policies only
 * (upstream also reinvokes them after the mutating webhooks changed the object).
 */

type Rec = Record<string, unknown>;

const EXEMPT_GROUP = 'admissionregistration.svc.io';

interface PolicyError {
  policy: KObject;
  binding: KObject;
  message: string;
}

/** The store holds the object it passed to admission: a mutated object replaces its contents in place. */
function replaceContents(target: KObject, next: KObject): void {
  for (const k of Object.keys(target)) delete (target as Rec)[k];
  Object.assign(target, next);
}

export class MutatingAdmissionPolicyPlugin implements AdmissionPlugin {
  readonly name = 'MutatingAdmissionPolicy';
  readonly namesItself = true;

  constructor(
    private readonly d: PolicyDeps,
    /** The MutatingAdmissionPolicy feature gate. */
    private readonly enabled: boolean,
  ) {}

  async mutate(a: AdmissionAttributes): Promise<void> {
    if (!this.enabled || a.type.group === EXEMPT_GROUP || a.operation === 'DELETE' || !a.object) return;
    const { matched, namespaceOf } = await matchedPolicies(this.d, a);
    if (matched.length === 0) return;
    const needed = new Set<string>(['object']);
    for (const [policy] of matched) for (const v of policyVariables((policy.spec ?? {}) as Rec, mutatingPrograms)) needed.add(v);
    const errors: PolicyError[] = [];
    const reinvocable: Array<{ policy: KObject; binding: KObject; seen: string }> = [];
    for (const [policy, binding] of matched) {
      await this.invoke(a, policy, binding, namespaceOf, needed, errors);
      if ((policy.spec as Rec | undefined)?.reinvocationPolicy === 'IfNeeded') reinvocable.push({ policy, binding, seen: JSON.stringify(a.object) });
    }
    // Upstream reinvokes IfNeeded policies (once) when the object changed after they ran.
    for (const r of reinvocable) {
      if (JSON.stringify(a.object) !== r.seen) await this.invoke(a, r.policy, r.binding, namespaceOf, needed, errors);
    }
    const failing = errors.filter((e) => (e.policy.spec as Rec | undefined)?.failurePolicy !== 'Ignore');
    if (failing.length > 0) throw refusal(a, failing);
  }

  private async invoke(a: AdmissionAttributes, policy: KObject, binding: KObject, namespaceOf: (name: string) => Promise<KObject | undefined>, needed: ReadonlySet<string>, errors: PolicyError[]): Promise<void> {
    const spec = (policy.spec ?? {}) as Rec;
    const fail = (message: string) => errors.push({ policy, binding, message });
    let params: Array<KObject | null>;
    try {
      params = await bindingParams(this.d, a, spec, (binding.spec ?? {}) as Rec);
    } catch (err) {
      if (!(err instanceof Misconfigured)) throw err;
      fail(`failed to configure binding: ${err.message}`);
      return;
    }
    for (const param of params) {
      // The object changes between policies and parameters: the inputs are read afresh.
      const inputs = await policyInputs(a, namespaceOf, needed);
      const hold = policyConditionsHold(spec, inputs, param, mutatingPrograms);
      if (hold === false) continue;
      if (hold instanceof Error) {
        fail(hold.message);
        continue;
      }
      try {
        const next = mutateWithPolicy(spec, a.object!, a.type.schema, inputs, param);
        if (next === a.object) continue;
        // Upstream defaults the patched object (a sidecar's container gets its defaults as any container).
        a.type.defaults?.(next);
        replaceContents(a.object!, next);
      } catch (err) {
        fail((err as Error).message);
      }
    }
  }
}

/** Upstream's generic dispatcher: admission.NewForbidden, its message replaced by the first error's, every error a cause. */
function refusal(a: AdmissionAttributes, failing: PolicyError[]): ApiError {
  const messages = failing.map((e) => `policy '${e.policy.metadata.name ?? ''}' with binding '${e.binding.metadata.name ?? ''}' denied request: ${e.message}`);
  const reason: Reason = 'Invalid';
  return new ApiError(reason, messages[0], { name: a.name || undefined, group: a.type.group || undefined, kind: a.type.resource, causes: messages.map((message) => ({ reason: '', message })) }, 403);
}
