import type { ObjectSchema } from '../../../../apiserver/api/schema';
import { makeBuiltinTypes } from '../../../../apiserver/registry/builtin';
import { deleteOptionsSchema, statusSchema } from '../../../../apiserver/registry/meta-schemas';
import type { ResourceType } from '../../../../apiserver/registry/resource-type';
import { authenticationTypes } from '../../../../apiserver/registry/types/authentication-types';
import { scaleSchema } from '../../../../apiserver/registry/types/autoscaling-scale';
import { evictionSchema } from '../../../../apiserver/registry/types/poddisruptionbudgets';
import { tokenRequestSchema } from '../../../../apiserver/registry/types/serviceaccount-token-request';
import * as admission from './admissionregistration-fixtures';
import * as apps from './apps-fixtures';
import * as batch from './batch-fixtures';
import * as core from './core-fixtures';
import * as groups from './group-fixtures';
import * as autoscaling from './autoscaling-fixtures';
import { podFixture } from './pod-fixture';

/** One representative object per served kind (and per meta/v1 body), with the schema that encodes it. */
export interface Fixture {
  /** What it is, for messages: group/version kind. */
  name: string;
  schema: ObjectSchema;
  object: Record<string, unknown>;
}

/** Every kind the server serves: the built-in types and the authentication virtual kinds. */
export function servedTypes(): ResourceType[] {
  return [...makeBuiltinTypes(), ...authenticationTypes];
}

const byKind: Record<string, Record<string, unknown>> = {
  'v1/Namespace': core.namespaceFixture,
  'v1/Node': core.nodeFixture,
  'v1/Pod': podFixture,
  'v1/ConfigMap': core.configMapFixture,
  'v1/Secret': core.secretFixture,
  'v1/ServiceAccount': core.serviceAccountFixture,
  'v1/Service': core.serviceFixture,
  'v1/Endpoints': core.endpointsFixture,
  'v1/Event': core.coreEventFixture,
  'v1/PersistentVolume': core.persistentVolumeFixture,
  'v1/PersistentVolumeClaim': core.persistentVolumeClaimFixture,
  'v1/ResourceQuota': core.resourceQuotaFixture,
  'v1/LimitRange': core.limitRangeFixture,
  'coordination.svc.io/v1/Lease': groups.leaseFixture,
  'events.svc.io/v1/Event': groups.eventV1Fixture,
  'policy/v1/PodDisruptionBudget': groups.pdbFixture,
  'apps/v1/Deployment': apps.deploymentFixture,
  'apps/v1/ReplicaSet': apps.replicaSetFixture,
  'apps/v1/StatefulSet': apps.statefulSetFixture,
  'apps/v1/DaemonSet': apps.daemonSetFixture,
  'apps/v1/ControllerRevision': apps.controllerRevisionFixture,
  'batch/v1/Job': batch.jobFixture,
  'batch/v1/CronJob': batch.cronJobFixture,
  'certificates.svc.io/v1/CertificateSigningRequest': groups.csrFixture,
  'rbac.authorization.svc.io/v1/Role': groups.roleFixture,
  'rbac.authorization.svc.io/v1/ClusterRole': groups.clusterRoleFixture,
  'rbac.authorization.svc.io/v1/RoleBinding': groups.roleBindingFixture,
  'rbac.authorization.svc.io/v1/ClusterRoleBinding': groups.clusterRoleBindingFixture,
  'authorization.svc.io/v1/SubjectAccessReview': groups.subjectAccessReviewFixture,
  'authorization.svc.io/v1/LocalSubjectAccessReview': groups.localSubjectAccessReviewFixture,
  'authorization.svc.io/v1/SelfSubjectAccessReview': groups.selfSubjectAccessReviewFixture,
  'authorization.svc.io/v1/SelfSubjectRulesReview': groups.selfSubjectRulesReviewFixture,
  'authorization.svc.io/v1beta1/SubjectAccessReview': { ...groups.subjectAccessReviewFixture, apiVersion: 'authorization.svc.io/v1beta1', spec: { user: 'alice', group: ['dev'] } },
  'authentication.svc.io/v1/TokenReview': groups.tokenReviewFixture,
  'authentication.svc.io/v1beta1/TokenReview': { ...groups.tokenReviewFixture, apiVersion: 'authentication.svc.io/v1beta1' },
  'authentication.svc.io/v1/SelfSubjectReview': groups.selfSubjectReviewFixture,
  'authentication.svc.io/v1beta1/SelfSubjectReview': { ...groups.selfSubjectReviewFixture, apiVersion: 'authentication.svc.io/v1beta1' },
  'authentication.svc.io/v1alpha1/SelfSubjectReview': { ...groups.selfSubjectReviewFixture, apiVersion: 'authentication.svc.io/v1alpha1' },
  'scheduling.svc.io/v1/PriorityClass': groups.priorityClassFixture,
  'node.svc.io/v1/RuntimeClass': groups.runtimeClassFixture,
  'storage.svc.io/v1/StorageClass': groups.storageClassFixture,
  'storage.svc.io/v1/CSIDriver': groups.csiDriverFixture,
  'storage.svc.io/v1/CSINode': groups.csiNodeFixture,
  'storage.svc.io/v1/VolumeAttachment': groups.volumeAttachmentFixture,
  'autoscaling/v2/HorizontalPodAutoscaler': autoscaling.hpaV2Fixture,
  'autoscaling/v1/HorizontalPodAutoscaler': autoscaling.hpaV1Fixture,
  'metrics.svc.io/v1beta1/NodeMetrics': autoscaling.nodeMetricsFixture,
  'metrics.svc.io/v1beta1/PodMetrics': autoscaling.podMetricsFixture,
  'admissionregistration.svc.io/v1/MutatingWebhookConfiguration': admission.mutatingWebhookConfigurationFixture,
  'admissionregistration.svc.io/v1/ValidatingWebhookConfiguration': admission.validatingWebhookConfigurationFixture,
  'admissionregistration.svc.io/v1/ValidatingAdmissionPolicy': admission.validatingAdmissionPolicyFixture,
  'admissionregistration.svc.io/v1/ValidatingAdmissionPolicyBinding': admission.validatingAdmissionPolicyBindingFixture,
  'admissionregistration.svc.io/v1beta1/MutatingAdmissionPolicy': admission.mutatingAdmissionPolicyFixture,
  'admissionregistration.svc.io/v1beta1/MutatingAdmissionPolicyBinding': admission.mutatingAdmissionPolicyBindingFixture,
  'admissionregistration.svc.io/v1alpha1/MutatingAdmissionPolicy': { ...admission.mutatingAdmissionPolicyFixture, apiVersion: 'admissionregistration.svc.io/v1alpha1' },
  'admissionregistration.svc.io/v1alpha1/MutatingAdmissionPolicyBinding': { ...admission.mutatingAdmissionPolicyBindingFixture, apiVersion: 'admissionregistration.svc.io/v1alpha1' },
  'apiextensions.svc.io/v1/CustomResourceDefinition': groups.crdFixture,
  'apiregistration.svc.io/v1/APIService': groups.apiServiceFixture,
  'discovery.svc.io/v1/EndpointSlice': groups.endpointSliceFixture,
  'networking.svc.io/v1/NetworkPolicy': groups.networkPolicyFixture,
  'networking.svc.io/v1/IngressClass': groups.ingressClassFixture,
  'networking.svc.io/v1/Ingress': groups.ingressFixture,
};

