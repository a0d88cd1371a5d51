/**
 * What the pod syncer (./pod-sync) and its container starter (./container-start) share: their
 * dependencies, what a worker remembers about its pod between syncs, a sync's result, and the
 * pod naming and grace period rules of upstream's kubelet.
 */
import type { EventRecorder } from '../../common/events/recorder';
import type { RuntimeHandlerLookup } from './runtime-classes';
import type { RuntimeService } from '../cri';
import type { DeviceRunOptions } from '../devices/container-allocation';
import type { Clock } from '../platform/clock';
import type { Log } from '../platform/logger';
import type { ResolverConfig } from '../dns/resolv-conf';
import type { SeccompResolver } from '../seccomp/resolve';
import type { ConfigObjectGetter } from './config-objects';
import type { ImageManager } from './image-manager';
import type { PodCgroups } from './pod-cgroups';
import type { Pod, PodStatus } from '../api/core-v1';
import type { ProbeManager } from './probe-manager';
import type { VolumeManager } from './volumes';

export interface NodeFacts {
  name: string;
  /** The node's IPs (InternalIP addresses), first one primary. */
  hostIPs: () => string[];
  cpuMilli: number;
  memoryBytes: number;
}

/**
 * Device plugins' devices for pods (DeviceManager). admitPod gives every container of the pod its
 * devices or rejects DeviceAdmissionError (the pod fails with UnexpectedAdmissionError);
 * runOptions says what CreateContainer adds for a container's devices (rejects Error when a
 * plugin's PreStartContainer fails); releasePod frees a pod's devices. All idempotent.
 */
export interface DeviceAllocator {
  admitPod(pod: Pod, signal?: AbortSignal): Promise<void>;
  runOptions(podUid: string, containerName: string): Promise<DeviceRunOptions | undefined>;
  releasePod(podUid: string): Promise<void>;
}

export interface PodSyncDeps {
  runtime: RuntimeService;
  /** Prefix of containerIDs in status ("containerd"). */
  runtimeName: string;
  clock: Clock;
  log: Log;
  images: ImageManager;
  volumes: VolumeManager;
  seccomp: SeccompResolver;
  probes: ProbeManager;
  objects: ConfigObjectGetter;
  /** runtimeClassName → CRI handler; without it a pod naming a class gets the runtime's default handler. */
  runtimeClasses?: RuntimeHandlerLookup;
  cgroups: PodCgroups;
  node: NodeFacts;
  podLogsDir: string;
  clusterDNS: readonly string[];
  clusterDomain: string;
  /** The node's resolver configuration for host-DNS pods (resolvConf); unset or undefined: the runtime copies the node's resolv.conf. */
  hostDns?: () => Promise<ResolverConfig | undefined>;
  /** Deadline of ordinary CRI calls (runtimeRequestTimeout). */
  callTimeoutMs: number;
  /** Device plugins; without it extended resources are not handed out. */
  devices?: DeviceAllocator;
  /** Where the pod and container events go (upstream's kubelet recorder); default none. */
  recorder?: EventRecorder;
}

/** What a worker remembers about its pod between syncs. */
export interface PodSyncState {
  startTime: number;
  /** Waiting reasons of containers that could not be started, by name. */
  waiting: Map<string, { reason: string; message: string }>;
  /** Set once the agent failed the pod itself (activeDeadlineSeconds). */
  failure?: { reason: string; message: string };
  /** The status last computed (and the API's before that). */
  lastStatus?: PodStatus;
  /** Set once the pod's devices were allocated (or it needs none). */
  admitted?: boolean;
}

export interface SyncResult {
  status: PodStatus;
  /** Sync again after this long even without an event (back-offs ending, retries). */
  requeueMs?: number;
}

/** Upstream minimumGracePeriodInSeconds for killing a container. */
const MIN_GRACE_SECONDS = 2;
/** Retry delay after a failure that has no back-off of its own (sandbox, volumes). */
export const RETRY_MS = 10_000;

export function podDesc(pod: Pod): string {
  return `${pod.metadata.name ?? ''}_${pod.metadata.namespace ?? 'default'}(${pod.metadata.uid ?? ''})`;
}

/** The grace period of a kill: the pod's deletion grace period, else its spec's, else 30 s. */
export function gracePeriodSeconds(pod: Pod, override?: number): number {
  const g = override ?? pod.metadata.deletionGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? 30;
  return Math.max(MIN_GRACE_SECONDS, g);
}
