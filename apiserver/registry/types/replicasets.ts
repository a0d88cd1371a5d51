import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { labelSelectorSchema, withMeta } from '../common-schemas';
import { CONDITION_STATUSES, nonNegative, oneOf } from '../common-validation';
import { immutable, index } from '../field-errors';
import { num, rec, recs, setDefault } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { described, int32, int64, mapList, obj, ptr, str, time } from '../schema-builders';
import { semanticEqual } from '../semantic-equal';
import { ageColumn, column, type Now } from '../table';
import { nonNegativeCounters, notGreater, validateWorkloadSelector, workloadWideColumns } from './apps-common';
import { defaultPodTemplate, podTemplateSpecSchema, validatePodTemplate } from './pod-template';

/**
 * apps/v1 ReplicaSet: keeps `spec.replicas` pods matching its selector (the controller is
 * controllers/workloads/replicaset-controller.ts). Selector required and immutable (spec 9.3),
 * replicas defaulting to 1, status and scale sub-resources.
 */

const APPS = 'k8s.io.api.apps.v1';

const replicaSetConditionSchema = obj(`${APPS}.ReplicaSetCondition`, {
  type: [1, ptr(str('Type of replica set condition, e.g. ReplicaFailure.'))],
  status: [2, ptr(str('Status of the condition, one of True, False, Unknown.'))],
  lastTransitionTime: [3, time('The last time the condition transitioned from one status to another.')],
  reason: [4, str("The reason for the condition's last transition.")],
  message: [5, str('A human readable message indicating details about the transition.')],
});

export const replicaSetSchema = withMeta(`${APPS}.ReplicaSet`, {
  spec: [
    2,
    described('Spec defines the specification of the desired behavior of the ReplicaSet.', obj(`${APPS}.ReplicaSetSpec`, {
      replicas: [1, ptr(int32('Replicas is the number of desired pods. Defaults to 1.'))],
      minReadySeconds: [4, int32('Minimum number of seconds for which a newly created pod should be ready without any of its containers crashing, for it to be considered available. Defaults to 0.')],
      selector: [2, described('Selector is a label query over pods that should match the replica count. It must match the pod template\'s labels.', labelSelectorSchema)],
      template: [3, described('Template is the object that describes the pod that will be created if insufficient replicas are detected.', podTemplateSpecSchema)],
    })),
  ],
  status: [
    3,
    described('Status is the most recently observed status of the ReplicaSet. Populated by the system; read-only.', obj(`${APPS}.ReplicaSetStatus`, {
      replicas: [1, ptr(int32('Replicas is the most recently observed number of non-terminating pods.'))],
      fullyLabeledReplicas: [2, int32('The number of non-terminating pods that have labels matching the labels of the pod template of the replicaset.')],
      readyReplicas: [4, int32('The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition.')],
      availableReplicas: [5, int32('The number of available non-terminating pods (ready for at least minReadySeconds) for this replica set.')],
      observedGeneration: [3, int64('ObservedGeneration reflects the generation of the most recently observed ReplicaSet.')],
      conditions: [6, mapList(replicaSetConditionSchema, ['type'], "Represents the latest available observations of a replica set's current state.")],
    })),
  ],
});

function defaults(o: KObject): void {
  const spec = rec(o.spec);
  if (!spec) return;
  setDefault(spec, 'replicas', 1, false);
  defaultPodTemplate(spec.template);
}

/** Upstream ValidateReplicaSetSpec. */
export function validateReplicaSetSpec(spec: Record<string, unknown>): Cause[] {
  const out: Cause[] = [...nonNegative('spec.replicas', spec.replicas), ...nonNegative('spec.minReadySeconds', spec.minReadySeconds)];
  const sel = validateWorkloadSelector(spec.selector, 'spec.selector');
  out.push(...sel);
  out.push(...validatePodTemplate(spec.template, 'spec.template', { selector: sel.length === 0 ? spec.selector : undefined, restartPolicies: ['Always'] }));
  return out;
}

/** Upstream ValidateReplicaSetStatus. */
export function validateReplicaSetStatus(status: Record<string, unknown>): Cause[] {
  const out = nonNegativeCounters(status, ['replicas', 'fullyLabeledReplicas', 'readyReplicas', 'availableReplicas', 'observedGeneration']);
  out.push(...notGreater(status, 'fullyLabeledReplicas', 'replicas', 'cannot be greater than status.replicas'));
  out.push(...notGreater(status, 'readyReplicas', 'replicas', 'cannot be greater than status.replicas'));
  out.push(...notGreater(status, 'availableReplicas', 'replicas', 'cannot be greater than status.replicas'));
  out.push(...notGreater(status, 'availableReplicas', 'readyReplicas', 'cannot be greater than readyReplicas'));
  recs(status.conditions).forEach((c, i) => out.push(...oneOf(`${index('status.conditions', i)}.status`, c.status, CONDITION_STATUSES)));
  return out;
}

function validate(o: KObject, _old?: KObject, subresource = ''): Cause[] {
  const status = validateReplicaSetStatus(rec(o.status) ?? {});
  return subresource === 'status' ? status : [...validateReplicaSetSpec(rec(o.spec) ?? {}), ...status];
}

/** apps/v1: the selector may not change (upstream's ReplicaSet strategy for apps/v1). */
function validateUpdate(o: KObject, old: KObject): Cause[] {
  const sel = rec(o.spec)?.selector;
  return semanticEqual(sel, rec(old.spec)?.selector) ? [] : [immutable('spec.selector', sel ?? null)];
}

export function replicaSetColumns(now: Now): TableColumn[] {
  const count = (o: KObject, where: 'spec' | 'status', f: string) => num(rec(o[where])?.[f]) ?? 0;
  return [
    column('Desired', 'integer', 'Replicas is the number of desired replicas.', (o) => count(o, 'spec', 'replicas')),
    column('Current', 'integer', 'Replicas is the most recently observed number of replicas.', (o) => count(o, 'status', 'replicas')),
    column('Ready', 'integer', 'The number of ready replicas for this replica set.', (o) => count(o, 'status', 'readyReplicas')),
    ageColumn(now),
    ...workloadWideColumns('Selector is a label query over pods that should match the replica count.'),
  ];
}

export function makeReplicaSetType(now: Now = Date.now): ResourceType {
  return {
    group: 'apps',
    version: 'v1',
    resource: 'replicasets',
    singular: 'replicaset',
    kind: 'ReplicaSet',
    listKind: 'ReplicaSetList',
    namespaced: true,
    shortNames: ['rs'],
    categories: ['all'],
    schema: replicaSetSchema,
    hasStatus: true,
    specFields: ['spec'],
    tableColumns: replicaSetColumns(now),
    defaults,
    validate,
    validateUpdate,
    scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.spec.selector' },
  };
}
