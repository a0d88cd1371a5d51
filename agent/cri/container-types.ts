/**
 * CRI runtime.v1 sandbox and container objects as the agent sees them (the RuntimeService
 * lifecycle RPCs: RunPodSandbox ... ContainerStatus, ExecSync, and the container events), with the
 * small types they share. Conventions (camelCase, units, milliseconds) are those of ./types.
 */


export type ContainerState = 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';
export type PodSandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
/** POD: shared by the pod; CONTAINER: the container's own; NODE: the host's; TARGET: another container's (targetId). */
export type NamespaceMode = 'POD' | 'CONTAINER' | 'NODE' | 'TARGET';
export type Protocol = 'TCP' | 'UDP' | 'SCTP';
export type MountPropagation = 'PROPAGATION_PRIVATE' | 'PROPAGATION_HOST_TO_CONTAINER' | 'PROPAGATION_BIDIRECTIONAL';
export type SupplementalGroupsPolicy = 'Merge' | 'Strict';
export type SecurityProfileType = 'RuntimeDefault' | 'Unconfined' | 'Localhost';
export type ContainerEventType =
  | 'CONTAINER_CREATED_EVENT'
  | 'CONTAINER_STARTED_EVENT'
  | 'CONTAINER_STOPPED_EVENT'
  | 'CONTAINER_DELETED_EVENT';
/** Upstream's Signal enum names (SIGNAL_SIGTERM ...); SIGNAL_RUNTIME_DEFAULT lets the runtime choose. */
export type StopSignal = string;

export type StringMap = Record<string, string>;

// ------------------------------------------------------------------ shared small types

export interface IdMapping {
  hostId: number;
  containerId: number;
  length: number;
}

export interface SELinuxOption {
  user?: string;
  role?: string;
  type?: string;
  level?: string;
}

export interface SecurityProfile {
  profileType: SecurityProfileType;
  /** For Localhost: the profile's absolute path on the node. */
  localhostRef?: string;
}

export interface PortMapping {
  protocol?: Protocol;
  containerPort: number;
  hostPort?: number;
  hostIp?: string;
}

export interface ImageSpec {
  /** Image reference as given, or an image ID. */
  image: string;
  annotations?: StringMap;
  /** What the pod spec said, before resolution (for runtimes' messages). */
  userSpecifiedImage?: string;
  runtimeHandler?: string;
  imageRef?: string;
}

export interface Mount {
  containerPath: string;
  hostPath: string;
  readonly?: boolean;
  selinuxRelabel?: boolean;
  propagation?: MountPropagation;
  uidMappings?: IdMapping[];
  gidMappings?: IdMapping[];
  recursiveReadOnly?: boolean;
  /** An image volume; hostPath is then empty. */
  image?: ImageSpec;
  imageSubPath?: string;
  mountOptions?: string[];
}

export interface UserNamespace {
  mode: NamespaceMode;
  uids?: IdMapping[];
  gids?: IdMapping[];
}

export interface NamespaceOption {
  network?: NamespaceMode;
  pid?: NamespaceMode;
  ipc?: NamespaceMode;
  /** Container whose namespace is joined when a mode is TARGET. */
  targetId?: string;
  usernsOptions?: UserNamespace;
}

export interface HugepageLimit {
  pageSize: string;
  limit: number;
}

/** Linux resources; a zero/absent value means "not set" as on the wire. */
export interface LinuxContainerResources {
  cpuPeriod?: number;
  cpuQuota?: number;
  cpuShares?: number;
  memoryLimitInBytes?: number;
  /** Never negative from svc-node: unprivileged runtimes cannot lower it (restrict_oom_score_adj). */
  oomScoreAdj?: number;
  cpusetCpus?: string;
  cpusetMems?: string;
  hugepageLimits?: HugepageLimit[];
  /** cgroup v2 unified keys. */
  unified?: StringMap;
  memorySwapLimitInBytes?: number;
}

// ------------------------------------------------------------------ sandboxes

export interface PodSandboxMetadata {
  name: string;
  uid: string;
  namespace: string;
  attempt: number;
}

export interface DnsConfig {
  servers?: string[];
  searches?: string[];
  options?: string[];
}

export interface LinuxSandboxSecurityContext {
  namespaceOptions?: NamespaceOption;
  selinuxOptions?: SELinuxOption;
  runAsUser?: number;
  runAsGroup?: number;
  readonlyRootfs?: boolean;
  supplementalGroups?: number[];
  supplementalGroupsPolicy?: SupplementalGroupsPolicy;
  privileged?: boolean;
  seccomp?: SecurityProfile;
  apparmor?: SecurityProfile;
}

export interface LinuxPodSandboxConfig {
  cgroupParent?: string;
  securityContext?: LinuxSandboxSecurityContext;
  sysctls?: StringMap;
  overhead?: LinuxContainerResources;
  resources?: LinuxContainerResources;
}

