import type { Cause } from '../../api/errors';
import type { ObjectSchema } from '../../api/schema';
import { objectMetaSchema } from '../common-schemas';
import { labelSelectorRequirements, selectorMatchesLabels } from '../../api/label-selector';
import { forbidden, invalid, notSupported, required } from '../field-errors';
import { validateAnnotations, validateLabels } from '../meta-validation';
import { ensureRec, rec, recs, setDefault } from '../obj-access';
import { canonicalizeQuantities } from '../canonical-quantities';
import { described, obj } from '../schema-builders';
import { DEFAULT_SCHEDULER, DEFAULT_TERMINATION_GRACE_PERIOD, defaultContainer, defaultVolume } from './pod-defaults';
import { podSpecSchema } from './pod-schema';
import { validatePodSpec } from './pod-validation';

/**
 * core/v1 PodTemplateSpec: the pod a workload controller stamps out (Deployment, ReplicaSet,
 * StatefulSet, DaemonSet, Job), shared by every workload kind's schema, defaults and validation.
 */
export const podTemplateSpecSchema: ObjectSchema = obj('k8s.io.api.core.v1.PodTemplateSpec', {
  metadata: [1, described('Standard object metadata of the pods made from this template.', objectMetaSchema)],
  spec: [2, described('Specification of the desired behavior of the pods made from this template.', podSpecSchema)],
});

/**
 * Upstream SetDefaults_PodSpec and the container and volume defaults, as they apply to a
 * template: not the defaults of SetDefaults_Pod (enableServiceLinks, requests from limits are
 * pod-level there too) nor what admission adds at pod creation (serviceAccountName, priority), so
 * a template reads back as the user wrote it plus upstream's template defaults.
 */
export function defaultPodTemplate(template: unknown): void {
  const tpl = rec(template);
  if (!tpl) return;
  const spec = ensureRec(tpl, 'spec');
  setDefault(spec, 'dnsPolicy', 'ClusterFirst');
  setDefault(spec, 'restartPolicy', 'Always');
  setDefault(spec, 'terminationGracePeriodSeconds', DEFAULT_TERMINATION_GRACE_PERIOD, false);
  setDefault(spec, 'schedulerName', DEFAULT_SCHEDULER);
  setDefault(spec, 'securityContext', {}, false);
  const hostNetwork = spec.hostNetwork === true;
  // Upstream defaults requests from limits on templates too (SetDefaults_PodSpec's containers are
  // defaulted by the same SetDefaults_Container path as pods' in the v1 conversion of a template).
  for (const c of recs(spec.containers)) defaultContainer(c, hostNetwork, true);
  for (const c of recs(spec.initContainers)) defaultContainer(c, hostNetwork, true);
  for (const v of recs(spec.volumes)) defaultVolume(v);
  canonicalizeQuantities(podTemplateSpecSchema, tpl);
}

export interface TemplateRules {
  /** The workload's selector: the template's labels must match it (upstream "`selector` does not match template `labels`"). */
  selector?: unknown;
  /**
   * Restart policies the workload allows (RS/Deployment/StatefulSet/DaemonSet: Always). Absent:
   * the caller checks the policy itself (Job: upstream answers Always with "Required value:
   * valid values: OnFailure, Never", since Always is what an unset policy defaults to).
   */
  restartPolicies?: readonly string[];
  /** The workload kind named in upstream's activeDeadlineSeconds message ("activeDeadlineSeconds in StatefulSet is not Supported"); default ReplicaSet. */
  kind?: string;
}

/**
 * Upstream ValidatePodTemplateSpec plus the workload rules every controller kind shares
 * (ValidatePodTemplateSpecForReplicaSet and its siblings); path is where the template sits, e.g.
 * spec.template.
 */
export function validatePodTemplate(template: unknown, path: string, rules: TemplateRules): Cause[] {
  const tpl = rec(template);
  if (!tpl) return [required(path, '')];
  const meta = rec(tpl.metadata) ?? {};
  const out: Cause[] = [...validateLabels(meta.labels, `${path}.metadata.labels`), ...validateAnnotations(meta.annotations, `${path}.metadata.annotations`)];
  const spec = rec(tpl.spec);
  if (!spec) return [...out, required(`${path}.spec`, '')];
  out.push(...validatePodSpec(spec, `${path}.spec`));
  if (rules.selector !== undefined) {
    const reqs = labelSelectorRequirements(rules.selector);
    const labels = (rec(meta.labels) ?? {}) as Record<string, string>;
    if (reqs && reqs.length > 0 && !selectorMatchesLabels(reqs, labels)) out.push(invalid(`${path}.metadata.labels`, labels, '`selector` does not match template `labels`'));
  }
  const policy = spec.restartPolicy;
  if (rules.restartPolicies && typeof policy === 'string' && !rules.restartPolicies.includes(policy)) {
    out.push(notSupported(`${path}.spec.restartPolicy`, policy, rules.restartPolicies));
  }
  if (rules.restartPolicies?.includes('Always') && spec.activeDeadlineSeconds !== undefined && spec.activeDeadlineSeconds !== null) {
    out.push(forbidden(`${path}.spec.activeDeadlineSeconds`, `activeDeadlineSeconds in ${rules.kind ?? 'ReplicaSet'} is not Supported`));
  }
  return out;
}
