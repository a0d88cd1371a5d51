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
  described,
  withDefault,
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
    protocol: [4, withDefault(strEnum(PROTOCOLS, 'TCP (the default), UDP or SCTP.'), 'TCP')],
    hostIP: [5, str('The host IP to bind the host port to.')],
  },
  { required: ['containerPort'] },
);

/** A key of a ConfigMap or Secret (LocalObjectReference inline: name). */
function keySelector(message: string): ObjectSchema {
  return obj(message, { key: [2, ptr(str('The key to select.'))], optional: [3, ptr(bool('Whether the object or its key may be missing.'))] }, { atomic: true, inline: [[1, localObjectReferenceSchema]] });
}

/** A field of the pod (downward API). */
export const objectFieldSelectorSchema = obj(`${V1}.ObjectFieldSelector`, {
    apiVersion: [1, str('The version of the schema fieldPath is written in; v1 by default.')],
    fieldPath: [2, ptr(str('The path of the field to select.'))],
  }, { atomic: true });

/** A resource of a container (downward API). */
export const resourceFieldSelectorSchema = obj(
  `${V1}.ResourceFieldSelector`,
  {
    containerName: [1, str('The container whose resource is selected; required for volumes.')],
    resource: [2, ptr(str('The resource to select, such as limits.cpu.'))],
    divisor: [3, quantity('The unit the value is given in; 1 by default.')],
  },
  { atomic: true },
);

const envVarSourceSchema = obj(`${V1}.EnvVarSource`, {
  fieldRef: [1, described('A field of the pod.', objectFieldSelectorSchema)],
  resourceFieldRef: [2, described('A resource limit or request of a container.', resourceFieldSelectorSchema)],
  configMapKeyRef: [3, described('A key of a ConfigMap in the pod\'s namespace.', keySelector(`${V1}.ConfigMapKeySelector`))],
  secretKeyRef: [4, described('A key of a Secret in the pod\'s namespace.', keySelector(`${V1}.SecretKeySelector`))],
  fileKeyRef: [
    5,
    described(
      'A key of an env file in an emptyDir volume.',
      obj(
        `${V1}.FileKeySelector`,
        {
          volumeName: [1, ptr(str('The emptyDir volume holding the file.'))],
          path: [2, ptr(str('The file\'s path within the volume.'))],
          key: [3, ptr(str('The variable to read from the file.'))],
          optional: [4, ptr(bool('Whether the file or key may be missing.'))],
        },
        { atomic: true },
      ),
    ),
  ],
});

const envVarSchema = obj(
  `${V1}.EnvVar`,
  {
    name: [1, ptr(str('The name of the variable.'))],
    value: [2, str('The value; $(VAR) references to earlier variables are expanded.')],
    valueFrom: [3, described('Where the value comes from, when value is empty.', envVarSourceSchema)],
  },
  { required: ['name'] },
);

const envFromSourceSchema = obj(`${V1}.EnvFromSource`, {
  prefix: [1, str('Prepended to every variable name.')],
  configMapRef: [
    2,
    described(
      'The ConfigMap to take variables from.',
      obj(`${V1}.ConfigMapEnvSource`, { optional: [2, ptr(bool('Whether the ConfigMap may be missing.'))] }, { inline: [[1, localObjectReferenceSchema]] }),
    ),
  ],
  secretRef: [
    3,
    described(
      'The Secret to take variables from.',
      obj(`${V1}.SecretEnvSource`, { optional: [2, ptr(bool('Whether the Secret may be missing.'))] }, { inline: [[1, localObjectReferenceSchema]] }),
    ),
  ],
});

const volumeMountSchema = obj(
  `${V1}.VolumeMount`,
  {
    name: [1, ptr(str('The volume to mount.'))],
    readOnly: [2, bool('Mount the volume read-only.')],
    recursiveReadOnly: [7, ptr(str('Disabled, IfPossible or Enabled: whether read-only applies to submounts.'))],
    mountPath: [3, ptr(str('Where in the container the volume is mounted.'))],
    subPath: [4, str('The path within the volume to mount; its root when empty.')],
    mountPropagation: [5, ptr(str('None, HostToContainer or Bidirectional.'))],
    subPathExpr: [6, str('Like subPath, with $(VAR) references to the environment expanded.')],
    bindMountOptions: [8, setList(str(), 'Extra options for the bind mount.')],
  },
  { required: ['name', 'mountPath'] },
);