export interface PodSandboxConfig {
  metadata: PodSandboxMetadata;
  /** Empty for host-network pods (containerd rejects a hostname with host network). */
  hostname?: string;
  /** Directory the runtime writes container logs under (container logPath is relative to it). */
  logDirectory?: string;
  dnsConfig?: DnsConfig;
  portMappings?: PortMapping[];
  labels?: StringMap;
  annotations?: StringMap;
  linux?: LinuxPodSandboxConfig;
}

export interface PodSandbox {
  id: string;
  metadata: PodSandboxMetadata;
  state: PodSandboxState;
  createdAt: number;
  labels: StringMap;
  annotations: StringMap;
  runtimeHandler: string;
}

export interface PodSandboxStatus {
  id: string;
  metadata: PodSandboxMetadata;
  state: PodSandboxState;
  createdAt: number;
  /** Primary pod IP; '' for host-network sandboxes. */
  ip: string;
  additionalIps: string[];
  /** Namespace modes the sandbox was created with, when the runtime reports them. */
  namespaceOptions?: NamespaceOption;
  labels: StringMap;
  annotations: StringMap;
  runtimeHandler: string;
}

export interface PodSandboxStatusResult {
  status: PodSandboxStatus;
  /** Verbose runtime information. */
  info: StringMap;
  /** Filled only by runtimes with evented status; usually empty. */
  containersStatuses: ContainerStatus[];
  /** When the runtime produced this status (ms); 0 if not reported. */
  timestamp: number;
}

export interface PodSandboxFilter {
  id?: string;
  state?: PodSandboxState;
  labelSelector?: StringMap;
}

// ------------------------------------------------------------------ containers

export interface ContainerMetadata {
  name: string;
  attempt: number;
}

export interface KeyValue {
  key: string;
  value: string;
}

export interface Device {
  containerPath: string;
  hostPath: string;
  permissions: string;
}

export interface Capability {
  addCapabilities?: string[];
  dropCapabilities?: string[];
  addAmbientCapabilities?: string[];
}

export interface LinuxContainerSecurityContext {
  capabilities?: Capability;
  privileged?: boolean;
  namespaceOptions?: NamespaceOption;
  selinuxOptions?: SELinuxOption;
  runAsUser?: number;
  runAsGroup?: number;
  runAsUsername?: string;
  readonlyRootfs?: boolean;
  supplementalGroups?: number[];
  supplementalGroupsPolicy?: SupplementalGroupsPolicy;
  noNewPrivs?: boolean;
  maskedPaths?: string[];
  readonlyPaths?: string[];
  seccomp?: SecurityProfile;
  apparmor?: SecurityProfile;
}

export interface LinuxContainerConfig {
  resources?: LinuxContainerResources;
  securityContext?: LinuxContainerSecurityContext;
}

export interface ContainerConfig {
  metadata: ContainerMetadata;
  image: ImageSpec;
  command?: string[];
  args?: string[];
  workingDir?: string;
  envs?: KeyValue[];
  mounts?: Mount[];
  devices?: Device[];
  labels?: StringMap;
  annotations?: StringMap;
  /** Relative to the sandbox's logDirectory. */
  logPath?: string;
  stdin?: boolean;
  stdinOnce?: boolean;
  tty?: boolean;
  linux?: LinuxContainerConfig;
  cdiDevices?: string[];
  stopSignal?: StopSignal;
}

export interface Container {
  id: string;
  podSandboxId: string;
  metadata: ContainerMetadata;
  image: ImageSpec;
  /** Digest or ID of the image the container runs. */
  imageRef: string;
  imageId: string;
  state: ContainerState;
  createdAt: number;
  labels: StringMap;
  annotations: StringMap;
}

export interface ContainerFilter {
  id?: string;
  state?: ContainerState;
  podSandboxId?: string;
  labelSelector?: StringMap;
}

export interface ContainerStatus {
  id: string;
  metadata: ContainerMetadata;
  state: ContainerState;
  createdAt: number;
  startedAt: number;
  finishedAt: number;
  exitCode: number;
  image: ImageSpec;
  imageRef: string;
  imageId: string;
  /** Completed, Error, OOMKilled ... as the runtime says. */
  reason: string;
  message: string;
  labels: StringMap;
  annotations: StringMap;
  mounts: Mount[];
  /** Absolute path of the container's log file. */
  logPath: string;
  resources?: LinuxContainerResources;
  user?: { uid: number; gid: number; supplementalGroups: number[] };
  stopSignal: StopSignal;
}

export interface ContainerStatusResult {
  status: ContainerStatus;
  info: StringMap;
}

export interface ExecSyncResult {
  stdout: Buffer;
  stderr: Buffer;
  exitCode: number;
}

// ------------------------------------------------------------------ events

export interface ContainerEvent {
  /** Container ID, or the sandbox ID for sandbox lifecycle events. */
  containerId: string;
  type: ContainerEventType;
  createdAt: number;
  podSandboxStatus?: PodSandboxStatus;
  containersStatuses: ContainerStatus[];
}
