import type { ObjectSchema } from '../../api/schema';
import { localObjectReferenceSchema } from '../common-schemas';
import {
  atomicList,
  bool,
  int32,
  int64,
  intOrStr,
  mapList,
  obj,
  ptr,
  quantity,
  quantityMap,
  setList,
  str,
  strEnum,
  type Field,
} from '../schema-builders';
import { securityContextSchema } from './security-context-schema';

/**
 * core/v1 Container and the shapes only containers use (ports, environment, mounts, resources,
 * probes, lifecycle hooks), with upstream's message names and field numbers.
 */

const V1 = 'k8s.io.api.core.v1';

export const PULL_POLICIES: readonly string[] = ['Always', 'IfNotPresent', 'Never'];
export const TERMINATION_MESSAGE_POLICIES: readonly string[] = ['File', 'FallbackToLogsOnError'];
const PROTOCOLS: readonly string[] = ['TCP', 'UDP', 'SCTP'];

const containerPortSchema = obj(
  `${V1}.ContainerPort`,
  {
    name: [1, str('An IANA_SVC_NAME a Service may refer to the port by.')],
    hostPort: [2, int32('The port on the host, usually unset.')],
    containerPort: [3, ptr(int32('The port on the pod IP.'))],
    protocol: [4, strEnum(PROTOCOLS)],
    hostIP: [5, str('The host IP to bind the host port to.')],
  },
  { required: ['containerPort'] },
);

/** A key of a ConfigMap or Secret (LocalObjectReference inline: name). */
function keySelector(message: string): ObjectSchema {
  return obj(message, { key: [2, ptr(str())], optional: [3, ptr(bool())] }, { atomic: true, inline: [[1, localObjectReferenceSchema]] });
}

/** A field of the pod (downward API). */
export const objectFieldSelectorSchema = obj(`${V1}.ObjectFieldSelector`, { apiVersion: [1, str()], fieldPath: [2, ptr(str())] }, { atomic: true });

/** A resource of a container (downward API). */
export const resourceFieldSelectorSchema = obj(
  `${V1}.ResourceFieldSelector`,
  { containerName: [1, str()], resource: [2, ptr(str())], divisor: [3, quantity()] },
  { atomic: true },
);

const envVarSourceSchema = obj(`${V1}.EnvVarSource`, {
  fieldRef: [1, objectFieldSelectorSchema],
  resourceFieldRef: [2, resourceFieldSelectorSchema],
  configMapKeyRef: [3, keySelector(`${V1}.ConfigMapKeySelector`)],
  secretKeyRef: [4, keySelector(`${V1}.SecretKeySelector`)],
  fileKeyRef: [
    5,
    obj(
      `${V1}.FileKeySelector`,
      { volumeName: [1, ptr(str())], path: [2, ptr(str())], key: [3, ptr(str())], optional: [4, ptr(bool())] },
      { atomic: true },
    ),
  ],
});

const envVarSchema = obj(`${V1}.EnvVar`, { name: [1, ptr(str())], value: [2, str()], valueFrom: [3, envVarSourceSchema] }, { required: ['name'] });

const envFromSourceSchema = obj(`${V1}.EnvFromSource`, {
  prefix: [1, str('Prepended to every variable name.')],
  configMapRef: [2, obj(`${V1}.ConfigMapEnvSource`, { optional: [2, ptr(bool())] }, { inline: [[1, localObjectReferenceSchema]] })],
  secretRef: [3, obj(`${V1}.SecretEnvSource`, { optional: [2, ptr(bool())] }, { inline: [[1, localObjectReferenceSchema]] })],
});

const volumeMountSchema = obj(
  `${V1}.VolumeMount`,
  {
    name: [1, ptr(str('The volume to mount.'))],
    readOnly: [2, bool()],
    recursiveReadOnly: [7, ptr(str())],
    mountPath: [3, ptr(str('Where in the container the volume is mounted.'))],
    subPath: [4, str()],
    mountPropagation: [5, ptr(str())],
    subPathExpr: [6, str()],
    bindMountOptions: [8, setList(str())],
  },
  { required: ['name', 'mountPath'] },
);

const volumeDeviceSchema = obj(`${V1}.VolumeDevice`, { name: [1, ptr(str())], devicePath: [2, ptr(str())] }, { required: ['name', 'devicePath'] });

export const resourceRequirementsSchema = obj(`${V1}.ResourceRequirements`, {
  limits: [1, quantityMap('The most compute resources allowed.')],
  requests: [2, quantityMap('The least compute resources required.')],
  claims: [3, mapList(obj(`${V1}.ResourceClaim`, { name: [1, ptr(str())], request: [2, str()] }, { required: ['name'] }), ['name'])],
});

const execActionSchema = obj(`${V1}.ExecAction`, { command: [1, atomicList(str(), 'The command line to run in the container.')] });

