import { labelSelectorSchema, withMeta } from '../common-schemas';
import { atomicList, described, int32, int64, intOrStr, mapList, obj, ptr, str, strEnum, time } from '../schema-builders';
import { persistentVolumeClaimSchema } from './persistentvolumeclaims';
import { podTemplateSpecSchema } from './pod-template';

/**
 * apps/v1 StatefulSet: upstream's messages and field numbers (k8s.io/api/apps/v1/generated.proto).
 * podManagementPolicy and updateStrategy.type carry no enum here so that validation answers with
 * upstream's own messages ("must be 'OrderedReady' or 'Parallel'").
 */

const APPS = 'k8s.io.api.apps.v1';

export const POD_MANAGEMENT_POLICIES: readonly string[] = ['OrderedReady', 'Parallel'];
export const STATEFULSET_STRATEGIES: readonly string[] = ['RollingUpdate', 'OnDelete'];
export const CLAIM_RETENTION_POLICIES: readonly string[] = ['Retain', 'Delete'];

const updateStrategySchema = obj(`${APPS}.StatefulSetUpdateStrategy`, {
  type: [1, str('Type indicates the type of the StatefulSetUpdateStrategy: RollingUpdate (the default) or OnDelete.')],
  rollingUpdate: [
    2,
    described(
      'RollingUpdate is used to communicate parameters when Type is RollingUpdate.',
      obj(`${APPS}.RollingUpdateStatefulSetStrategy`, {
        partition: [1, ptr(int32('The ordinal at which the StatefulSet is partitioned for updates: pods from ordinal replicas-1 down to partition are updated, lower ones keep their revision. Default 0.'))],
        maxUnavailable: [2, ptr(intOrStr('The maximum number of pods that can be unavailable during the update (alpha MaxUnavailableStatefulSet; not honoured: pods are updated one at a time).'))],
      }),
    ),
  ],
});

const retentionPolicySchema = obj(`${APPS}.StatefulSetPersistentVolumeClaimRetentionPolicy`, {
  whenDeleted: [1, strEnum(CLAIM_RETENTION_POLICIES, 'What happens to claims made from volumeClaimTemplates when the StatefulSet is deleted: Retain (the default) keeps them, Delete deletes them.')],
  whenScaled: [2, strEnum(CLAIM_RETENTION_POLICIES, 'What happens to claims made from volumeClaimTemplates when the StatefulSet is scaled down: Retain (the default) keeps them, Delete deletes the claims of the pods scaled away.')],
});

const conditionSchema = obj(
  `${APPS}.StatefulSetCondition`,
  {
    type: [1, ptr(str('Type of statefulset condition.'))],
    status: [2, ptr(str('Status of the condition, one of True, False, Unknown.'))],
    lastTransitionTime: [3, time('Last time the condition transitioned from one status to another.')],
    reason: [4, str("The reason for the condition's last transition.")],
    message: [5, str('A human readable message indicating details about the transition.')],
  },
  { required: ['type', 'status'] },
);

export const statefulSetSpecSchema = obj(`${APPS}.StatefulSetSpec`, {
  replicas: [1, ptr(int32('The desired number of replicas of the given template; each has its own identity (ordinal). Defaults to 1.'))],
  selector: [2, described("A label query over pods that should match the replica count. It must match the pod template's labels.", labelSelectorSchema)],
  template: [3, described('The pod each ordinal is stamped from, named <statefulset name>-<ordinal>; restartPolicy must be Always.', podTemplateSpecSchema)],
  volumeClaimTemplates: [
    4,
    atomicList(
      persistentVolumeClaimSchema,
      'Claims that pods are allowed to reference: each pod gets its own claim <template name>-<statefulset name>-<ordinal>, mounted under the template name (it replaces a template volume of that name).',
    ),
  ],
  serviceName: [5, str('The name of the (headless) service that governs this StatefulSet; pods get the subdomain <serviceName> and the hostname <pod name>.')],
  podManagementPolicy: [6, str('How pods are created and deleted: OrderedReady (the default) one at a time in ordinal order, each waiting for the previous to be Ready, deleting in reverse; Parallel all at once.')],
  updateStrategy: [7, described('The strategy used to update pods when a revision is made to the template.', updateStrategySchema)],
  revisionHistoryLimit: [8, ptr(int32("The maximum number of revisions kept in the StatefulSet's revision history (ControllerRevisions not used by a live pod). Defaults to 10."))],
  minReadySeconds: [9, int32('Minimum number of seconds for which a newly created pod should be ready without any of its containers crashing for it to be considered available. Defaults to 0.')],
  persistentVolumeClaimRetentionPolicy: [
    10,
    described('The lifecycle of claims made from volumeClaimTemplates; by default claims are retained until deleted by hand.', retentionPolicySchema),
  ],
  ordinals: [
    11,
    described(
      'The numbering of replica ordinals; by default the first replica is 0.',
      obj(`${APPS}.StatefulSetOrdinals`, {
        start: [1, ptr(int32('The number of the first replica: ordinals are [start, start + replicas). Defaults to 0.'))],
      }),
    ),
  ],
});

export const statefulSetStatusSchema = obj(`${APPS}.StatefulSetStatus`, {
  observedGeneration: [1, int64("The most recent generation observed for this StatefulSet (its metadata.generation when the controller last acted on it).")],
  replicas: [2, ptr(int32('The number of pods created by the StatefulSet controller.'))],
  readyReplicas: [3, int32('The number of pods created for this StatefulSet with a Ready condition.')],
  currentReplicas: [4, int32('The number of pods created by the StatefulSet controller from the revision named by currentRevision.')],
  updatedReplicas: [5, int32('The number of pods created by the StatefulSet controller from the revision named by updateRevision.')],
  currentRevision: [6, str('The revision (ControllerRevision name) used to generate pods in the sequence [0, currentReplicas).')],
  updateRevision: [7, str('The revision (ControllerRevision name) used to generate pods in the sequence [replicas - updatedReplicas, replicas).')],
  collisionCount: [9, ptr(int32('The count of hash collisions for the StatefulSet, used to make the name of the newest ControllerRevision unique.'))],
  conditions: [10, mapList(conditionSchema, ['type'], "The latest available observations of the statefulset's current state.")],
  availableReplicas: [11, ptr(int32('The number of available pods (ready for at least minReadySeconds) targeted by this statefulset.'))],
});

export const statefulSetSchema = withMeta(`${APPS}.StatefulSet`, {
  spec: [2, described('The desired identities of pods in this set.', statefulSetSpecSchema)],
  status: [3, described('The current status of pods in this StatefulSet; may be out of date by some window of time.', statefulSetStatusSchema)],
});
