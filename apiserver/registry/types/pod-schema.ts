import type { ObjectSchema } from '../../api/schema';
import { localObjectReferenceSchema, withMeta } from '../common-schemas';
import {
  atomicList,
  atomicMap,
  bool,
  described,
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
  waiting: [
    1,
    described(
      'The container is waiting to start.',
      obj(`${V1}.ContainerStateWaiting`, {
        reason: [1, str('Why the container is not yet running.')],
        message: [2, str('Details of why the container is not yet running.')],
      }),
    ),
  ],
  running: [
    2,
    described('The container is running.', obj(`${V1}.ContainerStateRunning`, { startedAt: [1, time('When the container last (re)started.')] })),
  ],
  terminated: [
    3,
    described(
      'The container has terminated.',
      obj(`${V1}.ContainerStateTerminated`, {
      exitCode: [1, ptr(int32('The exit status of the last run.'))],
      signal: [2, int32('The signal that ended the last run.')],
      reason: [3, str('Why the container terminated.')],
      message: [4, str('Details of why the container terminated.')],
      startedAt: [5, time('When the last run started.')],
      finishedAt: [6, time('When the last run ended.')],
      containerID: [7, str('The container\'s ID, as <type>://<id>.')],
      }),
    ),
  ],
});

const volumeMountStatusSchema = obj(
  `${V1}.VolumeMountStatus`,
  {
    name: [1, ptr(str('The name of the volume mount.'))],
    mountPath: [2, ptr(str('Where in the container the volume is mounted.'))],
    readOnly: [3, bool('Whether the mount is read-only.')],
    recursiveReadOnly: [4, ptr(str('Disabled or Enabled: whether submounts are read-only too.'))],
    volumeStatus: [
      5,
      described(
        'The status of the mounted volume.',
        obj(`${V1}.VolumeStatus`, {
          image: [
            1,
            described('The status of an image volume.', obj(`${V1}.ImageVolumeStatus`, { imageRef: [1, str('The digest of the image mounted.')] })),
          ],
        }),
      ),
    ],
  },
  { required: ['mountPath'] },
);

const resourceStatusSchema = obj(
  `${V1}.ResourceStatus`,
  {
    name: [1, ptr(str('The resource name, such as a device plugin or claim resource.'))],
    resources: [
      2,
      mapList(
        obj(
          `${V1}.ResourceHealth`,
          {
            resourceID: [1, ptr(str('The unique ID of the allocated resource.'))],
            health: [2, str('Healthy, Unhealthy or Unknown.')],
            message: [6, ptr(str('Details of the health status.'))],
          },
          { required: ['resourceID'] },
        ),
        ['resourceID'],
        'The health of each allocated resource.',
      ),
    ],
  },
  { required: ['name'] },
);

const containerStatusSchema = obj(
  `${V1}.ContainerStatus`,
  {
    name: [1, ptr(str('The name of the container.'))],
    state: [2, described('The current state of the container.', containerStateSchema)],
    lastState: [3, described('The last termination of the container.', containerStateSchema)],
    ready: [4, ptr(bool('Whether the container passes its readiness probe.'))],
    restartCount: [5, ptr(int32('How many times the container has been restarted.'))],
    image: [6, ptr(str('The image the container runs.'))],
    imageID: [7, ptr(str('The ID of the image the container runs.'))],
    containerID: [8, str('The container\'s ID, as <type>://<id>.')],
    started: [9, ptr(bool('Whether the container passed its startup probe.'))],
    allocatedResources: [10, quantityMap('Compute resources the node allocated to the container.')],
    resources: [11, described('Compute resources actually configured for the container.', resourceRequirementsSchema)],
    volumeMounts: [12, mapList(volumeMountStatusSchema, ['mountPath'], 'The status of the volume mounts.')],
    user: [
      13,
      described(
        'The identity the container\'s first process runs as.',
        obj(`${V1}.ContainerUser`, {
          linux: [
            1,
            described(
              'The Linux user identity.',
              obj(`${V1}.LinuxContainerUser`, {
                uid: [1, ptr(int64('The primary UID.'))],
                gid: [2, ptr(int64('The primary GID.'))],
                supplementalGroups: [3, atomicList(int64(), 'The supplemental GIDs.')],
              }),
            ),
          ],
        }),
      ),
    ],
    allocatedResourcesStatus: [14, mapList(resourceStatusSchema, ['name'], 'The health of the resources allocated to the container.')],
    stopSignal: [15, ptr(str('The signal used to stop the container.'))],
  },
  // Upstream's OpenAPI lists image and imageID as required, but typed decoding never enforced it;
  // node agents may report statuses before an image is resolved.
  { required: ['name'] },
);

