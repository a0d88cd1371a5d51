import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { labelSelectorSchema, metaConditionSchema, withMeta } from '../common-schemas';
import { nonNegative, oneOf, validateLabelSelector } from '../common-validation';
import { invalid } from '../field-errors';
import { num, rec } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { described, int32, int64, intOrStr, map, mapList, obj, ptr, strEnum, time } from '../schema-builders';
import { deleteOptionsSchema } from '../meta-schemas';
import { ageColumn, column, type Now } from '../table';
import { intOrPercentCauses } from './workload-common';

/** policy/v1 PodDisruptionBudget. An empty selector selects every pod of the namespace; an absent one none (spec 2.7). */

const EVICTION_POLICIES: readonly string[] = ['AlwaysAllow', 'IfHealthyBudget'];

const POLICY = 'k8s.io.api.policy.v1';

export const podDisruptionBudgetSchema = withMeta(`${POLICY}.PodDisruptionBudget`, {
  spec: [
    2,
    described('Specification of the desired behavior of the PodDisruptionBudget.', obj(`${POLICY}.PodDisruptionBudgetSpec`, {
      minAvailable: [1, ptr(intOrStr('An eviction is allowed if at least this many pods remain available.'))],
      selector: [2, described('Label query over pods whose evictions are managed by the disruption budget.', labelSelectorSchema)],
      maxUnavailable: [3, ptr(intOrStr('An eviction is allowed if at most this many pods are unavailable after it.'))],
      unhealthyPodEvictionPolicy: [4, ptr(strEnum(EVICTION_POLICIES, 'When unhealthy running pods may be evicted: IfHealthyBudget or AlwaysAllow.'))],
    })),
  ],
  status: [
    3,
    described('Most recently observed status of the PodDisruptionBudget.', obj(`${POLICY}.PodDisruptionBudgetStatus`, {
      observedGeneration: [1, int64('The most recent generation observed when updating this status.')],
      disruptedPods: [2, map(time(), 'Pods whose eviction was processed but not yet observed by the controller, with the eviction time.')],
      disruptionsAllowed: [3, ptr(int32('Number of pod disruptions that are currently allowed.'))],
      currentHealthy: [4, ptr(int32('Current number of healthy pods.'))],
      desiredHealthy: [5, ptr(int32('Minimum desired number of healthy pods.'))],
      expectedPods: [6, ptr(int32('Total number of pods counted by this disruption budget.'))],
      conditions: [7, mapList(metaConditionSchema, ['type'], 'Conditions of the budget, e.g. DisruptionAllowed.')],
    })),
  ],
});

/**
 * policy/v1 Eviction, the body of POST pods/{name}/eviction (kubectl drain). The sub-resource is
 * not served yet; the message is here so its protobuf form is known.
 */
export const evictionSchema = withMeta(`${POLICY}.Eviction`, { deleteOptions: [2, described('DeleteOptions may be provided for the deletion of the pod.', deleteOptionsSchema)] });

/** Upstream ValidatePodDisruptionBudgetSpec (+ status counters non-negative). */
function validate(o: KObject): Cause[] {
  const spec = rec(o.spec) ?? {};
  const out: Cause[] = [];
  const min = spec.minAvailable;
  const max = spec.maxUnavailable;
  if (min !== undefined && min !== null && max !== undefined && max !== null) out.push(invalid('spec', spec, 'minAvailable and maxUnavailable cannot be both set'));
  out.push(...intOrPercentCauses('spec.minAvailable', min));
  out.push(...intOrPercentCauses('spec.maxUnavailable', max));
  out.push(...validateLabelSelector(spec.selector, 'spec.selector'));
  out.push(...oneOf('spec.unhealthyPodEvictionPolicy', spec.unhealthyPodEvictionPolicy, EVICTION_POLICIES));
  const status = rec(o.status) ?? {};
  for (const f of ['disruptionsAllowed', 'currentHealthy', 'desiredHealthy', 'expectedPods']) out.push(...nonNegative(`status.${f}`, status[f]));
  return out;
}

function intOrStrCell(v: unknown): string {
  return typeof v === 'number' || typeof v === 'string' ? String(v) : 'N/A';
}

export function podDisruptionBudgetColumns(now: Now): TableColumn[] {
  return [
    column('Min Available', 'string', 'The minimum number of pods that must be available simultaneously.', (o) => intOrStrCell(rec(o.spec)?.minAvailable)),
    column('Max Unavailable', 'string', 'The maximum number of pods that may be unavailable simultaneously.', (o) => intOrStrCell(rec(o.spec)?.maxUnavailable)),
    column('Allowed Disruptions', 'integer', 'Calculated number of pods that may be disrupted at this time.', (o) => num(rec(o.status)?.disruptionsAllowed) ?? 0),
    ageColumn(now),
  ];
}

export function makePodDisruptionBudgetType(now: Now = Date.now): ResourceType {
  return {
    group: 'policy',
    version: 'v1',
    resource: 'poddisruptionbudgets',
    singular: 'poddisruptionbudget',
    kind: 'PodDisruptionBudget',
    listKind: 'PodDisruptionBudgetList',
    namespaced: true,
    shortNames: ['pdb'],
    schema: podDisruptionBudgetSchema,
    hasStatus: true,
    specFields: ['spec'],
    tableColumns: podDisruptionBudgetColumns(now),
    validate,
  };
}

export const podDisruptionBudgetType: ResourceType = makePodDisruptionBudgetType();
