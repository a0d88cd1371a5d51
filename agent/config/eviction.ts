/**
 * Eviction signals and threshold values of evictionHard / evictionSoft, as the kubelet
 * names and parses them ("memory.available": "100Mi", "nodefs.available": "10%").
 */
import { parseQuantity } from './quantity';

export const evictionSignals = [
  'memory.available',
  'nodefs.available',
  'nodefs.inodesFree',
  'imagefs.available',
  'imagefs.inodesFree',
  'containerfs.available',
  'containerfs.inodesFree',
  'pid.available',
] as const;
export type EvictionSignal = (typeof evictionSignals)[number];

/** A threshold is either an absolute amount (bytes, inodes, pids) or a fraction of capacity. */
export type ThresholdValue = { kind: 'quantity'; value: number } | { kind: 'percentage'; fraction: number };

export function isEvictionSignal(s: string): s is EvictionSignal {
  return (evictionSignals as readonly string[]).includes(s);
}

/** Parses one threshold value; throws Error with the kubelet's wording when it is malformed or negative. */
export function parseThresholdValue(text: string): ThresholdValue {
  if (text.endsWith('%')) {
    const body = text.slice(0, -1);
    const pct = /^\d+(\.\d+)?$/.test(body) ? Number(body) : NaN;
    if (!Number.isFinite(pct) || pct < 0 || pct > 100) {
      throw new Error(`invalid percentage ${JSON.stringify(text)}: must be between 0% and 100%`);
    }
    return { kind: 'percentage', fraction: pct / 100 };
  }
  const value = parseQuantity(text);
  if (value < 0) throw new Error(`eviction threshold ${JSON.stringify(text)} must be positive`);
  return { kind: 'quantity', value };
}

/** The amount a threshold stands for on a resource of the given capacity. */
export function thresholdAmount(t: ThresholdValue, capacity: number): number {
  return t.kind === 'quantity' ? t.value : t.fraction * capacity;
}
