import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { labelSelectorSchema, withMeta } from '../common-schemas';
import { CONDITION_STATUSES, nonNegative, oneOf } from '../common-validation';
import { coveredByDeclarative, forbidden, immutable, index, invalid, notSupported, required } from '../field-errors';
import { ensureRec, num, rec, recs, setDefault } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { bool, described, int32, int64, intOrStr, mapList, obj, ptr, str, strEnum, time } from '../schema-builders';
import { semanticEqual } from '../semantic-equal';
import { ageColumn, column, type Now } from '../table';
import { intOrPercentErrors, nonNegativeCounters, notGreater, notOver100Percent, validateWorkloadSelector, workloadWideColumns } from './apps-common';
import { intOrPercentValue } from './workload-common';
import { defaultPodTemplate, podTemplateSpecSchema, validatePodTemplate } from './pod-template';

/**
 * apps/v1 Deployment (the controller is controllers/workloads/deployment-controller.ts). Defaults
 * as spec 9.3 and upstream's SetDefaults_Deployment: replicas 1, strategy RollingUpdate with
 * maxUnavailable and maxSurge 25%, revisionHistoryLimit 10, progressDeadlineSeconds 600; selector
 * required and immutable; status and scale sub-resources.
 */

const APPS = 'k8s.io.api.apps.v1';
export const STRATEGY_TYPES: readonly string[] = ['Recreate', 'RollingUpdate'];

const deploymentConditionSchema = obj(`${APPS}.DeploymentCondition`, {
  type: [1, ptr(str('Type of deployment condition: Available, Progressing or ReplicaFailure.'))],
  status: [2, ptr(str('Status of the condition, one of True, False, Unknown.'))],
  lastUpdateTime: [6, time('The last time this condition was updated.')],
  lastTransitionTime: [7, time('Last time the condition transitioned from one status to another.')],
  reason: [4, str("The reason for the condition's last transition.")],
  message: [5, str('A human readable message indicating details about the transition.')],
});

const strategySchema = {
  ...obj(`${APPS}.DeploymentStrategy`, {
    type: [1, strEnum(STRATEGY_TYPES, 'Type of deployment. Can be "Recreate" or "RollingUpdate". Default is RollingUpdate.')],
    rollingUpdate: [
      2,
      described('Rolling update config params. Present only if the strategy type is RollingUpdate.', obj(`${APPS}.RollingUpdateDeployment`, {
        maxUnavailable: [1, ptr(intOrStr('The maximum number of pods that can be unavailable during the update: an absolute number or a percentage of desired pods (rounded down). Defaults to 25%.'))],
        maxSurge: [2, ptr(intOrStr('The maximum number of pods that can be scheduled above the desired number of pods: an absolute number or a percentage of desired pods (rounded up). Defaults to 25%.'))],
      })),
    ],
  }),
  retainKeys: true,
};