const httpGetActionSchema = obj(
  `${V1}.HTTPGetAction`,
  {
    path: [1, str()],
    port: [2, ptr(intOrStr('Number or IANA_SVC_NAME of the port.'))],
    host: [3, str('Defaults to the pod IP.')],
    scheme: [4, str('HTTP or HTTPS.')],
    httpHeaders: [5, atomicList(obj(`${V1}.HTTPHeader`, { name: [1, ptr(str())], value: [2, ptr(str())] }))],
    protocol: [6, ptr(str())],
  },
  { required: ['port'] },
);

const tcpSocketActionSchema = obj(`${V1}.TCPSocketAction`, { port: [1, ptr(intOrStr())], host: [2, str()] }, { required: ['port'] });

const probeHandlerSchema = obj(`${V1}.ProbeHandler`, {
  exec: [1, execActionSchema],
  httpGet: [2, httpGetActionSchema],
  tcpSocket: [3, tcpSocketActionSchema],
  grpc: [4, obj(`${V1}.GRPCAction`, { port: [1, ptr(int32())], service: [2, ptr(str())], mode: [3, ptr(str())] })],
});

const probeSchema = obj(
  `${V1}.Probe`,
  {
    initialDelaySeconds: [2, int32()],
    timeoutSeconds: [3, int32()],
    periodSeconds: [4, int32()],
    successThreshold: [5, int32()],
    failureThreshold: [6, int32()],
    terminationGracePeriodSeconds: [7, ptr(int64())],
  },
  { inline: [[1, probeHandlerSchema, 'handler']] },
);

const lifecycleHandlerSchema = obj(`${V1}.LifecycleHandler`, {
  exec: [1, execActionSchema],
  httpGet: [2, httpGetActionSchema],
  tcpSocket: [3, tcpSocketActionSchema],
  sleep: [4, obj(`${V1}.SleepAction`, { seconds: [1, ptr(int64())] })],
});

const lifecycleSchema = obj(`${V1}.Lifecycle`, {
  postStart: [1, lifecycleHandlerSchema],
  preStop: [2, lifecycleHandlerSchema],
  stopSignal: [3, ptr(str())],
});

const resizePolicySchema = obj(`${V1}.ContainerResizePolicy`, { resourceName: [1, ptr(str())], restartPolicy: [2, ptr(str())] });

const restartRuleSchema = obj(`${V1}.ContainerRestartRule`, {
  action: [1, str()],
  exitCodes: [2, obj(`${V1}.ContainerRestartRuleOnExitCodes`, { operator: [1, str()], values: [2, setList(int32())] })],
});

/** The fields Container and EphemeralContainerCommon share, with the same numbers. */
function containerFields(): Record<string, Field> {
  return {
    name: [1, ptr(str('Name of the container specified as a DNS_LABEL.'))],
    image: [2, str('Container image name.')],
    command: [3, atomicList(str(), 'Entrypoint array; the image ENTRYPOINT when unset.')],
    args: [4, atomicList(str(), 'Arguments to the entrypoint; the image CMD when unset.')],
    workingDir: [5, str()],
    // Upstream: patchMergeKey containerPort, listMapKeys containerPort + protocol.
    ports: [6, mapList(containerPortSchema, ['containerPort', 'protocol'])],
    envFrom: [19, atomicList(envFromSourceSchema)],
    env: [7, mapList(envVarSchema, ['name'])],
    resources: [8, resourceRequirementsSchema],
    resizePolicy: [23, atomicList(resizePolicySchema)],
    restartPolicy: [24, ptr(str())],
    restartPolicyRules: [25, atomicList(restartRuleSchema)],
    volumeMounts: [9, mapList(volumeMountSchema, ['mountPath'])],
    volumeDevices: [21, mapList(volumeDeviceSchema, ['devicePath'])],
    livenessProbe: [10, probeSchema],
    readinessProbe: [11, probeSchema],
    startupProbe: [22, probeSchema],
    lifecycle: [12, lifecycleSchema],
    terminationMessagePath: [13, str()],
    terminationMessagePolicy: [20, strEnum(TERMINATION_MESSAGE_POLICIES)],
    imagePullPolicy: [14, strEnum(PULL_POLICIES)],
    securityContext: [15, securityContextSchema],
    stdin: [16, bool()],
    stdinOnce: [17, bool()],
    tty: [18, bool()],
  };
}

export const containerSchema: ObjectSchema = obj(`${V1}.Container`, containerFields(), { required: ['name'] });

export const ephemeralContainerSchema: ObjectSchema = obj(
  `${V1}.EphemeralContainer`,
  { targetContainerName: [2, str('The container whose namespaces this one joins.')] },
  { required: ['name'], inline: [[1, obj(`${V1}.EphemeralContainerCommon`, containerFields())]] },
);
