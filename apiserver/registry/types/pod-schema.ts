import type { ObjectSchema } from '../../api/schema';
import { localObjectReferenceSchema, withMeta } from '../common-schemas';
import {
  atomicList,
  bool,
  int32,
  int64,
  mapList,
  obj,
  ptr,
  quantity,
  quantityMap,
  setList,
  str,
  strEnum,
  strMap,
  time,
} from '../schema-builders';
import { affinitySchema, tolerationSchema, topologySpreadConstraintSchema } from './affinity-schema';
import { containerSchema, ephemeralContainerSchema, resourceRequirementsSchema } from './container-schema';
import { podSecurityContextSchema } from './security-context-schema';
import { volumeSchema } from './volume-schema';

/**
 * core/v1 Pod: spec and status with upstream's message names and field numbers. Lists carry
 * upstream's patchMergeKey / listMapKeys. Containers, volumes, security contexts and scheduling
 * constraints have files of their own.
 */

export { PULL_POLICIES, TERMINATION_MESSAGE_POLICIES } from './container-schema';

const V1 = 'k8s.io.api.core.v1';

export const RESTART_POLICIES: readonly string[] = ['Always', 'OnFailure', 'Never'];
export const DNS_POLICIES: readonly string[] = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
export const POD_PHASES: readonly string[] = ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'];

/** Every volume source a v1 Volume may carry, in the order upstream's validateVolumeSource checks them; exactly one is set. */
export const VOLUME_SOURCES: readonly string[] = [
  'emptyDir', 'hostPath', 'gitRepo', 'gcePersistentDisk', 'awsElasticBlockStore', 'secret', 'nfs', 'iscsi',
  'glusterfs', 'flexVolume', 'persistentVolumeClaim', 'rbd', 'cinder', 'cephfs', 'quobyte', 'downwardAPI', 'fc',
  'flocker', 'azureFile', 'vsphereVolume', 'photonPersistentDisk', 'portworxVolume', 'azureDisk', 'storageos',
  'configMap', 'scaleIO', 'projected', 'csi', 'ephemeral', 'image',
];

const containerStateSchema = obj(`${V1}.ContainerState`, {
  waiting: [1, obj(`${V1}.ContainerStateWaiting`, { reason: [1, str()], message: [2, str()] })],
  running: [2, obj(`${V1}.ContainerStateRunning`, { startedAt: [1, time()] })],
  terminated: [
    3,
    obj(`${V1}.ContainerStateTerminated`, {
      exitCode: [1, ptr(int32())],
      signal: [2, int32()],
      reason: [3, str()],
      message: [4, str()],
      startedAt: [5, time()],
      finishedAt: [6, time()],
      containerID: [7, str()],
    }),
  ],
});

const volumeMountStatusSchema = obj(
  `${V1}.VolumeMountStatus`,
  {
    name: [1, ptr(str())],
    mountPath: [2, ptr(str())],
    readOnly: [3, bool()],
    recursiveReadOnly: [4, ptr(str())],
    volumeStatus: [5, obj(`${V1}.VolumeStatus`, { image: [1, obj(`${V1}.ImageVolumeStatus`, { imageRef: [1, str()] })] })],
  },
  { required: ['mountPath'] },
);

const resourceStatusSchema = obj(
  `${V1}.ResourceStatus`,
  {
    name: [1, ptr(str())],
    resources: [
      2,
      mapList(obj(`${V1}.ResourceHealth`, { resourceID: [1, ptr(str())], health: [2, str()], message: [6, ptr(str())] }, { required: ['resourceID'] }), ['resourceID']),
    ],
  },
  { required: ['name'] },
);