export const deploymentSchema = withMeta(`${APPS}.Deployment`, {
  spec: [
    2,
    described('Specification of the desired behavior of the Deployment.', obj(`${APPS}.DeploymentSpec`, {
      replicas: [1, ptr(int32('Number of desired pods. Defaults to 1.'))],
      selector: [2, described("Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment. It must match the pod template's labels.", labelSelectorSchema)],
      template: [3, described('Template describes the pods that will be created.', podTemplateSpecSchema)],
      strategy: [4, described('The deployment strategy to use to replace existing pods with new ones.', strategySchema)],
      minReadySeconds: [5, int32('Minimum number of seconds for which a newly created pod should be ready without any of its containers crashing, for it to be considered available. Defaults to 0.')],
      revisionHistoryLimit: [6, ptr(int32('The number of old ReplicaSets to retain to allow rollback. Defaults to 10.'))],
      paused: [7, bool('Indicates that the deployment is paused.')],
      progressDeadlineSeconds: [9, ptr(int32('The maximum time in seconds for a deployment to make progress before it is considered to be failed (condition Progressing, reason ProgressDeadlineExceeded). Defaults to 600s.'))],
    })),
  ],
  status: [
    3,
    described('Most recently observed status of the Deployment.', obj(`${APPS}.DeploymentStatus`, {
      observedGeneration: [1, int64('The generation observed by the deployment controller.')],
      replicas: [2, int32('Total number of non-terminating pods targeted by this deployment (their labels match the selector).')],
      updatedReplicas: [3, int32('Total number of non-terminating pods targeted by this deployment that have the desired template spec.')],
      readyReplicas: [7, int32('Total number of non-terminating pods targeted by this Deployment with a Ready Condition.')],
      availableReplicas: [4, int32('Total number of available non-terminating pods (ready for at least minReadySeconds) targeted by this deployment.')],
      unavailableReplicas: [5, int32('Total number of unavailable pods targeted by this deployment: pods still required for 100% available capacity.')],
      conditions: [6, mapList(deploymentConditionSchema, ['type'], "Represents the latest available observations of a deployment's current state.")],
      collisionCount: [8, ptr(int32('Count of hash collisions for the Deployment, used to name the newest ReplicaSet.'))],
    })),
  ],
});

function defaults(o: KObject): void {
  const spec = rec(o.spec);
  if (!spec) return;
  setDefault(spec, 'replicas', 1, false);
  const strategy = ensureRec(spec, 'strategy');
  setDefault(strategy, 'type', 'RollingUpdate');
  if (strategy.type === 'RollingUpdate') {
    const ru = ensureRec(strategy, 'rollingUpdate');
    setDefault(ru, 'maxUnavailable', '25%', false);
    setDefault(ru, 'maxSurge', '25%', false);
  }
  setDefault(spec, 'revisionHistoryLimit', 10, false);
  setDefault(spec, 'progressDeadlineSeconds', 600, false);
  defaultPodTemplate(spec.template);
}

/** Upstream ValidateDeploymentStrategy and ValidateRollingUpdateDeployment. */
function validateStrategy(strategy: Record<string, unknown>): Cause[] {
  const path = 'spec.strategy';
  if (strategy.type === 'Recreate') return strategy.rollingUpdate ? [forbidden(`${path}.rollingUpdate`, "may not be specified when strategy `type` is 'Recreate'")] : [];
  if (strategy.type !== 'RollingUpdate') return [coveredByDeclarative(notSupported(`${path}.type`, strategy.type ?? '', STRATEGY_TYPES))];
  const ru = rec(strategy.rollingUpdate);
  if (!ru) return [required(`${path}.rollingUpdate`, 'this should be defaulted and never be nil')];
  const p = `${path}.rollingUpdate`;
  const out = [...intOrPercentErrors(`${p}.maxUnavailable`, ru.maxUnavailable), ...intOrPercentErrors(`${p}.maxSurge`, ru.maxSurge)];
  if (intOrPercentValue(ru.maxUnavailable) === 0 && intOrPercentValue(ru.maxSurge) === 0) {
    out.push(invalid(`${p}.maxUnavailable`, ru.maxUnavailable ?? 0, 'may not be 0 when `maxSurge` is 0'));
  }
  out.push(...notOver100Percent(`${p}.maxUnavailable`, ru.maxUnavailable));
  return out;
}

/** Upstream ValidateDeploymentSpec. */
export function validateDeploymentSpec(spec: Record<string, unknown>): Cause[] {
  const out: Cause[] = [...nonNegative('spec.replicas', spec.replicas)];
  const sel = validateWorkloadSelector(spec.selector, 'spec.selector');
  out.push(...sel);
  out.push(...validatePodTemplate(spec.template, 'spec.template', { selector: sel.length === 0 ? spec.selector : undefined, restartPolicies: ['Always'] }));
  out.push(...validateStrategy(rec(spec.strategy) ?? {}));
  out.push(...nonNegative('spec.minReadySeconds', spec.minReadySeconds));
  out.push(...nonNegative('spec.revisionHistoryLimit', spec.revisionHistoryLimit));
  const deadline = spec.progressDeadlineSeconds;
  if (typeof deadline === 'number') {
    out.push(...nonNegative('spec.progressDeadlineSeconds', deadline));
    if (deadline <= (num(spec.minReadySeconds) ?? 0)) out.push(invalid('spec.progressDeadlineSeconds', deadline, 'must be greater than minReadySeconds'));
  }
  return out;
}

