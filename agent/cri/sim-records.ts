/**
 * The simulator's stored sandboxes and containers, and the CRI views built from them (status,
 * list entries, stats). Pure functions of a record and the time, so every RPC reports the same
 * facts the same way.
 */
import path from 'node:path';
import type { ContainerBehaviour } from './sim-options';
import type {
  Container,
  ContainerConfig,
  ContainerState,
  ContainerStats,
  ContainerStatus,
  Image,
  LinuxContainerResources,
  PodSandbox,
  PodSandboxConfig,
  PodSandboxState,
  PodSandboxStatus,
  PodSandboxStats,
  StringMap,
} from './types';

export interface SandboxRec {
  id: string;
  config: PodSandboxConfig;
  runtimeHandler: string;
  state: PodSandboxState;
  createdAt: number;
  /** Assigned pod IP ('' for host network); reported only while READY. */
  ip: string;
  reservedName: string;
  /** Bytes the pod's network received and sent: what port-forward connections carried (the echo sends back what it gets). */
  rxBytes?: number;
  txBytes?: number;
}

export interface ContainerRec {
  id: string;
  sandboxId: string;
  config: ContainerConfig;
  image: Image;
  behaviour: ContainerBehaviour;
  state: ContainerState;
  createdAt: number;
  startedAt: number;
  finishedAt: number;
  exitCode: number;
  reason: string;
  message: string;
  /** When a running container will exit by itself (behaviour.exitAfterMs). */
  exitAt?: number;
  resources?: LinuxContainerResources;
  reservedName: string;
  /** Absolute log file path ('' when the sandbox has no log directory). */
  logPath: string;
}

/** What ImageRef shows: the repo digest when known, else the ID (as containerd for imported images). */
export function imageRef(i: Image): string {
  return i.repoDigests[0] ?? i.id;
}

export function labelsMatch(labels: StringMap | undefined, selector: StringMap | undefined): boolean {
  return labelMatcher(selector)(labels);
}

/**
 * labelsMatch with the selector read once: a list call tests every record, and turning the
 * selector into entries per record was the simulator's largest cost with 1,000 pods.
 */
export function labelMatcher(selector: StringMap | undefined): (labels: StringMap | undefined) => boolean {
  const entries = selector ? Object.entries(selector) : [];
  if (entries.length === 0) return () => true;
  return (labels) => {
    if (!labels) return false;
    for (const [k, v] of entries) if (labels[k] !== v) return false;
    return true;
  };
}

export function hostNetwork(config: PodSandboxConfig): boolean {
  return config.linux?.securityContext?.namespaceOptions?.network === 'NODE';
}

export function sandboxListItem(s: SandboxRec): PodSandbox {
  return {
    id: s.id,
    metadata: { ...s.config.metadata },
    state: s.state,
    createdAt: s.createdAt,
    labels: { ...(s.config.labels ?? {}) },
    annotations: { ...(s.config.annotations ?? {}) },
    runtimeHandler: s.runtimeHandler,
  };
}

export function sandboxStatusOf(s: SandboxRec): PodSandboxStatus {
  const status: PodSandboxStatus = {
    ...sandboxListItem(s),
    // As containerd: no IP once the network namespace is gone.
    ip: s.state === 'SANDBOX_READY' ? s.ip : '',
    additionalIps: [],
  };
  // Absent modes mean POD, as on the wire.
  const ns = s.config.linux?.securityContext?.namespaceOptions;
  status.namespaceOptions = {};
  if (ns?.network && ns.network !== 'POD') status.namespaceOptions.network = ns.network;
  if (ns?.pid && ns.pid !== 'POD') status.namespaceOptions.pid = ns.pid;
  if (ns?.ipc && ns.ipc !== 'POD') status.namespaceOptions.ipc = ns.ipc;
  return status;
}

export function containerListItem(c: ContainerRec): Container {
  return {
    id: c.id,
    podSandboxId: c.sandboxId,
    metadata: { ...c.config.metadata },
    image: { image: c.config.image.image },
    imageRef: imageRef(c.image),
    imageId: c.image.id,
    state: c.state,
    createdAt: c.createdAt,
    labels: { ...(c.config.labels ?? {}) },
    annotations: { ...(c.config.annotations ?? {}) },
  };
}

