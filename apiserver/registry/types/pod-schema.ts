import type { ObjectSchema, Schema } from '../../api/schema';
import { localObjectReferenceSchema, withMeta } from '../common-schemas';
import {
  any,
  atomicList,
  bool,
  int32,
  int64,
  intOrStr,
  mapList,
  obj,
  quantityMap,
  str,
  strEnum,
  strMap,
  time,
} from '../schema-builders';

/**
 * core/v1 Pod schema. Lists carry upstream's patchMergeKey / listMapKeys; deep structures that
 * nothing here interprets (volume sources, affinity, security contexts, probe handlers) are 'any'.
 */

export const RESTART_POLICIES: readonly string[] = ['Always', 'OnFailure', 'Never'];
export const DNS_POLICIES: readonly string[] = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
export const PULL_POLICIES: readonly string[] = ['Always', 'IfNotPresent', 'Never'];
export const TERMINATION_MESSAGE_POLICIES: readonly string[] = ['File', 'FallbackToLogsOnError'];
export const POD_PHASES: readonly string[] = ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'];

/** Every volume source a v1 Volume may carry, in the order upstream's validateVolumeSource checks them; exactly one is set. */
export const VOLUME_SOURCES: readonly string[] = [
  'emptyDir', 'hostPath', 'gitRepo', 'gcePersistentDisk', 'awsElasticBlockStore', 'secret', 'nfs', 'iscsi',
  'glusterfs', 'flexVolume', 'persistentVolumeClaim', 'rbd', 'cinder', 'cephfs', 'quobyte', 'downwardAPI', 'fc',
  'flocker', 'azureFile', 'vsphereVolume', 'photonPersistentDisk', 'portworxVolume', 'azureDisk', 'storageos',
  'configMap', 'scaleIO', 'projected', 'csi', 'ephemeral', 'image',
];

const probeSchema = obj({
  exec: any(),
  httpGet: obj({ path: str(), port: intOrStr(), host: str(), scheme: str(), httpHeaders: atomicList(any()) }, { required: ['port'] }),
  tcpSocket: obj({ port: intOrStr(), host: str() }, { required: ['port'] }),
  grpc: any(),
  initialDelaySeconds: int32(),
  timeoutSeconds: int32(),
  periodSeconds: int32(),
  successThreshold: int32(),
  failureThreshold: int32(),
  terminationGracePeriodSeconds: int64(),
});

const containerPortSchema = obj(
  {
    name: str(),
    hostPort: int32(),
    containerPort: int32(),
    protocol: strEnum(['TCP', 'UDP', 'SCTP']),
    hostIP: str(),
  },
  { required: ['containerPort'] },
);

const envVarSchema = obj({ name: str(), value: str(), valueFrom: any() }, { required: ['name'] });

const volumeMountSchema = obj(
  {
    name: str(),
    readOnly: bool(),
    recursiveReadOnly: str(),
    mountPath: str(),
    subPath: str(),
    mountPropagation: str(),
    subPathExpr: str(),
  },
  { required: ['name', 'mountPath'] },
);

const resourcesSchema = obj({
  limits: quantityMap(),
  requests: quantityMap(),
  claims: mapList(obj({ name: str(), request: str() }, { required: ['name'] }), ['name']),
});

function containerFields(): Record<string, Schema> {
  return {
    name: str('Name of the container specified as a DNS_LABEL.'),
    image: str('Container image name.'),
    command: atomicList(str()),
    args: atomicList(str()),
    workingDir: str(),
    // Upstream: patchMergeKey containerPort, listMapKeys containerPort + protocol.
    ports: mapList(containerPortSchema, ['containerPort', 'protocol']),
    envFrom: atomicList(any()),
    env: mapList(envVarSchema, ['name']),
    resources: resourcesSchema,
    resizePolicy: atomicList(any()),
    restartPolicy: str(),
    restartPolicyRules: atomicList(any()),
    volumeMounts: mapList(volumeMountSchema, ['mountPath']),
    volumeDevices: mapList(obj({ name: str(), devicePath: str() }, { required: ['name', 'devicePath'] }), ['devicePath']),
    livenessProbe: probeSchema,
    readinessProbe: probeSchema,
    startupProbe: probeSchema,
    lifecycle: any(),
    terminationMessagePath: str(),
    terminationMessagePolicy: strEnum(TERMINATION_MESSAGE_POLICIES),
    imagePullPolicy: strEnum(PULL_POLICIES),
    securityContext: any(),
    stdin: bool(),
    stdinOnce: bool(),
    tty: bool(),
  };
}

export const containerSchema: ObjectSchema = obj(containerFields(), { required: ['name'] });
const ephemeralContainerSchema: ObjectSchema = obj({ ...containerFields(), targetContainerName: str() }, { required: ['name'] });

