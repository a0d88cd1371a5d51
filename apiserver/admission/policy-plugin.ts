import { ApiError, type Reason } from '../api/errors';
import type { KObject } from '../api/types';
import type { AdmissionAttributes } from '../store/write-admission';
import type { AdmissionPlugin } from './admission';
import { forbiddenSubject } from './resource-quota';
import { evaluatePolicy, policyConditionsHold, policyVariables, type PolicyFailure, type PolicyInputs } from './policy-eval';
import { bindingParams, matchedPolicies, Misconfigured, policyGroup, policyInputs, type PolicyDeps } from './policy-bindings';

export type { PolicyDeps } from './policy-bindings';

/**
 * The ValidatingAdmissionPolicy plugin (upstream k8s.io/apiserver/pkg/admission/plugin/policy/validating):
 * for every ValidatingAdmissionPolicyBinding whose policy exists and whose policy's
 * matchConstraints and own matchResources match the request, the policy is evaluated once per
 * parameter object (none, the one named, or those selected); failed validations are enforced by
 * the binding's validationActions: Deny refuses with upstream's message, Warn adds a Warning,
 * Audit adds the `validation.policy.admission.k8s.io/validation_failure` audit annotation.
 * Errors (misconfiguration, evaluation errors, the cost budget) follow the policy's failurePolicy.
 * Requests for admissionregistration objects are exempt, as upstream's. A policy sees a two-name
 * group (object.apiVersion, request.kind.group, ...) as its matching rule spells it, upstream's
 * k8s.io name for "*" (./hook-spelling.ts, as webhooks).
 */

type Rec = Record<string, unknown>;

const EXEMPT_GROUP = 'admissionregistration.svc.io';
const FAILURE_ANNOTATION = 'validation.policy.admission.k8s.io/validation_failure';
const REASON_CODES: Record<string, number> = { Unauthorized: 401, Forbidden: 403, Invalid: 422, RequestEntityTooLarge: 413 };

export class ValidatingAdmissionPolicyPlugin implements AdmissionPlugin {
  readonly name = 'ValidatingAdmissionPolicy';
  readonly namesItself = true;

  constructor(private readonly d: PolicyDeps) {}

  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.type.group === EXEMPT_GROUP) return;
    const { matched, namespaceOf } = await matchedPolicies(this.d, a);
    if (matched.length === 0) return;
    // Only the variables some matched policy reads are built (the request and the namespace cost a conversion and a read).
    const needed = new Set<string>();
    for (const [policy] of matched) for (const v of policyVariables((policy.spec ?? {}) as Rec)) needed.add(v);
    // Each policy sees the group as its matching rule spells it: the inputs once per spelling.
    const bySpelling = new Map<string, Promise<PolicyInputs>>();
    for (const [policy, binding] of matched) {
      const group = policyGroup((policy.spec ?? {}) as Rec, a);
      let inputs = bySpelling.get(group);
      if (!inputs) bySpelling.set(group, (inputs = policyInputs(a, namespaceOf, needed, group)));
      await this.evaluateBinding(a, policy, binding, await inputs);
    }
  }

  private async evaluateBinding(a: AdmissionAttributes, policy: KObject, binding: KObject, inputs: PolicyInputs): Promise<void> {
    const spec = (policy.spec ?? {}) as Rec;
    const failures: PolicyFailure[] = [];
    const annotations: Record<string, string> = {};
    let params: Array<KObject | null>;
    try {
      params = await bindingParams(this.d, a, spec, (binding.spec ?? {}) as Rec);
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
