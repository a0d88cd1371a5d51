import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { withMeta } from '../common-schemas';
import { forbidden, immutable, notSupported, required } from '../field-errors';
import { str } from '../obj-access';
import type { ResourceType } from '../resource-type';
import { bool, int32, ptr, str as s } from '../schema-builders';
import { ageColumn, column, type Now } from '../table';

/**
 * scheduling.svc.io/v1 PriorityClass (scheduling.k8s.io/v1 for stock clients): a name for a pod
 * priority, resolved into pod.spec.priority by the Priority admission plugin and read by the
 * scheduler's preemption. Wire contract: upstream's k8s.io.api.scheduling.v1 messages and numbers.
 */

const V1 = 'k8s.io.api.scheduling.v1';

/** Upstream scheduling.HighestUserDefinablePriority: a user class may not go above it. */
export const HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000;
/** Upstream scheduling.SystemCriticalPriority: twice the user maximum. */
export const SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY;
export const SYSTEM_PRIORITY_CLASS_PREFIX = 'system-';
export const PREEMPTION_POLICIES: readonly string[] = ['Never', 'PreemptLowerPriority'];

/** Upstream's two system classes (scheduling.SystemPriorityClasses), created at start. */
export const SYSTEM_PRIORITY_CLASSES: ReadonlyArray<{ name: string; value: number; description: string }> = [
  { name: 'system-node-critical', value: SYSTEM_CRITICAL_PRIORITY + 1000, description: 'Used for system critical pods that must not be moved from their current node.' },
  { name: 'system-cluster-critical', value: SYSTEM_CRITICAL_PRIORITY, description: 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.' },
];

export const priorityClassSchema = withMeta(
  `${V1}.PriorityClass`,
  {
    value: [2, ptr(int32('The value of this priority class: the priority pods naming it receive.'))],
    globalDefault: [3, bool('Whether this class is the priority of pods that name none. Only one class may be the global default.')],
    description: [4, s('What this priority class should be used for.')],
    preemptionPolicy: [5, ptr(s('Whether pods of this class may preempt lower-priority pods: Never or PreemptLowerPriority (the default).'))],
  },
  { required: ['value'] },
);

/** Upstream SetDefaults_PriorityClass: preemptionPolicy PreemptLowerPriority. */
function defaults(o: KObject): void {
  if (o.preemptionPolicy === undefined || o.preemptionPolicy === null) o.preemptionPolicy = 'PreemptLowerPriority';
}

/** Upstream IsKnownSystemPriorityClass: why a system- name cannot be this class, or undefined when it is one of the two. */
function systemClassError(name: string, value: unknown, globalDefault: boolean): string | undefined {
  const known = SYSTEM_PRIORITY_CLASSES.find((c) => c.name === name);
  if (!known) return `${name} is not a known system priority class`;
  if (value !== known.value) return `value of ${name} PriorityClass must be ${known.value}`;
  if (globalDefault) return `globalDefault of ${name} PriorityClass must be false`;
  return undefined;
}

/** Upstream ValidatePriorityClass (metadata is validated generically before). */
function validate(o: KObject): Cause[] {
  const out: Cause[] = [];
  const name = o.metadata.name ?? '';
  if (typeof o.value !== 'number') out.push(required('value'));
  if (name.startsWith(SYSTEM_PRIORITY_CLASS_PREFIX)) {
    const err = systemClassError(name, o.value, o.globalDefault === true);
    if (err) out.push(forbidden('metadata.name', `priority class names with '${SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are reserved for system use only. error: ${err}`));
  } else if (typeof o.value === 'number' && o.value > HIGHEST_USER_DEFINABLE_PRIORITY) {
    out.push(forbidden('value', `maximum allowed value of a user defined priority is ${HIGHEST_USER_DEFINABLE_PRIORITY}`));
  }
  const policy = str(o.preemptionPolicy);
  if (o.preemptionPolicy !== undefined && (policy === undefined || !PREEMPTION_POLICIES.includes(policy))) {
    out.push(notSupported('preemptionPolicy', o.preemptionPolicy, PREEMPTION_POLICIES));
  }
  return out;
}

/** Upstream ValidatePriorityClassUpdate: value and preemptionPolicy never change. */
function validateUpdate(o: KObject, old: KObject): Cause[] {
  const out: Cause[] = [];
  if (o.value !== old.value) out.push(forbidden('value', 'may not be changed in an update.'));
  if (o.preemptionPolicy !== old.preemptionPolicy) out.push(immutable('preemptionPolicy', o.preemptionPolicy ?? null));
  return out;
}

/** kubectl get priorityclasses: NAME, VALUE, GLOBAL-DEFAULT, AGE, PREEMPTIONPOLICY (upstream's printer). */
function columns(now: Now) {
  return [
    column('Value', 'integer', 'The value of this priority class.', (o) => (typeof o.value === 'number' ? o.value : 0)),
    column('Global-Default', 'boolean', 'Whether this class is the global default.', (o) => o.globalDefault === true),
    ageColumn(now),
    column('PreemptionPolicy', 'string', 'Whether pods of this class preempt lower-priority pods.', (o) => str(o.preemptionPolicy) ?? ''),
  ];
}

export function makePriorityClassType(now: Now = Date.now): ResourceType {
  return {
    group: 'scheduling.svc.io',
    version: 'v1',
    resource: 'priorityclasses',
    singular: 'priorityclass',
    kind: 'PriorityClass',
    listKind: 'PriorityClassList',
    namespaced: false,
    shortNames: ['pc'],
    schema: priorityClassSchema,
    hasStatus: false,
    tableColumns: columns(now),
    defaults,
    validate,
    validateUpdate,
  };
}