const containerStatusSchema = obj(
  `${V1}.ContainerStatus`,
  {
    name: [1, ptr(str())],
    state: [2, containerStateSchema],
    lastState: [3, containerStateSchema],
    ready: [4, ptr(bool())],
    restartCount: [5, ptr(int32())],
    image: [6, ptr(str())],
    imageID: [7, ptr(str())],
    containerID: [8, str()],
    started: [9, ptr(bool())],
    allocatedResources: [10, quantityMap()],
    resources: [11, resourceRequirementsSchema],
    volumeMounts: [12, mapList(volumeMountStatusSchema, ['mountPath'])],
    user: [
      13,
      obj(`${V1}.ContainerUser`, {
        linux: [1, obj(`${V1}.LinuxContainerUser`, { uid: [1, ptr(int64())], gid: [2, ptr(int64())], supplementalGroups: [3, atomicList(int64())] })],
      }),
    ],
    allocatedResourcesStatus: [14, mapList(resourceStatusSchema, ['name'])],
    stopSignal: [15, ptr(str())],
  },
  // Upstream's OpenAPI lists image and imageID as required, but typed decoding never enforced it;
  // node agents may report statuses before an image is resolved.
  { required: ['name'] },
);

const podConditionSchema = obj(
  `${V1}.PodCondition`,
  {
    type: [1, ptr(str())],
    observedGeneration: [7, int64()],
    status: [2, ptr(str())],
    lastProbeTime: [3, time()],
    lastTransitionTime: [4, time()],
    reason: [5, str()],
    message: [6, str()],
  },
  { required: ['type'] },
);

const volumeHealthConditionSchema = obj(`${V1}.VolumeHealthCondition`, { status: [1, ptr(str())], reason: [2, ptr(str())], message: [3, str()] }, { required: ['status', 'reason'] });

export const podSpecSchema: ObjectSchema = obj(
  `${V1}.PodSpec`,
  {
    volumes: [1, mapList(volumeSchema, ['name'])],
    initContainers: [20, mapList(containerSchema, ['name'])],
    containers: [2, mapList(containerSchema, ['name'])],
    ephemeralContainers: [34, mapList(ephemeralContainerSchema, ['name'])],
    restartPolicy: [3, strEnum(RESTART_POLICIES)],
    terminationGracePeriodSeconds: [4, ptr(int64())],
    activeDeadlineSeconds: [5, ptr(int64())],
    dnsPolicy: [6, strEnum(DNS_POLICIES)],
    nodeSelector: [7, strMap()],
    serviceAccountName: [8, str()],
    serviceAccount: [9, str('Deprecated alias of serviceAccountName.')],
    automountServiceAccountToken: [21, ptr(bool())],
    nodeName: [10, str()],
    hostNetwork: [11, bool()],
    hostPID: [12, bool()],
    hostIPC: [13, bool()],
    shareProcessNamespace: [27, ptr(bool())],
    securityContext: [14, podSecurityContextSchema],
    imagePullSecrets: [15, mapList(localObjectReferenceSchema, ['name'])],
    hostname: [16, str()],
    subdomain: [17, str()],
    affinity: [18, affinitySchema],
    schedulerName: [19, str()],
    tolerations: [22, atomicList(tolerationSchema)],
    hostAliases: [23, mapList(obj(`${V1}.HostAlias`, { ip: [1, ptr(str())], hostnames: [2, atomicList(str())] }, { required: ['ip'] }), ['ip'])],
    priorityClassName: [24, str()],
    priority: [25, ptr(int32())],
    dnsConfig: [
      26,
      obj(`${V1}.PodDNSConfig`, {
        nameservers: [1, atomicList(str())],
        searches: [2, atomicList(str())],
        options: [3, atomicList(obj(`${V1}.PodDNSConfigOption`, { name: [1, str()], value: [2, ptr(str())] }))],
      }),
    ],
    readinessGates: [28, atomicList(obj(`${V1}.PodReadinessGate`, { conditionType: [1, ptr(str())] }, { required: ['conditionType'] }))],
    runtimeClassName: [29, ptr(str())],
    enableServiceLinks: [30, ptr(bool())],
    preemptionPolicy: [31, ptr(strEnum(['PreemptLowerPriority', 'Never']))],
    overhead: [32, quantityMap()],
    topologySpreadConstraints: [33, mapList(topologySpreadConstraintSchema, ['topologyKey', 'whenUnsatisfiable'])],
    setHostnameAsFQDN: [35, ptr(bool())],
    os: [36, obj(`${V1}.PodOS`, { name: [1, ptr(str())] }, { required: ['name'] })],
    hostUsers: [37, ptr(bool())],
    schedulingGates: [38, mapList(obj(`${V1}.PodSchedulingGate`, { name: [1, ptr(str())] }, { required: ['name'] }), ['name'])],
    resourceClaims: [
      39,
      mapList(
        obj(`${V1}.PodResourceClaim`, { name: [1, ptr(str())], resourceClaimName: [3, ptr(str())], resourceClaimTemplateName: [4, ptr(str())] }, { required: ['name'] }),
        ['name'],
      ),
    ],
    resources: [40, resourceRequirementsSchema],
    hostnameOverride: [41, ptr(str())],
    schedulingGroup: [43, obj(`${V1}.PodSchedulingGroup`, { podGroupName: [1, ptr(str())] })],
    evictionResponders: [44, mapList(obj(`${V1}.EvictionResponder`, { name: [1, ptr(str())], priority: [2, ptr(int32())] }, { required: ['name'] }), ['name'])],
  },
  { required: ['containers'] },
);

