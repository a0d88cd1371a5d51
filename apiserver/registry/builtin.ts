import { makeApiServiceType } from './types/apiservices';
import type { ResourceType } from './resource-type';
import type { Now } from './table';
import { makeCsrType } from './types/certificatesigningrequests';
import { makeConfigMapType } from './types/configmaps';
import { makeControllerRevisionType } from './types/controllerrevisions';
import { makeDaemonSetType } from './types/daemonsets';
import { makeCronJobType } from './types/cronjobs';
import { makeEndpointsType } from './types/endpoints';
import { makeCoreEventType } from './types/events';
import { makeEventV1Type } from './types/events-v1';
import { makeJobType } from './types/jobs';
import { makeLeaseType } from './types/leases';
import { makeLimitRangeType } from './types/limitranges';
import { makeNamespaceType } from './types/namespaces';
import { makeNodeType } from './types/nodes';
import { makePersistentVolumeClaimType } from './types/persistentvolumeclaims';
import { makePersistentVolumeType } from './types/persistentvolumes';
import { makeDeploymentType } from './types/deployments';
import { makePodDisruptionBudgetType } from './types/poddisruptionbudgets';
import { makePodType } from './types/pods';
import { makePriorityClassType } from './types/priorityclasses';
import { makeRuntimeClassType } from './types/runtimeclasses';
import { makeResourceQuotaType } from './types/resourcequotas';
import { makeSecretType } from './types/secrets';
import { makeServiceAccountType } from './types/serviceaccounts';
import { makeReplicaSetType } from './types/replicasets';
import { makeServiceType } from './types/services';
import { makeStatefulSetType } from './types/statefulsets';
import { makeAuthorizationReviewTypes } from './types/authorization-reviews';
import { makeClusterRoleBindingType, makeRoleBindingType } from './types/rbac-bindings';
import { makeClusterRoleType, makeRoleType } from './types/rbac-roles';
import { makeStorageClassType } from './types/storageclasses';
import { makeCsiDriverType } from './types/csidrivers';
import { makeCsiNodeType } from './types/csinodes';
import { makeVolumeAttachmentType } from './types/volumeattachments';
import { makeMetricsTypes } from './types/metrics';
import { makeHpaTypes } from './types/horizontalpodautoscalers';
import { makeMutatingWebhookConfigurationType, makeValidatingWebhookConfigurationType } from './types/webhook-configurations';
import { makeValidatingAdmissionPolicyBindingType, makeValidatingAdmissionPolicyType } from './types/validating-admission-policies';
import { makeMutatingAdmissionPolicyTypes } from './types/mutating-admission-policies';
import { makeCrdType } from './types/customresourcedefinitions';
import { makeEndpointSliceType } from './types/endpointslices';
import { makeNetworkPolicyType } from './types/networkpolicies';
import { makeIngressClassType } from './types/ingressclasses';
import { makeIngressType } from './types/ingresses';

export { ResourceRegistry, type ApiGroupInfo } from './resource-registry';
export { nameRuleFor } from './name-rules';

/**
 * The built-in resource types, core group first. now is the clock the Table Age columns read;
 * pass the server's injected clock, or use builtinTypes (Date.now).
 */
export function makeBuiltinTypes(now: Now = Date.now): ResourceType[] {
  return [
    makeNamespaceType(now),
    makeNodeType(now),
    makePodType(now),
    makeConfigMapType(now),
    makeSecretType(now),
    makeServiceAccountType(now),
    makeServiceType(now),
    makeEndpointsType(now),
    makeCoreEventType(now),
    makePersistentVolumeType(now),
    makePersistentVolumeClaimType(now),
    makeResourceQuotaType(now),
    makeLimitRangeType(),
    makeLeaseType(now),
    makeEventV1Type(now),
    makePodDisruptionBudgetType(now),
    makeDeploymentType(now),
    makeReplicaSetType(now),
    makeStatefulSetType(now),
    makeDaemonSetType(now),
    makeControllerRevisionType(now),
    makeJobType(now),
    makeCronJobType(now),
    makeCsrType(now),
    makeRoleType(now),
    makeClusterRoleType(now),
    makeRoleBindingType(now),
    makeClusterRoleBindingType(now),
    makeStorageClassType(now),
    makeCsiDriverType(now),
    makeCsiNodeType(now),
    makeVolumeAttachmentType(now),
    ...makeAuthorizationReviewTypes(),
    makePriorityClassType(now),
    makeRuntimeClassType(now),
    ...makeMetricsTypes(now),
    ...makeHpaTypes(now),
    makeMutatingWebhookConfigurationType(now),
    makeValidatingWebhookConfigurationType(now),
    makeValidatingAdmissionPolicyType(now),
    makeValidatingAdmissionPolicyBindingType(now),
    ...makeMutatingAdmissionPolicyTypes(now),
    makeCrdType(),
    makeApiServiceType(now),
    makeEndpointSliceType(now),
    makeNetworkPolicyType(now),
    makeIngressClassType(now),
    makeIngressType(now),
  ];
}

export const builtinTypes: readonly ResourceType[] = makeBuiltinTypes();
