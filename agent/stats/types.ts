/**
 * The kubelet's Summary API (upstream `k8s.io/kubelet/pkg/apis/stats/v1alpha1`), the JSON shape of
 * GET /stats/summary: what metrics-server, `kubectl get --raw .../proxy/stats/summary` and
 * monitoring agents read. Times are RFC 3339 strings; every number is optional, as upstream's
 * pointers (a reading the node cannot make is left out, never reported as 0).
 */

export interface CpuStats {
  time: string;
  /** Average use over the last sampling window, in billionths of a core. */
  usageNanoCores?: number;
  /** Cumulative CPU time, in core-nanoseconds. */
  usageCoreNanoSeconds?: number;
}

export interface MemoryStats {
  time: string;
  availableBytes?: number;
  usageBytes?: number;
  workingSetBytes?: number;
  rssBytes?: number;
  pageFaults?: number;
  majorPageFaults?: number;
}

export interface InterfaceStats {
  name: string;
  rxBytes?: number;
  rxErrors?: number;
  txBytes?: number;
  txErrors?: number;
}

/** Upstream NetworkStats: the default interface inline, every interface in `interfaces`. */
export interface NetworkStats extends Partial<InterfaceStats> {
  time: string;
  interfaces?: InterfaceStats[];
}

export interface FsStats {
  time: string;
  availableBytes?: number;
  capacityBytes?: number;
  usedBytes?: number;
  inodesFree?: number;
  inodes?: number;
  inodesUsed?: number;
}

export interface ContainerStats {
  name: string;
  startTime: string;
  cpu?: CpuStats;
  memory?: MemoryStats;
  rootfs?: FsStats;
  logs?: FsStats;
}

export interface PodReference {
  name: string;
  namespace: string;
  uid: string;
}

export interface PodStats {
  podRef: PodReference;
  startTime: string;
  containers: ContainerStats[];
  cpu?: CpuStats;
  memory?: MemoryStats;
  network?: NetworkStats;
  volume?: Array<FsStats & { name: string }>;
  'ephemeral-storage'?: FsStats;
}

export interface RuntimeStats {
  imageFs?: FsStats;
  containerFs?: FsStats;
}

export interface NodeStats {
  nodeName: string;
  startTime: string;
  cpu?: CpuStats;
  memory?: MemoryStats;
  network?: NetworkStats;
  fs?: FsStats;
  runtime?: RuntimeStats;
}

export interface Summary {
  node: NodeStats;
  pods: PodStats[];
}