const volumeDeviceSchema = obj(`${V1}.VolumeDevice`, {
    name: [1, ptr(str('The persistentVolumeClaim volume to map.'))],
    devicePath: [2, ptr(str('The device path inside the container.'))],
  },
  { required: ['name', 'devicePath'] },
);

export const resourceRequirementsSchema = obj(`${V1}.ResourceRequirements`, {
  limits: [1, quantityMap('The most compute resources allowed.')],
  requests: [2, quantityMap('The least compute resources required.')],
  claims: [
    3,
    mapList(
      obj(
        `${V1}.ResourceClaim`,
        {
          name: [1, ptr(str('The name of an entry of the pod\'s resourceClaims.'))],
          request: [2, str('A request within the claim; all of the claim when empty.')],
        },
        { required: ['name'] },
      ),
      ['name'],
      'Dynamically allocated resource claims this container uses.',
    ),
  ],
});

const execActionSchema = obj(`${V1}.ExecAction`, { command: [1, atomicList(str(), 'The command line to run in the container.')] });

const httpGetActionSchema = obj(
  `${V1}.HTTPGetAction`,
  {
    path: [1, str('The HTTP path to request.')],
    port: [2, ptr(intOrStr('Number or IANA_SVC_NAME of the port.'))],
    host: [3, str('Defaults to the pod IP.')],
    scheme: [4, str('HTTP or HTTPS.')],
    httpHeaders: [
      5,
      atomicList(
        obj(`${V1}.HTTPHeader`, { name: [1, ptr(str('The header name.'))], value: [2, ptr(str('The header value.'))] }),
        'Custom headers to send.',
      ),
    ],
    protocol: [6, ptr(str('HTTP/1.1 by default.'))],
  },
  { required: ['port'] },
);

const tcpSocketActionSchema = obj(`${V1}.TCPSocketAction`, {
    port: [1, ptr(intOrStr('Number or IANA_SVC_NAME of the port.'))],
    host: [2, str('Defaults to the pod IP.')],
  }, { required: ['port'] });

const probeHandlerSchema = obj(`${V1}.ProbeHandler`, {
  exec: [1, described('A command to run in the container.', execActionSchema)],
  httpGet: [2, described('An HTTP GET request to make.', httpGetActionSchema)],
  tcpSocket: [3, described('A TCP port to connect to.', tcpSocketActionSchema)],
  grpc: [
    4,
    described(
      'A gRPC health check to make.',
      obj(`${V1}.GRPCAction`, {
        port: [1, ptr(int32('The port of the gRPC service.'))],
        service: [2, ptr(str('The service name sent in the health check request.'))],
        mode: [3, ptr(str('How the health check is made.'))],
      }),
    ),
  ],
});

const probeSchema = obj(
  `${V1}.Probe`,
  {
    initialDelaySeconds: [2, int32('Seconds after the container starts before the first probe.')],
    timeoutSeconds: [3, int32('Seconds before a probe times out; 1 by default.')],
    periodSeconds: [4, int32('Seconds between probes; 10 by default.')],
    successThreshold: [5, int32('Consecutive successes after a failure to count as success; 1 by default.')],
    failureThreshold: [6, int32('Consecutive failures to count as failure; 3 by default.')],
    terminationGracePeriodSeconds: [7, ptr(int64('Grace period for stopping the pod after a failed probe; overrides the pod\'s.'))],
  },
  { inline: [[1, probeHandlerSchema, 'handler']] },
);

const lifecycleHandlerSchema = obj(`${V1}.LifecycleHandler`, {
  exec: [1, described('A command to run in the container.', execActionSchema)],
  httpGet: [2, described('An HTTP GET request to make.', httpGetActionSchema)],
  tcpSocket: [3, described('Deprecated; kept for compatibility, not supported as a hook.', tcpSocketActionSchema)],
  sleep: [4, described('Sleep for a while.', obj(`${V1}.SleepAction`, { seconds: [1, ptr(int64('Seconds to sleep.'))] }))],
});

