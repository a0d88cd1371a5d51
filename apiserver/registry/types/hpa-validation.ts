/**
 * Upstream ValidateHorizontalPodAutoscaler (pkg/apis/autoscaling/validation) for autoscaling/v2,
 * with its messages: the scale target reference, min/max replicas, each metric (one source of the
 * declared type, resource names, targets), and the behaviour's scaling rules.
 */
import type { Cause } from '../../api/errors';
import { pathSegmentErrors } from '../../api/name-validation';
import { forbidden, invalid, notSupported, required } from '../field-errors';
import { num, rec, recs, str } from '../obj-access';
import { parseQuantity } from '../quantity';
import { METRIC_SOURCE_TYPES, SCALING_POLICY_TYPES, SELECT_POLICIES } from './hpa-schema';

const SOURCE_FIELD: Record<string, string> = { Object: 'object', Pods: 'pods', Resource: 'resource', ContainerResource: 'containerResource', External: 'external' };
const MAX_STABILIZATION = 3600;
const MAX_PERIOD = 1800;

export function validateCrossVersionRef(ref: unknown, path: string): Cause[] {
  const r = rec(ref);
  const out: Cause[] = [];
  const kind = str(r?.kind) ?? '';
  const name = str(r?.name) ?? '';
  if (!kind) out.push(required(`${path}.kind`));
  else for (const m of pathSegmentErrors(kind)) out.push(invalid(`${path}.kind`, kind, m));
  if (!name) out.push(required(`${path}.name`));
  else for (const m of pathSegmentErrors(name)) out.push(invalid(`${path}.name`, name, m));
  return out;
}

function positiveQuantity(v: unknown, path: string): Cause[] {
  if (v === undefined || v === null) return [];
  const q = parseQuantity(v as string);
  return q && q.mantissa > 0n ? [] : [invalid(path, v, 'must be positive')];
}

function validateTarget(t: unknown, path: string): Cause[] {
  const target = rec(t);
  if (!target) return [required(path, 'must specify a metric target')];
  const out: Cause[] = [];
  const type = str(target.type);
  if (!type) out.push(required(`${path}.type`, 'must specify a metric target type'));
  else if (!['Utilization', 'Value', 'AverageValue'].includes(type)) out.push(invalid(`${path}.type`, type, 'must be either Utilization, Value, or AverageValue'));
  out.push(...positiveQuantity(target.value, `${path}.value`), ...positiveQuantity(target.averageValue, `${path}.averageValue`));
  const u = num(target.averageUtilization);
  if (target.averageUtilization !== undefined && target.averageUtilization !== null && (u === undefined || u <= 0)) out.push(invalid(`${path}.averageUtilization`, target.averageUtilization, 'must be greater than 0'));
  return out;
}

function validateResourceSource(src: Record<string, unknown>, path: string, container: boolean): Cause[] {
  const out: Cause[] = [];
  if (!str(src.name)) out.push(required(`${path}.name`, 'must specify a resource name'));
  if (container && !str(src.container)) out.push(required(`${path}.container`, 'must specify a container'));
  const target = rec(src.target);
  out.push(...validateTarget(src.target, `${path}.target`));
  if (target) {
    const hasUtil = target.averageUtilization !== undefined && target.averageUtilization !== null;
    const hasAvg = target.averageValue !== undefined && target.averageValue !== null;
    if (!hasUtil && !hasAvg) out.push(required(`${path}.target.averageUtilization`, 'must set either a target raw value or a target utilization'));
    if (hasUtil && hasAvg) out.push(forbidden(`${path}.target.averageValue`, 'may not set both a target raw value and a target utilization'));
  }
  return out;
}

function validateMetricSource(m: Record<string, unknown>, type: string, path: string): Cause[] {
  const src = rec(m[SOURCE_FIELD[type]])!;
  const sp = `${path}.${SOURCE_FIELD[type]}`;
  if (type === 'Resource') return validateResourceSource(src, sp, false);
  if (type === 'ContainerResource') return validateResourceSource(src, sp, true);
  const out: Cause[] = [];
  if (!str(rec(src.metric)?.name)) out.push(required(`${sp}.metric.name`, 'must specify a metric name'));
  if (type === 'Object') out.push(...validateCrossVersionRef(src.describedObject, `${sp}.describedObject`));
  out.push(...validateTarget(src.target, `${sp}.target`));
  return out;
}

