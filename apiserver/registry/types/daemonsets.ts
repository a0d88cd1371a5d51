import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { labelSelectorRequirements } from '../../api/label-selector';
import { labelSelectorSchema, withMeta } from '../common-schemas';
import { nonNegative, validateLabelSelector } from '../common-validation';
import { immutable, invalid, notSupported, required } from '../field-errors';
import { ensureRec, get, num, rec, setDefault } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { decodedEqual } from '../semantic-equal';
import { described, int32, int64, intOrStr, mapList, obj, ptr, str, time } from '../schema-builders';
import { ageColumn, column, formatLabels, type Now } from '../table';
import { defaultPodTemplate, podTemplateSpecSchema, validatePodTemplate } from './pod-template';
import { formatLabelSelector } from '../../api/label-selector';
import { containerColumns, intOrPercentCauses, intOrPercentValue } from './workload-common';

/** apps/v1 DaemonSet: upstream's messages and field numbers, defaults, validation and table columns. */

const APPS = 'k8s.io.api.apps.v1';

/**
 * Upstream's internal spec.templateGeneration, which apps/v1 carries as this annotation: 1 at
 * creation, one more each time an update changes the template. The controller labels its pods
 * with it (pod-template-generation), as upstream.
 */
export const TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation';

export const DAEMONSET_STRATEGIES: readonly string[] = ['RollingUpdate', 'OnDelete'];

const conditionSchema = obj(
  `${APPS}.DaemonSetCondition`,
  {
    type: [1, ptr(str('Type of DaemonSet condition.'))],
    status: [2, ptr(str('Status of the condition, one of True, False, Unknown.'))],
    lastTransitionTime: [3, time('Last time the condition transitioned from one status to another.')],
    reason: [4, str("The reason for the condition's last transition.")],
    message: [5, str('A human readable message indicating details about the transition.')],
  },
  { required: ['type', 'status'] },
);

const updateStrategySchema = obj(`${APPS}.DaemonSetUpdateStrategy`, {
  type: [1, str('Type of daemon set update: RollingUpdate (the default) or OnDelete.')],
  rollingUpdate: [
    2,
    described(
      'Rolling update parameters; present only if type is RollingUpdate.',
      obj(`${APPS}.RollingUpdateDaemonSet`, {
        maxUnavailable: [1, ptr(intOrStr('The maximum number of daemon pods that can be unavailable during the update, a number or a percentage of desiredNumberScheduled (rounded up). Default 1; cannot be 0 when maxSurge is 0.'))],
        maxSurge: [2, ptr(intOrStr('The maximum number of nodes with an available daemon pod that can have an updated pod started beside it during the update, a number or a percentage (rounded up). Default 0; cannot be set with a non-zero maxUnavailable.'))],
      }),
    ),
  ],
});

export const daemonSetSchema = withMeta(`${APPS}.DaemonSet`, {
  spec: [
    2,
    described(
      'The desired behavior of this daemon set.',
      obj(`${APPS}.DaemonSetSpec`, {
        selector: [1, described("A label query over pods that are managed by the daemon set. It must match the pod template's labels.", labelSelectorSchema)],
        template: [2, described("The pod run on every eligible node (the template's node selector, required node affinity and tolerations decide which); restartPolicy must be Always.", podTemplateSpecSchema)],
        updateStrategy: [3, described('An update strategy to replace existing daemon pods with new pods.', updateStrategySchema)],
        minReadySeconds: [4, int32('The minimum number of seconds for which a new daemon pod should be ready without any of its containers crashing to be considered available. Defaults to 0.')],
        revisionHistoryLimit: [6, ptr(int32('The number of old history (ControllerRevisions) to retain to allow rollback. Defaults to 10.'))],
      }),
    ),
  ],
  status: [
    3,
    described(
      'The current status of this daemon set; may be out of date by some window of time.',
      obj(`${APPS}.DaemonSetStatus`, {
        currentNumberScheduled: [1, ptr(int32('The number of nodes that are running at least one daemon pod and are supposed to run the daemon pod.'))],
        numberMisscheduled: [2, ptr(int32('The number of nodes that are running the daemon pod but are not supposed to.'))],
        desiredNumberScheduled: [3, ptr(int32('The total number of nodes that should be running the daemon pod.'))],
        numberReady: [4, ptr(int32('The number of nodes that should be running the daemon pod and have one or more of it running with a Ready condition.'))],
        observedGeneration: [5, int64('The most recent generation observed by the daemon set controller.')],
        updatedNumberScheduled: [6, int32('The total number of nodes that are running the updated daemon pod.')],
        numberAvailable: [7, int32('The number of nodes that should be running the daemon pod and have one or more of it running and available (ready for at least minReadySeconds).')],
        numberUnavailable: [8, int32('The number of nodes that should be running the daemon pod and have none of it running and available.')],
        collisionCount: [9, ptr(int32('Count of hash collisions for the DaemonSet, used to make the name of the newest ControllerRevision unique.'))],
        conditions: [10, mapList(conditionSchema, ['type'], "The latest available observations of the DaemonSet's current state.")],
      }),
    ),
  ],
});

