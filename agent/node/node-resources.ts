/**
 * Node.status.capacity and .allocatable. Allocatable follows the kubelet's node allocatable
 * formula: capacity - kube-reserved - system-reserved - hard eviction threshold (memory.available
 * for memory, nodefs.available for ephemeral-storage), never below zero.
 */
import { parseThresholdValue, thresholdAmount } from '../config/eviction';
import { parseQuantity } from '../config/quantity';
import type { MachineInfo } from '../platform/machine';

export type ResourceList = Record<string, string>;

export interface ResourceInputs {
  machine: Pick<MachineInfo, 'cpuCores' | 'memoryBytes' | 'ephemeralStorageBytes'>;
  maxPods: number;
  systemReserved?: Record<string, string>;
  kubeReserved?: Record<string, string>;
  evictionHard?: Record<string, string>;
}

/** Bytes as a quantity: Ki when whole kibibytes (as the kubelet reports memory), else plain bytes. */
export function formatBytes(bytes: number): string {
  const b = Math.max(0, Math.floor(bytes));
  return b % 1024 === 0 && b > 0 ? `${b / 1024}Ki` : String(b);
}

/** CPU in cores as a quantity: whole cores plain ("4"), otherwise millicores ("3500m"). */
export function formatCpu(cores: number): string {
  const milli = Math.max(0, Math.round(cores * 1000));
  return milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`;
}

export function nodeCapacity(i: ResourceInputs): ResourceList {
  return {
    cpu: formatCpu(i.machine.cpuCores),
    'ephemeral-storage': formatBytes(i.machine.ephemeralStorageBytes),
    memory: formatBytes(i.machine.memoryBytes),
    pods: String(i.maxPods),
  };
}

function reserved(i: ResourceInputs, name: string): number {
  let sum = 0;
  for (const m of [i.systemReserved, i.kubeReserved]) {
    const v = m?.[name];
    if (v !== undefined) sum += parseQuantity(v);
  }
  return sum;
}

function hardThreshold(i: ResourceInputs, signal: string, capacity: number): number {
  const v = i.evictionHard?.[signal];
  return v === undefined ? 0 : thresholdAmount(parseThresholdValue(v), capacity);
}

export function nodeAllocatable(i: ResourceInputs): ResourceList {
  const { cpuCores, memoryBytes, ephemeralStorageBytes } = i.machine;
  return {
    cpu: formatCpu(cpuCores - reserved(i, 'cpu')),
    'ephemeral-storage': formatBytes(ephemeralStorageBytes - reserved(i, 'ephemeral-storage') - hardThreshold(i, 'nodefs.available', ephemeralStorageBytes)),
    memory: formatBytes(memoryBytes - reserved(i, 'memory') - hardThreshold(i, 'memory.available', memoryBytes)),
    pods: String(i.maxPods),
  };
}