function validateMetrics(metrics: Record<string, unknown>[]): Cause[] {
  const out: Cause[] = [];
  metrics.forEach((m, i) => {
    const path = `spec.metrics[${i}]`;
    const type = str(m.type);
    if (!type) return void out.push(required(`${path}.type`, 'must specify a metric source type'));
    if (!METRIC_SOURCE_TYPES.includes(type)) return void out.push(notSupported(`${path}.type`, type, METRIC_SOURCE_TYPES));
    for (const [t, field] of Object.entries(SOURCE_FIELD)) {
      if (t !== type && m[field] !== undefined && m[field] !== null) out.push(forbidden(`${path}.${field}`, 'must populate the given metric source only'));
    }
    if (!rec(m[SOURCE_FIELD[type]])) return void out.push(required(`${path}.${SOURCE_FIELD[type]}`, 'must populate information for the given metric source'));
    out.push(...validateMetricSource(m, type, path));
  });
  return out;
}

function validateScalingRules(rules: unknown, path: string): Cause[] {
  const r = rec(rules);
  if (!r) return [];
  const out: Cause[] = [];
  const w = r.stabilizationWindowSeconds;
  if (typeof w === 'number' && w < 0) out.push(invalid(`${path}.stabilizationWindowSeconds`, w, 'must be greater than or equal to zero'));
  if (typeof w === 'number' && w > MAX_STABILIZATION) out.push(invalid(`${path}.stabilizationWindowSeconds`, w, `must be less than or equal to ${MAX_STABILIZATION}`));
  const sel = str(r.selectPolicy);
  if (sel !== undefined && !SELECT_POLICIES.includes(sel)) out.push(notSupported(`${path}.selectPolicy`, sel, SELECT_POLICIES));
  const policies = recs(r.policies);
  if (policies.length === 0) out.push(required(`${path}.policies`, 'must specify at least one Policy'));
  policies.forEach((p, i) => {
    const pp = `${path}.policies[${i}]`;
    const type = str(p.type);
    if (type === undefined || !SCALING_POLICY_TYPES.includes(type)) out.push(notSupported(`${pp}.type`, p.type ?? '', SCALING_POLICY_TYPES));
    const v = num(p.value);
    if (v === undefined || v <= 0) out.push(invalid(`${pp}.value`, p.value ?? 0, 'must be greater than zero'));
    const period = num(p.periodSeconds);
    if (period === undefined || period <= 0) out.push(invalid(`${pp}.periodSeconds`, p.periodSeconds ?? 0, 'must be greater than zero'));
    else if (period > MAX_PERIOD) out.push(invalid(`${pp}.periodSeconds`, period, `must be less than or equal to ${MAX_PERIOD}`));
  });
  if (r.tolerance !== undefined && r.tolerance !== null) {
    const q = parseQuantity(r.tolerance as string);
    if (!q || q.mantissa < 0n) out.push(invalid(`${path}.tolerance`, r.tolerance, 'must be greater than or equal to 0'));
  }
  return out;
}

/** The spec's rules (v2 form). */
export function validateHpaSpec(spec: Record<string, unknown>): Cause[] {
  const out = validateCrossVersionRef(spec.scaleTargetRef, 'spec.scaleTargetRef');
  const min = num(spec.minReplicas);
  const max = num(spec.maxReplicas) ?? 0;
  if (min !== undefined && min < 1) out.push(invalid('spec.minReplicas', min, 'must be greater than or equal to 1'));
  if (max < 1) out.push(invalid('spec.maxReplicas', max, 'must be greater than 0'));
  if (min !== undefined && max < min) out.push(invalid('spec.maxReplicas', max, 'must be greater than or equal to `minReplicas`'));
  out.push(...validateMetrics(recs(spec.metrics)));
  const behavior = rec(spec.behavior);
  if (behavior) {
    out.push(...validateScalingRules(behavior.scaleUp, 'spec.behavior.scaleUp'), ...validateScalingRules(behavior.scaleDown, 'spec.behavior.scaleDown'));
  }
  return out;
}