/** Upstream SetDefaults_DaemonSet (RollingUpdate with maxUnavailable 1 and maxSurge 0, revisionHistoryLimit 10) and PrepareForCreate's template generation. */
function defaults(o: KObject): void {
  const spec = ensureRec(o, 'spec');
  const strategy = ensureRec(spec, 'updateStrategy');
  setDefault(strategy, 'type', 'RollingUpdate');
  if (strategy.type === 'RollingUpdate') {
    const rolling = ensureRec(strategy, 'rollingUpdate');
    setDefault(rolling, 'maxUnavailable', 1, false);
    setDefault(rolling, 'maxSurge', 0, false);
  }
  setDefault(spec, 'revisionHistoryLimit', 10, false);
  defaultPodTemplate(spec.template);
  const annotations = (o.metadata.annotations ??= {});
  if (!/^[0-9]+$/.test(annotations[TEMPLATE_GENERATION_ANNOTATION] ?? '') || annotations[TEMPLATE_GENERATION_ANNOTATION] === '0') annotations[TEMPLATE_GENERATION_ANNOTATION] = '1';
}

/** Upstream ValidateDaemonSetUpdateStrategy and ValidateRollingUpdateDaemonSet. */
function validateStrategy(strategy: Record<string, unknown>): Cause[] {
  const path = 'spec.updateStrategy';
  switch (strategy.type) {
    case 'OnDelete':
      return [];
    case 'RollingUpdate': {
      const rolling = rec(strategy.rollingUpdate);
      if (!rolling) return [required(`${path}.rollingUpdate`)];
      const out = [...intOrPercentCauses(`${path}.rollingUpdate.maxUnavailable`, rolling.maxUnavailable), ...intOrPercentCauses(`${path}.rollingUpdate.maxSurge`, rolling.maxSurge)];
      const hasUnavailable = intOrPercentValue(rolling.maxUnavailable) !== 0;
      const hasSurge = intOrPercentValue(rolling.maxSurge) !== 0;
      if (hasUnavailable && hasSurge) out.push(invalid(`${path}.rollingUpdate.maxSurge`, rolling.maxSurge, 'may not be set when maxUnavailable is non-zero'));
      if (!hasUnavailable && !hasSurge) out.push(required(`${path}.rollingUpdate.maxUnavailable`, 'cannot be 0 when maxSurge is 0'));
      return out;
    }
    default:
      return [notSupported(path, strategy, DAEMONSET_STRATEGIES)];
  }
}