const podConditionSchema = obj(
  `${V1}.PodCondition`,
  {
    type: [1, ptr(str('The type of the condition, such as Ready.'))],
    observedGeneration: [7, int64('The pod generation the condition was set from.')],
    status: [2, ptr(str('True, False or Unknown.'))],
    lastProbeTime: [3, time('When the condition was last probed.')],
    lastTransitionTime: [4, time('When the status last changed.')],
    reason: [5, str('A CamelCase reason for the last transition.')],
    message: [6, str('Details of the last transition.')],
  },
  { required: ['type'] },
);

const volumeHealthConditionSchema = obj(`${V1}.VolumeHealthCondition`, {
    status: [1, ptr(str('True, False or Unknown.'))],
    reason: [2, ptr(str('A CamelCase reason for the condition.'))],
    message: [3, str('Details of the condition.')],
  }, { required: ['status', 'reason'] });

export const podSpecSchema: ObjectSchema = obj(
  `${V1}.PodSpec`,
  {
    volumes: [1, mapList(volumeSchema, ['name'], 'Volumes the pod\'s containers may mount.')],
    initContainers: [20, mapList(containerSchema, ['name'], 'Containers run in order before the app containers start.')],
    containers: [2, mapList(containerSchema, ['name'], 'The containers of the pod; at least one.')],
    ephemeralContainers: [34, mapList(ephemeralContainerSchema, ['name'], 'Containers added to a running pod, such as for debugging.')],
    restartPolicy: [3, strEnum(RESTART_POLICIES, 'Restart policy of the pod\'s containers; Always by default.')],
    terminationGracePeriodSeconds: [4, ptr(int64('Seconds the pod is given to stop gracefully; 30 by default.'))],
    activeDeadlineSeconds: [5, ptr(int64('Seconds the pod may be active before the kubelet fails it.'))],
    dnsPolicy: [6, strEnum(DNS_POLICIES, 'How DNS is set up for the pod; ClusterFirst by default.')],
    nodeSelector: [7, atomicMap(str(), 'Labels a node must have for the pod to be scheduled to it.')], // +mapType=atomic upstream
    serviceAccountName: [8, str('The ServiceAccount the pod runs as.')],
    serviceAccount: [9, str('Deprecated alias of serviceAccountName.')],
    automountServiceAccountToken: [21, ptr(bool('Whether a service account token is mounted automatically.'))],
    nodeName: [10, str('The node the pod is bound to.')],
    hostNetwork: [11, bool('Use the host\'s network namespace.')],
    hostPID: [12, bool('Use the host\'s PID namespace.')],
    hostIPC: [13, bool('Use the host\'s IPC namespace.')],
    shareProcessNamespace: [27, ptr(bool('Share one PID namespace among the pod\'s containers.'))],
    securityContext: [14, described('Pod-level security attributes and common container settings.', podSecurityContextSchema)],
    imagePullSecrets: [15, mapList(localObjectReferenceSchema, ['name'], 'Secrets used to pull the pod\'s images.')],
    hostname: [16, str('The pod\'s hostname; the pod name by default.')],
    subdomain: [17, str('Makes the FQDN <hostname>.<subdomain>.<namespace>.svc.<cluster domain>.')],
    affinity: [18, described('Scheduling constraints of the pod.', affinitySchema)],
    schedulerName: [19, str('The scheduler that schedules the pod.')],
    tolerations: [22, atomicList(tolerationSchema, 'Taints the pod tolerates.')],
    hostAliases: [
      23,
      mapList(
        obj(
          `${V1}.HostAlias`,
          { ip: [1, ptr(str('The IP address.'))], hostnames: [2, atomicList(str(), 'Hostnames for the IP address.')] },
          { required: ['ip'] },
        ),
        ['ip'],
        'Entries added to the pod\'s /etc/hosts.',
      ),
    ],
    priorityClassName: [24, str('The PriorityClass giving the pod its priority.')],
    priority: [25, ptr(int32('The pod\'s priority, set from priorityClassName.'))],
    dnsConfig: [
      26,
      described(
        'DNS settings merged into those dnsPolicy generates.',
        obj(`${V1}.PodDNSConfig`, {
          nameservers: [1, atomicList(str(), 'DNS server IP addresses.')],
          searches: [2, atomicList(str(), 'DNS search domains.')],
          options: [
            3,
            atomicList(
              obj(`${V1}.PodDNSConfigOption`, { name: [1, str('The option name.')], value: [2, ptr(str('The option value.'))] }),
              'Resolver options.',
            ),
          ],
        }),
      ),
    ],
    readinessGates: [
      28,
      atomicList(
        obj(`${V1}.PodReadinessGate`, { conditionType: [1, ptr(str('A pod condition type that must be True.'))] }, { required: ['conditionType'] }),
        'Extra conditions the pod needs to be ready.',
      ),
    ],
    runtimeClassName: [29, ptr(str('The RuntimeClass to run the pod with.'))],
    enableServiceLinks: [30, ptr(bool('Inject Service environment variables, as Docker links did; true by default.'))],
    preemptionPolicy: [31, ptr(strEnum(['PreemptLowerPriority', 'Never'], 'Whether the pod may preempt lower-priority pods.'))],
    overhead: [32, quantityMap('Resources the pod\'s sandbox uses beyond its containers.')],
    topologySpreadConstraints: [
      33,
      mapList(topologySpreadConstraintSchema, ['topologyKey', 'whenUnsatisfiable'], 'How the pods spread across topology domains.'),
    ],
    setHostnameAsFQDN: [35, ptr(bool('Set the pod\'s hostname to its FQDN.'))],
    os: [36, described('The OS of the pod\'s containers.', obj(`${V1}.PodOS`, { name: [1, ptr(str('linux or windows.'))] }, { required: ['name'] }))],
    hostUsers: [37, ptr(bool('Use the host\'s user namespace; false gives the pod its own.'))],
    schedulingGates: [
      38,
      mapList(
        obj(`${V1}.PodSchedulingGate`, { name: [1, ptr(str('The name of the gate.'))] }, { required: ['name'] }),
        ['name'],
        'Gates that hold the pod back from scheduling while present.',
      ),
    ],
    resourceClaims: [
      39,
      mapList(
        obj(
          `${V1}.PodResourceClaim`,
          {
            name: [1, ptr(str('The name containers refer to the claim by.'))],
            resourceClaimName: [3, ptr(str('An existing ResourceClaim in the pod\'s namespace.'))],
            resourceClaimTemplateName: [4, ptr(str('A ResourceClaimTemplate to create the pod\'s claim from.'))],
          },
          { required: ['name'] },
        ),
        ['name'],
        'Resource claims the pod\'s containers may use.',
      ),
    ],
    resources: [40, described('Compute resources of the pod as a whole.', resourceRequirementsSchema)],
    hostnameOverride: [41, ptr(str('A hostname to use instead of the generated one.'))],
    schedulingGroup: [
      43,
      described(
        'The group the pod is scheduled with.',
        obj(`${V1}.PodSchedulingGroup`, { podGroupName: [1, ptr(str('The name of the pod group.'))] }),
      ),
    ],
    evictionResponders: [
      44,
      mapList(
        obj(
          `${V1}.EvictionResponder`,
          { name: [1, ptr(str('The name of the responder.'))], priority: [2, ptr(int32('The order in which responders are called.'))] },
          { required: ['name'] },
        ),
        ['name'],
        'Responders consulted before the pod is evicted.',
      ),
    ],
  },
  { required: ['containers'] },
);

