/**
 * The agent's seam to a container runtime: CRI runtime.v1 RuntimeService and ImageService as
 * promises over the agent's own types (./types). Implementations: GrpcRuntimeService (containerd,
 * CRI-O over unix sockets) and Simulator (in-process, `sim://`). Every method rejects only with
 * RuntimeError (./errors); semantics follow upstream's CRI contract, noted per method.
 */
import type {
  AuthConfig,
  Container,
  ContainerConfig,
  ContainerEvent,
  ContainerFilter,
  ContainerStats,
  ContainerStatsFilter,
  ContainerStatusResult,
  ExecSyncResult,
  Image,
  ImageFsInfo,
  ImageSpec,
  ImageStatusResult,
  LinuxContainerResources,
  PodSandbox,
  PodSandboxConfig,
  PodSandboxFilter,
  PodSandboxStats,
  PodSandboxStatsFilter,
  PodSandboxStatusResult,
  RuntimeStatus,
  VersionInfo,
} from './types';
import type { LocalStreamTarget, StreamAttachRequest, StreamExecRequest, StreamPortForwardRequest } from './stream-types';

export interface CallOptions {
  /** Deadline for this call in ms, overriding the implementation's default for the RPC. */
  timeoutMs?: number;
  /** Aborting cancels the call; it then rejects with RuntimeError Canceled. */
  signal?: AbortSignal;
}

/** The CRI API version svc-node speaks; Version must report it. */
export const CRI_API_VERSION = 'v1';

export interface RuntimeService {
  /** Asks Version and checks runtimeApiVersion is v1; waits for the socket up to the connect timeout. Rejects UnsupportedVersion, Unavailable, DeadlineExceeded. Idempotent. */
  connect(opts?: CallOptions): Promise<VersionInfo>;
  /** The runtime's name and versions. Never blocks on a missing socket (rejects Unavailable). */
  version(opts?: CallOptions): Promise<VersionInfo>;
  /** Runtime conditions (RuntimeReady, NetworkReady); verbose adds runtime info. */
  status(verbose?: boolean, opts?: CallOptions): Promise<RuntimeStatus>;

  /** Creates and starts a sandbox ready for containers; returns its ID. Not idempotent: a second call makes another sandbox (or fails on a reserved name). */
  runPodSandbox(config: PodSandboxConfig, runtimeHandler?: string, opts?: CallOptions): Promise<string>;
  /** Stops the sandbox, killing its containers and tearing down its network. Idempotent for stopped sandboxes; NotFound for unknown IDs on containerd. */
  stopPodSandbox(podSandboxId: string, opts?: CallOptions): Promise<void>;
  /** Removes the sandbox and its containers, stopping them first. Idempotent: an unknown ID succeeds. */
  removePodSandbox(podSandboxId: string, opts?: CallOptions): Promise<void>;
  /** The sandbox's status. Rejects NotFound for unknown IDs. */
  podSandboxStatus(podSandboxId: string, verbose?: boolean, opts?: CallOptions): Promise<PodSandboxStatusResult>;
  /** Sandboxes matching every given filter field (all when no filter). */
  listPodSandbox(filter?: PodSandboxFilter, opts?: CallOptions): Promise<PodSandbox[]>;

  /** Creates a container in a ready sandbox (state CREATED); returns its ID. sandboxConfig is the one the sandbox was run with. */
  createContainer(podSandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig, opts?: CallOptions): Promise<string>;
  /** Starts a CREATED container. Rejects for any other state. */
  startContainer(containerId: string, opts?: CallOptions): Promise<void>;
  /** Sends the stop signal, waits up to timeoutSeconds, then kills; 0 kills at once. Resolves when the container has exited. Idempotent for exited containers. */
  stopContainer(containerId: string, timeoutSeconds: number, opts?: CallOptions): Promise<void>;
  /** Removes the container, killing it if it runs. Idempotent: an unknown ID succeeds. */
  removeContainer(containerId: string, opts?: CallOptions): Promise<void>;
  /** Containers matching every given filter field (all when no filter). */
  listContainers(filter?: ContainerFilter, opts?: CallOptions): Promise<Container[]>;
  /** The container's status. Rejects NotFound for unknown IDs. */
  containerStatus(containerId: string, verbose?: boolean, opts?: CallOptions): Promise<ContainerStatusResult>;
  /** Changes a running container's Linux resources (in-place resize). */
  updateContainerResources(containerId: string, resources: LinuxContainerResources, opts?: CallOptions): Promise<void>;
  /** Asks the runtime to reopen the container's log file (after rotation). Rejects if the container is not running. */
  reopenContainerLog(containerId: string, opts?: CallOptions): Promise<void>;