/** Upstream ValidateDeploymentStatus. */
export function validateDeploymentStatus(status: Record<string, unknown>): Cause[] {
  const out = nonNegativeCounters(status, ['observedGeneration', 'replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas', 'unavailableReplicas', 'collisionCount']);
  const msg = 'cannot be greater than status.replicas';
  for (const f of ['updatedReplicas', 'readyReplicas', 'availableReplicas']) out.push(...notGreater(status, f, 'replicas', msg));
  out.push(...notGreater(status, 'availableReplicas', 'readyReplicas', 'cannot be greater than readyReplicas'));
  recs(status.conditions).forEach((c, i) => out.push(...oneOf(`${index('status.conditions', i)}.status`, c.status, CONDITION_STATUSES)));
  return out;
}

function validate(o: KObject, _old?: KObject, subresource = ''): Cause[] {
  const status = validateDeploymentStatus(rec(o.status) ?? {});
  return subresource === 'status' ? status : [...validateDeploymentSpec(rec(o.spec) ?? {}), ...status];
}

/** apps/v1: the selector is immutable; status.collisionCount never goes down (upstream ValidateDeploymentStatusUpdate). */
function validateUpdate(o: KObject, old: KObject): Cause[] {
  const out: Cause[] = [];
  const sel = rec(o.spec)?.selector;
  if (!semanticEqual(sel, rec(old.spec)?.selector)) out.push(immutable('spec.selector', sel ?? null));
  const cc = num(rec(o.status)?.collisionCount);
  const oldCc = num(rec(old.status)?.collisionCount);
  if (cc !== undefined && oldCc !== undefined && cc < oldCc) out.push(invalid('status.collisionCount', cc, 'cannot be decremented'));
  return out;
}

export function deploymentColumns(now: Now): TableColumn[] {
  const count = (o: KObject, where: 'spec' | 'status', f: string) => num(rec(o[where])?.[f]) ?? 0;
  return [
    column('Ready', 'string', 'Number of the pod with ready state', (o) => `${count(o, 'status', 'readyReplicas')}/${count(o, 'spec', 'replicas')}`),
    column('Up-to-date', 'string', 'Total number of non-terminated pods targeted by this deployment that have the desired template spec.', (o) => count(o, 'status', 'updatedReplicas')),
    column('Available', 'string', 'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.', (o) => count(o, 'status', 'availableReplicas')),
    ageColumn(now),
    ...workloadWideColumns('Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.'),
  ];
}

export function makeDeploymentType(now: Now = Date.now): ResourceType {
  return {
    group: 'apps',
    version: 'v1',
    resource: 'deployments',
    singular: 'deployment',
    kind: 'Deployment',
    listKind: 'DeploymentList',
    namespaced: true,
    shortNames: ['deploy'],
    categories: ['all'],
    schema: deploymentSchema,
    hasStatus: true,
    specFields: ['spec'],
    // Upstream's strategy: annotations are copied to the ReplicaSets, so changing them is a new
    // generation; status writes (the controller's revision annotation) never bump it.
    bumpsGeneration: (o, old, subresource) => subresource !== 'status' && !semanticEqual(o.metadata.annotations ?? {}, old.metadata.annotations ?? {}),
    tableColumns: deploymentColumns(now),
    defaults,
    validate,
    declarativeCoverage: ['spec.strategy.type'],
    validateUpdate,
    scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.spec.selector' },
  };
}
