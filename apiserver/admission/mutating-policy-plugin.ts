import { isDeepStrictEqual } from 'node:util';
import { ApiError, type Reason } from '../api/errors';
import type { KObject } from '../api/types';
import type { AdmissionAttributes } from '../store/write-admission';
import type { AdmissionPlugin } from './admission';
import { mutateWithPolicy } from './mutating-policy-eval';
import { ReinvokeTracker } from './reinvocation';
import { spelled } from './hook-spelling';
import { bindingParams, matchedPolicies, Misconfigured, policyGroup, policyInputs, type PolicyDeps } from './policy-bindings';
import { mutatingPrograms, policyConditionsHold, policyVariables } from './policy-eval';

/**
 * The MutatingAdmissionPolicy plugin (upstream k8s.io/apiserver/pkg/admission/plugin/policy/mutating),
 * in the mutating phase before the mutating webhooks, as upstream orders them: for every
 * MutatingAdmissionPolicyBinding (in name order) whose policy exists and matches the request
 * (matchConstraints, the binding's matchResources, matchConditions), the policy's mutations run
 * once per parameter object, and the result is defaulted as upstream's dispatcher does. Errors (misconfiguration, evaluation, a patch that does not apply)
 * are collected and, for policies whose failurePolicy is Fail, refuse the request as upstream's
 * generic policy dispatcher words it: `policy '<p>' with binding '<b>' denied request: <error>`.
 * A change by a policy asks the chain for its second pass (./reinvocation.ts), where the policies
 * with reinvocationPolicy IfNeeded that ran before a later change — by a later policy, a mutating
 * webhook or a built-in plugin — run once more, as upstream's policy dispatcher.
 *
 * Inactive unless the MutatingAdmissionPolicy feature gate is on (upstream's plugin is in the
 * default set and checks the gate). DELETE is never mutated; admissionregistration objects are
 * exempt, as upstream's. A policy sees a two-name group as its matching rule spells it (upstream's
 * k8s.io name for "*", ./hook-spelling.ts as webhooks); its result is stored canonical.
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
    const { ctx, tracker } = ReinvokeTracker.of(a, this.name);
    if (tracker.idleOnReinvoke(ctx)) return;
    const { matched, namespaceOf } = await matchedPolicies(this.d, a);
    if (matched.length === 0) return;
    const needed = new Set<string>(['object']);
    for (const [policy] of matched) for (const v of policyVariables((policy.spec ?? {}) as Rec, mutatingPrograms)) needed.add(v);
    const errors: PolicyError[] = [];
    tracker.begin(ctx, a);
    for (const [policy, binding] of matched) {
      // Keyed by policy and binding (upstream: their UIDs and the parameter's).
      const key = `${policy.metadata.name ?? ''}/${binding.metadata.name ?? ''}`;
      if (tracker.notDue(ctx, key)) continue;
      const changed = await this.invoke(a, policy, binding, namespaceOf, needed, errors);
      tracker.invoked(ctx, key, changed, (policy.spec as Rec | undefined)?.reinvocationPolicy === 'IfNeeded');
    }
    tracker.end(a);
    const failing = errors.filter((e) => (e.policy.spec as Rec | undefined)?.failurePolicy !== 'Ignore');
    if (failing.length > 0) throw refusal(a, failing);
  }

  /** Runs one binding's policy for each of its parameters; whether the object changed. */
  private async invoke(a: AdmissionAttributes, policy: KObject, binding: KObject, namespaceOf: (name: string) => Promise<KObject | undefined>, needed: ReadonlySet<string>, errors: PolicyError[]): Promise<boolean> {
    const spec = (policy.spec ?? {}) as Rec;
    const fail = (message: string) => errors.push({ policy, binding, message });
    let params: Array<KObject | null>;
    try {
      params = await bindingParams(this.d, a, spec, (binding.spec ?? {}) as Rec);
    } catch (err) {
      if (!(err instanceof Misconfigured)) throw err;
      fail(`failed to configure binding: ${err.message}`);
      return false;
    }
    const group = policyGroup(spec, a);
    let changed = false;
    for (const param of params) {
      // The object changes between policies and parameters: the inputs are read afresh.
      const inputs = await policyInputs(a, namespaceOf, needed, group);
      const hold = policyConditionsHold(spec, inputs, param, mutatingPrograms);
      if (hold === false) continue;
      if (hold instanceof Error) {
        fail(hold.message);
        continue;
      }
      try {
        // Mutated as the policy sees the object (its rule's group spelling), stored canonical.
        const seen = spelled(a.object!, a.type.group, group);
        const result = mutateWithPolicy(spec, seen, a.type.schema, inputs, param);
        if (result === seen) continue;
        const next = spelled(result, group, a.type.group);
        // Upstream defaults the patched object (a sidecar's container gets its defaults as any container).
        a.type.defaults?.(next);
        if (!isDeepStrictEqual(next, a.object)) changed = true;
        replaceContents(a.object!, next);
      } catch (err) {
        fail((err as Error).message);
      }
    }
    return changed;
  }
}

/** Upstream's generic dispatcher: admission.NewForbidden, its message replaced by the first error's, every error a cause. */
function refusal(a: AdmissionAttributes, failing: PolicyError[]): ApiError {
  const messages = failing.map((e) => `policy '${e.policy.metadata.name ?? ''}' with binding '${e.binding.metadata.name ?? ''}' denied request: ${e.message}`);
  const reason: Reason = 'Invalid';
  return new ApiError(reason, messages[0], { name: a.name || undefined, group: a.type.group || undefined, kind: a.type.resource, causes: messages.map((message) => ({ reason: '', message })) }, 403);
}
