import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { labelSelectorSchema, metaConditionSchema, withMeta } from '../common-schemas';
import { messages, nonNegative, oneOf, validateLabelSelector } from '../common-validation';
import { invalid } from '../field-errors';
import { percentErrors } from '../../api/name-validation';
import { num, rec } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { int32, int64, intOrStr, map, mapList, obj, strEnum, time } from '../schema-builders';
import { ageColumn, column, type Now } from '../table';

/** policy/v1 PodDisruptionBudget. An empty selector selects every pod of the namespace; an absent one none (spec 2.7). */

const EVICTION_POLICIES: readonly string[] = ['AlwaysAllow', 'IfHealthyBudget'];

export const podDisruptionBudgetSchema = withMeta({
  spec: obj({
    minAvailable: intOrStr('An eviction is allowed if at least this many pods remain available.'),
    selector: labelSelectorSchema,
    maxUnavailable: intOrStr('An eviction is allowed if at most this many pods are unavailable after it.'),
    unhealthyPodEvictionPolicy: strEnum(EVICTION_POLICIES),
  }),
  status: obj({
    observedGeneration: int64(),
    disruptedPods: map(time()),
    disruptionsAllowed: int32(),
    currentHealthy: int32(),
    desiredHealthy: int32(),
    expectedPods: int32(),
    conditions: mapList(metaConditionSchema, ['type']),
  }),
});

/** Upstream ValidatePositiveIntOrPercent + IsNotMoreThan100Percent. */
function intOrPercent(path: string, v: unknown): Cause[] {
  if (typeof v === 'number') return nonNegative(path, v);
  if (typeof v !== 'string') return [];
  const out = messages(path, v, percentErrors(v));
  const m = /^([0-9]+)%$/.exec(v);
  if (m && Number(m[1]) > 100) out.push(invalid(path, v, 'must not be greater than 100%'));
  return out;
}

/** Upstream ValidatePodDisruptionBudgetSpec (+ status counters non-negative). */
function validate(o: KObject): Cause[] {
  const spec = rec(o.spec) ?? {};
  const out: Cause[] = [];
  const min = spec.minAvailable;
  const max = spec.maxUnavailable;
  if (min !== undefined && min !== null && max !== undefined && max !== null) out.push(invalid('spec', spec, 'minAvailable and maxUnavailable cannot be both set'));
  out.push(...intOrPercent('spec.minAvailable', min));
  out.push(...intOrPercent('spec.maxUnavailable', max));
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
