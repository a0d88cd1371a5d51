/**
 * CRI runtime.v1 resource usage (ContainerStats, ListContainerStats, ListPodSandboxStats, and the filesystem usage
 * ImageFsInfo shares) as the agent sees them (conventions: ./types).
 */
import type { ContainerMetadata, PodSandboxMetadata, StringMap } from './container-types';

// ------------------------------------------------------------------ stats

export interface FilesystemUsage {
  timestamp: number;
  mountpoint: string;
  usedBytes?: number;
  inodesUsed?: number;
}

export interface CpuUsage {
  timestamp: number;
  /** Cumulative CPU time in core-nanoseconds. */
  usageCoreNanoSeconds?: number;
  /** Average over the runtime's sampling window, in nanocores. */
  usageNanoCores?: number;
}

export interface MemoryUsage {
  timestamp: number;
  workingSetBytes?: number;
  availableBytes?: number;
  usageBytes?: number;
  rssBytes?: number;
  pageFaults?: number;
  majorPageFaults?: number;
}

export interface SwapUsage {
  timestamp: number;
  swapAvailableBytes?: number;
  swapUsageBytes?: number;
}

export interface ContainerStats {
  id: string;
  metadata: ContainerMetadata;
  labels: StringMap;
  annotations: StringMap;
  cpu?: CpuUsage;
  memory?: MemoryUsage;
  writableLayer?: FilesystemUsage;
  swap?: SwapUsage;
}

export interface ContainerStatsFilter {
  id?: string;
  podSandboxId?: string;
  labelSelector?: StringMap;
}

// ------------------------------------------------------------------ pod sandbox stats

export interface InterfaceUsage {
  name: string;
  rxBytes?: number;
  rxErrors?: number;
  txBytes?: number;
  txErrors?: number;
}

export interface NetworkUsage {
  timestamp: number;
  defaultInterface?: InterfaceUsage;
  interfaces: InterfaceUsage[];
}

export interface ProcessUsage {
  timestamp: number;
  processCount?: number;
}

/** ListPodSandboxStats' entry (Linux): the pod's cgroup usage, its network namespace's interfaces, and its containers' stats. */
export interface PodSandboxStats {
  id: string;
  metadata: PodSandboxMetadata;
  labels: StringMap;
  annotations: StringMap;
  cpu?: CpuUsage;
  memory?: MemoryUsage;
  network?: NetworkUsage;
  process?: ProcessUsage;
  containers: ContainerStats[];
}

export interface PodSandboxStatsFilter {
  id?: string;
  labelSelector?: StringMap;
}