function validateSpec(o: KObject): Cause[] {
  const spec = rec(o.spec) ?? {};
  const out: Cause[] = [];
  const selector = spec.selector;
  if (selector === undefined || selector === null) out.push(required('spec.selector'));
  else {
    out.push(...validateLabelSelector(selector, 'spec.selector'));
    if (labelSelectorRequirements(selector)?.length === 0) out.push(invalid('spec.selector', selector, 'empty selector is invalid for daemonset'));
  }
  out.push(...validatePodTemplate(spec.template, 'spec.template', { selector, restartPolicies: ['Always'], kind: 'DaemonSet' }));
  out.push(...nonNegative('spec.minReadySeconds', spec.minReadySeconds));
  out.push(...nonNegative('spec.revisionHistoryLimit', spec.revisionHistoryLimit));
  out.push(...validateStrategy(rec(spec.updateStrategy) ?? {}));
  return out;
}

/** Upstream validateDaemonSetStatus and the collisionCount rule of ValidateDaemonSetStatusUpdate. */
function validateStatus(o: KObject, old?: KObject): Cause[] {
  const status = rec(o.status) ?? {};
  const out: Cause[] = [];
  for (const f of ['currentNumberScheduled', 'numberMisscheduled', 'desiredNumberScheduled', 'numberReady', 'observedGeneration', 'updatedNumberScheduled', 'numberAvailable', 'numberUnavailable', 'collisionCount']) {
    out.push(...nonNegative(`status.${f}`, status[f]));
  }
  const before = num(rec(old?.status)?.collisionCount);
  const now = num(status.collisionCount);
  if (before !== undefined && (now === undefined || now < before)) out.push(invalid('status.collisionCount', now ?? 0, 'cannot be decremented'));
  return out;
}

function validate(o: KObject, old?: KObject, subresource = ''): Cause[] {
  return subresource === 'status' ? validateStatus(o, old) : validateSpec(o);
}

/**
 * The selector may not change (apps/v1; "field is immutable"); the template generation follows the
 * template as upstream's PrepareForUpdate keeps it: one more when the template changed, else the old value.
 */
function validateUpdate(o: KObject, old: KObject): Cause[] {
  const oldGeneration = Number(old.metadata.annotations?.[TEMPLATE_GENERATION_ANNOTATION] ?? '1') || 1;
  const changed = !decodedEqual(get(o, 'spec', 'template'), get(old, 'spec', 'template'));
  (o.metadata.annotations ??= {})[TEMPLATE_GENERATION_ANNOTATION] = String(changed ? oldGeneration + 1 : oldGeneration);
  const selector = get(o, 'spec', 'selector');
  return decodedEqual(selector, get(old, 'spec', 'selector')) ? [] : [immutable('spec.selector', selector)];
}

export function daemonSetColumns(now: Now): TableColumn[] {
  const count = (f: string) => (o: KObject) => num(rec(o.status)?.[f]) ?? 0;
  return [
    column('Desired', 'integer', 'The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod).', count('desiredNumberScheduled')),
    column('Current', 'integer', 'The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod.', count('currentNumberScheduled')),
    column('Ready', 'integer', 'numberReady is the number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition.', count('numberReady')),
    column('Up-to-date', 'integer', 'The total number of nodes that are running updated daemon pod', count('updatedNumberScheduled')),
    column('Available', 'integer', 'The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)', count('numberAvailable')),
    column('Node Selector', 'string', 'NodeSelector is a selector which must be true for the pod to fit on a node.', (o) => formatLabels(get(o, 'spec', 'template', 'spec', 'nodeSelector'))),
    ageColumn(now),
    ...containerColumns(),
    column('Selector', 'string', 'A label query over pods that are managed by the daemon set.', (o) => formatLabelSelector(get(o, 'spec', 'selector')), 1),
  ];
}

export function makeDaemonSetType(now: Now = Date.now): ResourceType {
  return {
    group: 'apps',
    version: 'v1',
    resource: 'daemonsets',
    singular: 'daemonset',
    kind: 'DaemonSet',
    listKind: 'DaemonSetList',
    namespaced: true,
    shortNames: ['ds'],
    categories: ['all'],
    schema: daemonSetSchema,
    hasStatus: true,
    specFields: ['spec'],
    tableColumns: daemonSetColumns(now),
    defaults,
    validate,
    validateUpdate,
  };
}

export const daemonSetType: ResourceType = makeDaemonSetType();
