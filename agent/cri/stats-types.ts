/**
 * CRI runtime.v1 resource usage (ContainerStats, ListContainerStats, and the filesystem usage
 * ImageFsInfo shares) as the agent sees them (conventions: ./types).
 */
import type { ContainerMetadata, StringMap } from './container-types';

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
