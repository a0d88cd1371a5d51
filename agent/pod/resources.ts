/**
 * From a container's resources to CRI Linux resources, as upstream's kuberuntime
 * (generateLinuxContainerResources): CPU requests become cpu shares (1024 per core, at least 2),
 * CPU limits a CFS quota over a 100 ms period (at least 1 ms), the memory limit the memory
 * limit in bytes. Plus the QoS class and the OOM score adjustment.
 *
 * Deliberate difference: upstream gives Guaranteed pods -997; svc-node never asks for a negative
 * oom_score_adj (runtimes without CAP_SYS_RESOURCE run with restrict_oom_score_adj and fail or
 * clamp), so Guaranteed containers get 0, below every Burstable and BestEffort container.
 */
import { parseQuantity } from '../config/quantity';
import type { LinuxContainerResources } from '../cri';
import type { Container, Pod } from '../api/core-v1';

export const CPU_PERIOD_US = 100_000;
const MIN_SHARES = 2;
const MIN_QUOTA_US = 1000;

export type QosClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

function quantity(v: string | number | undefined): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number') return v;
  try {
    return parseQuantity(v);
  } catch {
    return undefined;
  }
}

/** CPU in millicores, memory in bytes; undefined when not set or unparseable. */
export function containerRequests(c: Container): { cpuMilli?: number; memory?: number } {
  const limits = c.resources?.limits ?? {};
  const requests = c.resources?.requests ?? {};
  // Requests default to limits (upstream API defaulting; static pods are not defaulted by a server).
  const cpu = quantity(requests['cpu'] ?? limits['cpu']);
  const mem = quantity(requests['memory'] ?? limits['memory']);
  const out: { cpuMilli?: number; memory?: number } = {};
  if (cpu !== undefined) out.cpuMilli = Math.ceil(cpu * 1000);
  if (mem !== undefined) out.memory = Math.round(mem);
  return out;
}

export function containerLimits(c: Container): { cpuMilli?: number; memory?: number } {
  const limits = c.resources?.limits ?? {};
  const cpu = quantity(limits['cpu']);
  const mem = quantity(limits['memory']);
  const out: { cpuMilli?: number; memory?: number } = {};
  if (cpu !== undefined) out.cpuMilli = Math.ceil(cpu * 1000);
  if (mem !== undefined) out.memory = Math.round(mem);
  return out;
}

/** Upstream qos.GetPodQOS: Guaranteed when every container has equal, non-zero CPU and memory requests and limits. */
export function podQos(pod: Pod): QosClass {
  const all = [...(pod.spec.initContainers ?? []), ...pod.spec.containers];
  let any = false;
  let guaranteed = true;
  for (const c of all) {
    const req = containerRequests(c);
    const lim = containerLimits(c);
    for (const r of ['cpuMilli', 'memory'] as const) {
      if ((req[r] ?? 0) > 0 || (lim[r] ?? 0) > 0) any = true;
      if (!lim[r] || req[r] !== lim[r]) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

/** Upstream GetContainerOOMScoreAdjust, never below 0 (see the file comment). */
export function oomScoreAdj(pod: Pod, c: Container, memoryCapacity: number): number {
  const qos = podQos(pod);
  if (qos === 'Guaranteed') return 0;
  if (qos === 'BestEffort') return 1000;
  const request = containerRequests(c).memory ?? 0;
  if (memoryCapacity <= 0) return 999;
  const adj = 1000 - Math.floor((1000 * request) / memoryCapacity);
  // Burstable stays above Guaranteed and below BestEffort (upstream: at least 2, at most 999).
  return Math.min(999, Math.max(2, adj));
}

/** The container's CRI Linux resources. */
export function linuxResources(pod: Pod, c: Container, memoryCapacity: number): LinuxContainerResources {
  const req = containerRequests(c);
  const lim = containerLimits(c);
  const r: LinuxContainerResources = {};
  // Shares from the request; no request means the minimum (upstream: 2 shares for BestEffort).
  r.cpuShares = req.cpuMilli !== undefined ? Math.max(MIN_SHARES, Math.floor((req.cpuMilli * 1024) / 1000)) : MIN_SHARES;
  if (lim.cpuMilli !== undefined && lim.cpuMilli > 0) {
    r.cpuPeriod = CPU_PERIOD_US;
    r.cpuQuota = Math.max(MIN_QUOTA_US, Math.floor((lim.cpuMilli * CPU_PERIOD_US) / 1000));
  }
  if (lim.memory !== undefined && lim.memory > 0) r.memoryLimitInBytes = lim.memory;
  r.oomScoreAdj = oomScoreAdj(pod, c, memoryCapacity);
  return r;
}