const lifecycleSchema = obj(`${V1}.Lifecycle`, {
  postStart: [1, described('Called right after the container is created.', lifecycleHandlerSchema)],
  preStop: [2, described('Called before the container is terminated.', lifecycleHandlerSchema)],
  stopSignal: [3, ptr(str('The signal sent to stop the container; the image\'s STOPSIGNAL when unset.'))],
});

const resizePolicySchema = obj(`${V1}.ContainerResizePolicy`, {
  resourceName: [1, ptr(str('The resource this policy is for: cpu or memory.'))],
  restartPolicy: [2, ptr(str('NotRequired or RestartContainer when the resource is resized.'))],
});

const restartRuleSchema = obj(`${V1}.ContainerRestartRule`, {
  action: [1, str('What to do when the rule matches: Restart.')],
  exitCodes: [
    2,
    described(
      'Matches the container\'s exit codes.',
      obj(`${V1}.ContainerRestartRuleOnExitCodes`, {
        operator: [1, str('In or NotIn.')],
        values: [2, setList(int32(), 'The exit codes to compare with.')],
      }),
    ),
  ],
});

/** The fields Container and EphemeralContainerCommon share, with the same numbers. */
function containerFields(): Record<string, Field> {
  return {
    name: [1, ptr(str('Name of the container specified as a DNS_LABEL.'))],
    image: [2, str('Container image name.')],
    command: [3, atomicList(str(), 'Entrypoint array; the image ENTRYPOINT when unset.')],
    args: [4, atomicList(str(), 'Arguments to the entrypoint; the image CMD when unset.')],
    workingDir: [5, str('The working directory; the runtime default when unset.')],
    // Upstream: patchMergeKey containerPort, listMapKeys containerPort + protocol.
    ports: [6, mapList(containerPortSchema, ['containerPort', 'protocol'], 'Ports the container exposes; informational.')],
    envFrom: [19, atomicList(envFromSourceSchema, 'Sources whose keys become environment variables.')],
    env: [7, mapList(envVarSchema, ['name'], 'Environment variables to set in the container.')],
    resources: [8, described('Compute resources the container needs.', resourceRequirementsSchema)],
    resizePolicy: [23, atomicList(resizePolicySchema, 'How each resource is resized.')],
    restartPolicy: [24, ptr(str('Always makes an init container a sidecar; overrides the pod\'s policy.'))],
    restartPolicyRules: [25, atomicList(restartRuleSchema, 'Rules deciding whether an exited container is restarted.')],
    volumeMounts: [9, mapList(volumeMountSchema, ['mountPath'], 'Pod volumes to mount in the container.')],
    volumeDevices: [21, mapList(volumeDeviceSchema, ['devicePath'], 'Block devices the container uses.')],
    livenessProbe: [10, described('Restart the container when it fails.', probeSchema)],
    readinessProbe: [11, described('Remove the pod from Service endpoints when it fails.', probeSchema)],
    startupProbe: [22, described('Other probes wait until it succeeds.', probeSchema)],
    lifecycle: [12, described('Actions taken on container lifecycle events.', lifecycleSchema)],
    terminationMessagePath: [13, str('The file the termination message is read from.')],
    terminationMessagePolicy: [20, strEnum(TERMINATION_MESSAGE_POLICIES, 'Where the termination message comes from.')],
    imagePullPolicy: [14, strEnum(PULL_POLICIES, 'When the image is pulled.')],
    securityContext: [15, described('Security options of the container.', securityContextSchema)],
    stdin: [16, bool('Allocate a buffer for stdin.')],
    stdinOnce: [17, bool('Close stdin after the first attach session.')],
    tty: [18, bool('Allocate a TTY.')],
  };
}

export const containerSchema: ObjectSchema = obj(`${V1}.Container`, containerFields(), { required: ['name'] });

export const ephemeralContainerSchema: ObjectSchema = obj(
  `${V1}.EphemeralContainer`,
  { targetContainerName: [2, str('The container whose namespaces this one joins.')] },
  { required: ['name'], inline: [[1, obj(`${V1}.EphemeralContainerCommon`, containerFields())]] },
);