/**
 * Kinds served without a protobuf form: the CustomResourceDefinition (its openAPIV3Schema is
 * free-form JSONSchemaProps here; upstream's apiextensions protobuf is not implemented, so the
 * server answers 406/415 for protobuf on it, as for custom resources). JSON, YAML and CBOR only.
 */
export const JSON_ONLY = new Set(['apiextensions.svc.io/v1/CustomResourceDefinition']);

export function gvk(t: ResourceType): string {
  return `${t.group ? `${t.group}/` : ''}${t.version}/${t.kind}`;
}

/** The served kinds that have no fixture here (a new kind must add one). */
export function missingFixtures(): string[] {
  return servedTypes()
    .map(gvk)
    .filter((k) => byKind[k] === undefined);
}

/** Every fixture: one per served kind, then the bodies that are not kinds of a resource. */
/** Every fixture; with protobuf (the default), only those of kinds that have a protobuf form. */
export function fixtures(o: { protobuf?: boolean } = {}): Fixture[] {
  const out: Fixture[] = servedTypes()
    .filter((t) => byKind[gvk(t)] !== undefined && !(o.protobuf !== false && JSON_ONLY.has(gvk(t))))
    .map((t) => ({ name: gvk(t), schema: t.schema, object: byKind[gvk(t)] }));
  out.push(
    { name: 'authentication.svc.io/v1/TokenRequest', schema: tokenRequestSchema, object: groups.tokenRequestFixture },
    { name: 'policy/v1/Eviction', schema: evictionSchema, object: groups.evictionFixture },
    { name: 'autoscaling/v1/Scale', schema: scaleSchema, object: apps.scaleFixture },
    { name: 'v1/Status', schema: statusSchema, object: groups.statusFixture },
    { name: 'meta.k8s.io/v1/DeleteOptions', schema: deleteOptionsSchema, object: groups.deleteOptionsFixture },
  );
  return out;
}