const ipSchema = (message: string) => obj(message, { ip: [1, ptr(str('The IP address.'))] }, { required: ['ip'] });

export const podStatusSchema: ObjectSchema = obj(`${V1}.PodStatus`, {
  observedGeneration: [17, int64('The pod generation the status was set from.')],
  phase: [1, strEnum(POD_PHASES, 'Where the pod is in its lifecycle.')],
  conditions: [2, mapList(podConditionSchema, ['type'], 'The current conditions of the pod.')],
  message: [3, str('Details of why the pod is in this state.')],
  reason: [4, str('A CamelCase reason the pod is in this state, such as Evicted.')],
  nominatedNodeName: [11, str('The node preemption made room on for the pod.')],
  hostIP: [5, str('The primary IP of the pod\'s node.')],
  // Upstream: patchMergeKey ip but listType atomic; strategic merge is what our one schema encodes.
  hostIPs: [16, mapList(ipSchema(`${V1}.HostIP`), ['ip'], 'The IPs of the pod\'s node.')],
  podIP: [6, str('The primary IP of the pod.')],
  podIPs: [12, mapList(ipSchema(`${V1}.PodIP`), ['ip'], 'The IPs of the pod, at most one per family.')],
  startTime: [7, time('When the kubelet acknowledged the pod.')],
  initContainerStatuses: [10, atomicList(containerStatusSchema, 'The status of each init container.')],
  containerStatuses: [8, atomicList(containerStatusSchema, 'The status of each container.')],
  qosClass: [9, strEnum(['Guaranteed', 'Burstable', 'BestEffort'], 'The QoS class of the pod, from its resources.')],
  ephemeralContainerStatuses: [13, atomicList(containerStatusSchema, 'The status of each ephemeral container.')],
  resize: [14, str('Deprecated: the state of a resize of the pod\'s resources.')],
  resourceClaimStatuses: [
    15,
    mapList(
      obj(
        `${V1}.PodResourceClaimStatus`,
        {
          name: [1, ptr(str('The name of the entry in spec.resourceClaims.'))],
          resourceClaimName: [2, ptr(str('The ResourceClaim created for the entry.'))],
        },
        { required: ['name'] },
      ),
      ['name'],
      'The ResourceClaims generated for the pod.',
    ),
  ],
  extendedResourceClaimStatus: [
    18,
    described(
      'The ResourceClaim made for the pod\'s extended resource requests.',
      obj(`${V1}.PodExtendedResourceClaimStatus`, {
        requestMappings: [
          1,
          atomicList(
            obj(`${V1}.ContainerExtendedResourceRequest`, {
              containerName: [1, ptr(str('The container requesting the resource.'))],
              resourceName: [2, ptr(str('The extended resource name.'))],
              requestName: [3, ptr(str('The request in the claim.'))],
            }),
            'Which claim request serves each container\'s extended resource.',
          ),
        ],
        resourceClaimName: [2, ptr(str('The name of the ResourceClaim.'))],
      }),
    ),
  ],
  allocatedResources: [19, quantityMap('Compute resources allocated to the pod.')],
  resources: [20, described('Compute resources actually configured for the pod.', resourceRequirementsSchema)],
  nodeAllocatableResourceClaimStatuses: [
    21,
    mapList(
      obj(
        `${V1}.NodeAllocatableResourceClaimStatus`,
        {
          resourceClaimName: [1, ptr(str('The name of the ResourceClaim.'))],
          containers: [2, setList(str(), 'Containers using the claim.')],
          mapping: [
            4,
            mapList(
              obj(
                `${V1}.NodeAllocatableMappedResources`,
                { name: [1, ptr(str('The node resource name.'))], quantity: [2, quantity('The amount mapped.')] },
                { required: ['name'] },
              ),
              ['name'],
              'Node allocatable resources the claim maps to.',
            ),
          ],
          overhead: [
            5,
            mapList(
              obj(
                `${V1}.NodeAllocatableOverheadResources`,
                {
                  name: [1, ptr(str('The node resource name.'))],
                  perPod: [2, quantity('Overhead counted once per pod.')],
                  perContainer: [3, quantity('Overhead counted per container.')],
                },
                { required: ['name'] },
              ),
              ['name'],
              'Extra node resources the claim uses.',
            ),
          ],
        },
        { required: ['resourceClaimName'] },
      ),
      ['resourceClaimName'],
      'Node allocatable resources claimed through ResourceClaims.',
    ),
  ],
  volumeHealth: [
    22,
    mapList(
      obj(
        `${V1}.PodVolumeHealth`,
        {
          name: [1, ptr(str('The name of the volume.'))],
          healthConditions: [2, mapList(volumeHealthConditionSchema, ['status', 'reason'], 'The health conditions of the volume.')],
          lastTransitionTime: [3, time('When the health last changed.')],
        },
        { required: ['name'] },
      ),
      ['name'],
      'The health of the pod\'s volumes.',
    ),
  ],
});

export const podSchema: ObjectSchema = withMeta(`${V1}.Pod`, {
  spec: [2, described('The desired behavior of the pod.', podSpecSchema)],
  status: [3, described('The most recently observed status of the pod.', podStatusSchema)],
});