const ipSchema = (message: string) => obj(message, { ip: [1, ptr(str())] }, { required: ['ip'] });

export const podStatusSchema: ObjectSchema = obj(`${V1}.PodStatus`, {
  observedGeneration: [17, int64()],
  phase: [1, strEnum(POD_PHASES)],
  conditions: [2, mapList(podConditionSchema, ['type'])],
  message: [3, str()],
  reason: [4, str()],
  nominatedNodeName: [11, str()],
  hostIP: [5, str()],
  // Upstream: patchMergeKey ip but listType atomic; strategic merge is what our one schema encodes.
  hostIPs: [16, mapList(ipSchema(`${V1}.HostIP`), ['ip'])],
  podIP: [6, str()],
  podIPs: [12, mapList(ipSchema(`${V1}.PodIP`), ['ip'])],
  startTime: [7, time()],
  initContainerStatuses: [10, atomicList(containerStatusSchema)],
  containerStatuses: [8, atomicList(containerStatusSchema)],
  qosClass: [9, strEnum(['Guaranteed', 'Burstable', 'BestEffort'])],
  ephemeralContainerStatuses: [13, atomicList(containerStatusSchema)],
  resize: [14, str()],
  resourceClaimStatuses: [
    15,
    mapList(obj(`${V1}.PodResourceClaimStatus`, { name: [1, ptr(str())], resourceClaimName: [2, ptr(str())] }, { required: ['name'] }), ['name']),
  ],
  extendedResourceClaimStatus: [
    18,
    obj(`${V1}.PodExtendedResourceClaimStatus`, {
      requestMappings: [
        1,
        atomicList(obj(`${V1}.ContainerExtendedResourceRequest`, { containerName: [1, ptr(str())], resourceName: [2, ptr(str())], requestName: [3, ptr(str())] })),
      ],
      resourceClaimName: [2, ptr(str())],
    }),
  ],
  allocatedResources: [19, quantityMap()],
  resources: [20, resourceRequirementsSchema],
  nodeAllocatableResourceClaimStatuses: [
    21,
    mapList(
      obj(
        `${V1}.NodeAllocatableResourceClaimStatus`,
        {
          resourceClaimName: [1, ptr(str())],
          containers: [2, setList(str())],
          mapping: [4, mapList(obj(`${V1}.NodeAllocatableMappedResources`, { name: [1, ptr(str())], quantity: [2, quantity()] }, { required: ['name'] }), ['name'])],
          overhead: [
            5,
            mapList(
              obj(`${V1}.NodeAllocatableOverheadResources`, { name: [1, ptr(str())], perPod: [2, quantity()], perContainer: [3, quantity()] }, { required: ['name'] }),
              ['name'],
            ),
          ],
        },
        { required: ['resourceClaimName'] },
      ),
      ['resourceClaimName'],
    ),
  ],
  volumeHealth: [
    22,
    mapList(
      obj(
        `${V1}.PodVolumeHealth`,
        { name: [1, ptr(str())], healthConditions: [2, mapList(volumeHealthConditionSchema, ['status', 'reason'])], lastTransitionTime: [3, time()] },
        { required: ['name'] },
      ),
      ['name'],
    ),
  ],
});

export const podSchema: ObjectSchema = withMeta(`${V1}.Pod`, { spec: [2, podSpecSchema], status: [3, podStatusSchema] });