export function containerStatusOf(c: ContainerRec): ContainerStatus {
  const status: ContainerStatus = {
    id: c.id,
    metadata: { ...c.config.metadata },
    state: c.state,
    createdAt: c.createdAt,
    startedAt: c.startedAt,
    finishedAt: c.finishedAt,
    exitCode: c.exitCode,
    // As containerd: the image's first tag, and its digest (or ID) as the reference.
    image: { image: c.image.repoTags[0] ?? c.image.id },
    imageRef: imageRef(c.image),
    imageId: c.image.id,
    reason: c.reason,
    message: c.message,
    labels: { ...(c.config.labels ?? {}) },
    annotations: { ...(c.config.annotations ?? {}) },
    mounts: (c.config.mounts ?? []).map((m) => ({ ...m })),
    logPath: c.logPath,
    stopSignal: c.config.stopSignal ?? 'SIGNAL_RUNTIME_DEFAULT',
  };
  if (c.resources) status.resources = { ...c.resources };
  const sc = c.config.linux?.securityContext;
  status.user = { uid: sc?.runAsUser ?? c.image.uid ?? 0, gid: sc?.runAsGroup ?? 0, supplementalGroups: [...(sc?.supplementalGroups ?? [])] };
  return status;
}

/** Bytes in the writable layer: a little once the container has run. */
export function writableBytes(c: ContainerRec): number {
  return c.startedAt === 0 ? 0 : 4096;
}

/** Deterministic usage: CPU time accrues at behaviour.cpuNanoCores while running; memory is flat. */
export function statsOf(c: ContainerRec, now: number, root: string): ContainerStats {
  const running = c.state === 'CONTAINER_RUNNING';
  const nanoCores = c.behaviour.cpuNanoCores ?? 10_000_000;
  const ranMs = c.startedAt === 0 ? 0 : (running ? now : c.finishedAt) - c.startedAt;
  const ws = running ? (c.behaviour.memoryBytes ?? 4 * 1024 * 1024) : 0;
  const limit = c.resources?.memoryLimitInBytes ?? 0;
  const stats: ContainerStats = {
    id: c.id,
    metadata: { ...c.config.metadata },
    labels: { ...(c.config.labels ?? {}) },
    annotations: { ...(c.config.annotations ?? {}) },
    cpu: { timestamp: now, usageCoreNanoSeconds: Math.round((nanoCores * Math.max(0, ranMs)) / 1000), usageNanoCores: running ? nanoCores : 0 },
    memory: { timestamp: now, workingSetBytes: ws, usageBytes: ws, rssBytes: ws, pageFaults: 0, majorPageFaults: 0 },
    writableLayer: { timestamp: now, mountpoint: path.join(root, 'snapshots'), usedBytes: writableBytes(c), inodesUsed: 8 },
  };
  if (limit > 0 && stats.memory) stats.memory.availableBytes = Math.max(0, limit - ws);
  return stats;
}

/**
 * ListPodSandboxStats' entry for a ready sandbox: CPU and memory are its running containers' sums
 * (the simulator has no pause process to add), the network is eth0 with what port-forward carried
 * (none for host-network sandboxes, whose interfaces are the node's), the processes its running
 * containers and the pause process.
 */
export function sandboxStatsOf(s: SandboxRec, containers: ContainerStats[], now: number): PodSandboxStats {
  const total = (pick: (c: ContainerStats) => number | undefined): number => containers.reduce((n, c) => n + (pick(c) ?? 0), 0);
  const m = s.config.metadata;
  const out: PodSandboxStats = {
    id: s.id,
    metadata: { name: m.name, uid: m.uid, namespace: m.namespace, attempt: m.attempt },
    labels: { ...(s.config.labels ?? {}) },
    annotations: { ...(s.config.annotations ?? {}) },
    cpu: { timestamp: now, usageCoreNanoSeconds: total((c) => c.cpu?.usageCoreNanoSeconds), usageNanoCores: total((c) => c.cpu?.usageNanoCores) },
    memory: { timestamp: now, workingSetBytes: total((c) => c.memory?.workingSetBytes), usageBytes: total((c) => c.memory?.usageBytes), rssBytes: total((c) => c.memory?.rssBytes), pageFaults: 0, majorPageFaults: 0 },
    process: { timestamp: now, processCount: containers.length + 1 },
    containers,
  };
  if (!hostNetwork(s.config)) {
    const eth0 = { name: 'eth0', rxBytes: s.rxBytes ?? 0, rxErrors: 0, txBytes: s.txBytes ?? 0, txErrors: 0 };
    out.network = { timestamp: now, defaultInterface: eth0, interfaces: [{ ...eth0 }] };
  }
  return out;
}