const volumeSchema = obj(
  Object.fromEntries([['name', str()] as [string, Schema], ...VOLUME_SOURCES.map((k) => [k, any()] as [string, Schema])]),
  { required: ['name'] },
);

const tolerationSchema = obj({ key: str(), operator: str(), value: str(), effect: str(), tolerationSeconds: int64() });

const containerStateSchema = obj({
  waiting: obj({ reason: str(), message: str() }),
  running: obj({ startedAt: time() }),
  terminated: obj(
    {
      exitCode: int32(),
      signal: int32(),
      reason: str(),
      message: str(),
      startedAt: time(),
      finishedAt: time(),
      containerID: str(),
    },
  ),
});

const containerStatusSchema = obj(
  {
    name: str(),
    state: containerStateSchema,
    lastState: containerStateSchema,
    ready: bool(),
    restartCount: int32(),
    image: str(),
    imageID: str(),
    containerID: str(),
    started: bool(),
    allocatedResources: quantityMap(),
    resources: any(),
    volumeMounts: any(),
    user: any(),
    allocatedResourcesStatus: any(),
    stopSignal: str(),
  },
  // Upstream's OpenAPI lists image and imageID as required, but typed decoding never enforced it;
  // node agents may report statuses before an image is resolved.
  { required: ['name'] },
);

const podConditionSchema = obj(
  {
    type: str(),
    observedGeneration: int64(),
    status: str(),
    lastProbeTime: time(),
    lastTransitionTime: time(),
    reason: str(),
    message: str(),
  },
  { required: ['type'] },
);

const ipSchema = obj({ ip: str() }, { required: ['ip'] });

export const podSpecSchema: ObjectSchema = obj(
  {
    volumes: mapList(volumeSchema, ['name']),
    initContainers: mapList(containerSchema, ['name']),
    containers: mapList(containerSchema, ['name']),
    ephemeralContainers: mapList(ephemeralContainerSchema, ['name']),
    restartPolicy: strEnum(RESTART_POLICIES),
    terminationGracePeriodSeconds: int64(),
    activeDeadlineSeconds: int64(),
    dnsPolicy: strEnum(DNS_POLICIES),
    nodeSelector: strMap(),
    serviceAccountName: str(),
    serviceAccount: str('Deprecated alias of serviceAccountName.'),
    automountServiceAccountToken: bool(),
    nodeName: str(),
    hostNetwork: bool(),
    hostPID: bool(),
    hostIPC: bool(),
    shareProcessNamespace: bool(),
    securityContext: any(),
    imagePullSecrets: mapList(localObjectReferenceSchema, ['name']),
    hostname: str(),
    subdomain: str(),
    affinity: any(),
    schedulerName: str(),
    tolerations: atomicList(tolerationSchema),
    hostAliases: mapList(obj({ ip: str(), hostnames: atomicList(str()) }, { required: ['ip'] }), ['ip']),
    priorityClassName: str(),
    priority: int32(),
    dnsConfig: any(),
    readinessGates: atomicList(obj({ conditionType: str() }, { required: ['conditionType'] })),
    runtimeClassName: str(),
    enableServiceLinks: bool(),
    preemptionPolicy: strEnum(['PreemptLowerPriority', 'Never']),
    overhead: quantityMap(),
    topologySpreadConstraints: mapList(any(), ['topologyKey', 'whenUnsatisfiable']),
    setHostnameAsFQDN: bool(),
    os: obj({ name: str() }, { required: ['name'] }),
    hostUsers: bool(),
    schedulingGates: mapList(obj({ name: str() }, { required: ['name'] }), ['name']),
    resourceClaims: mapList(any(), ['name']),
    resources: resourcesSchema,
    hostnameOverride: str(),
  },
  { required: ['containers'] },
);

export const podStatusSchema: ObjectSchema = obj({
  observedGeneration: int64(),
  phase: strEnum(POD_PHASES),
  conditions: mapList(podConditionSchema, ['type']),
  message: str(),
  reason: str(),
  nominatedNodeName: str(),
  hostIP: str(),
  // Upstream: patchMergeKey ip but listType atomic; strategic merge is what our one schema encodes.
  hostIPs: mapList(ipSchema, ['ip']),
  podIP: str(),
  podIPs: mapList(ipSchema, ['ip']),
  startTime: time(),
  initContainerStatuses: atomicList(containerStatusSchema),
  containerStatuses: atomicList(containerStatusSchema),
  qosClass: strEnum(['Guaranteed', 'Burstable', 'BestEffort']),
  ephemeralContainerStatuses: atomicList(containerStatusSchema),
  resize: str(),
  resourceClaimStatuses: mapList(any(), ['name']),
  extendedResourceClaimStatus: any(),
});

export const podSchema: ObjectSchema = withMeta({ spec: podSpecSchema, status: podStatusSchema });