  /** Runs cmd in a running container and waits (timeoutSeconds 0: no limit) for its output and exit code. A non-zero exit code is a result, not an error. */
  execSync(containerId: string, cmd: string[], timeoutSeconds: number, opts?: CallOptions): Promise<ExecSyncResult>;
  /** Resource usage of one container. Rejects NotFound for unknown IDs. */
  containerStats(containerId: string, opts?: CallOptions): Promise<ContainerStats>;
  /** Resource usage of every container matching the filter. */
  listContainerStats(filter?: ContainerStatsFilter, opts?: CallOptions): Promise<ContainerStats[]>;
  /**
   * Resource usage of every ready sandbox matching the filter: the pod's cgroup CPU and memory, its
   * network namespace's interfaces, its process count and its running containers' stats. Rejects
   * Unimplemented on runtimes without it; the caller then sums the containers' stats, as the
   * kubelet without cAdvisor.
   */
  listPodSandboxStats(filter?: PodSandboxStatsFilter, opts?: CallOptions): Promise<PodSandboxStats[]>;
  /** Checkpoints a running container into a tar archive at `location` (a path on the node). Rejects Unimplemented on runtimes without checkpointing (containerd 1.6). */
  checkpointContainer(containerId: string, location: string, timeoutSeconds: number, opts?: CallOptions): Promise<void>;
  /** Prepares an exec on the runtime's stream server; resolves the URL the client's stream goes to (single use, short-lived). */
  exec(req: StreamExecRequest, opts?: CallOptions): Promise<string>;
  /** Prepares an attach to the container's main process; resolves the stream URL. */
  attach(req: StreamAttachRequest, opts?: CallOptions): Promise<string>;
  /** Prepares a port-forward into the sandbox's network namespace; resolves the stream URL. */
  portForward(req: StreamPortForwardRequest, opts?: CallOptions): Promise<string>;
  /** For runtimes that serve streams in-process (the simulator): the target behind a URL they answered; undefined for a URL to dial. */
  localStream?(url: string): LocalStreamTarget | undefined;
  /**
   * Streams container lifecycle events until opts.signal aborts (then the iteration ends quietly).
   * The iteration throws Unimplemented when the runtime has no event stream (containerd 1.6), and
   * Unavailable when the runtime goes away; callers then fall back to periodic relisting.
   */
  getContainerEvents(opts?: CallOptions): AsyncIterable<ContainerEvent>;

  /** Images matching the filter (all when none). */
  listImages(filter?: ImageSpec, opts?: CallOptions): Promise<Image[]>;
  /** The image if present; `image` undefined when absent (not an error). */
  imageStatus(image: ImageSpec, verbose?: boolean, opts?: CallOptions): Promise<ImageStatusResult>;
  /** Pulls the image (a long call; its default deadline is longer); returns the image reference (digest or ID). Rejects when the registry does not have it. */
  pullImage(image: ImageSpec, auth?: AuthConfig, sandboxConfig?: PodSandboxConfig, opts?: CallOptions): Promise<string>;
  /** Removes the image. Idempotent: an absent image succeeds. Rejects if a container uses it (runtime-dependent). */
  removeImage(image: ImageSpec, opts?: CallOptions): Promise<void>;
  /** Usage of the filesystems holding images and writable layers. */
  imageFsInfo(opts?: CallOptions): Promise<ImageFsInfo>;

  /** Releases connections and timers; later calls reject Unavailable. Idempotent. */
  close(): void;
}
