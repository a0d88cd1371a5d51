/**
 * Upstream's ReplicaCalculator for resource metrics (pkg/controller/podautoscaler/replica_calculator.go),
 * pure: the desired replica count for one cpu or memory metric from the pods the target selects,
 * their usage and requests. Pods being deleted or Failed are ignored; Pending ones, and for CPU
 * pods not yet ready (or, within 5 minutes of starting, read before one metric window passed since
 * they turned ready) are unready; pods without usage are missing. A ratio within the tolerance
 * (0.1) keeps the count; otherwise missing pods count as at the target on a scale-down and as idle
 * on a scale-up, and unready ones as idle on a scale-up, and the count changes only if the ratio
 * still points the same way. Values are in milli-units, as upstream's MilliValue.
 */
import { parseQuantity, type Quantity } from '../../registry/quantity';

export const DEFAULT_TOLERANCE = 0.1;
/** Upstream's --horizontal-pod-autoscaler-cpu-initialization-period and -initial-readiness-delay defaults. */
export const CPU_INITIALIZATION_PERIOD_MS = 5 * 60_000;
export const INITIAL_READINESS_DELAY_MS = 30_000;

export interface PodInfo {
  name: string;
  deleting: boolean;
  phase: string;
  /** status.startTime (ms), absent before the agent reports it. */
  startTimeMs?: number;
  /** The Ready condition, absent when the pod has none. */
  ready?: { status: string; lastTransitionMs: number };
  /** Each container's request of the resource (milli-units), undefined when it requests none. */
  requests: Array<{ container: string; milli: number | undefined }>;
}

export interface PodSample {
  /** Usage in milli-units (cpu: millicores; memory: milli-bytes). */
  milli: number;
  timestampMs: number;
  windowMs: number;
}

export interface ResourceTarget {
  resource: string;
  /** Utilization: a percentage of the pods' requests; AverageValue: milli-units per pod. */
  kind: 'Utilization' | 'AverageValue';
  value: number;
}

export interface Recommendation {
  replicas: number;
  /** The current utilization (Utilization targets) or average usage per pod in milli-units. */
  utilization?: number;
  averageMilli: number;
  timestampMs: number;
}

/** Thrown with upstream's messages; the controller reports them as FailedGetResourceMetric. */
export class MetricsError extends Error {}

/** A quantity's value in milli-units, rounded up as upstream's MilliValue. */
export function milliOf(q: unknown): number | undefined {
  if (typeof q !== 'string' && typeof q !== 'number') return undefined;
  const p: Quantity | undefined = parseQuantity(q);
  if (!p) return undefined;
  const e = p.exp + 3;
  if (e >= 0) return Number(p.mantissa * 10n ** BigInt(e));
  const d = 10n ** BigInt(-e);
  return Number((p.mantissa + d - 1n) / d);
}

interface Groups {
  ready: number;
  unready: Set<string>;
  missing: Set<string>;
  ignored: Set<string>;
}

function groupPods(pods: readonly PodInfo[], metrics: ReadonlyMap<string, PodSample>, resource: string, nowMs: number): Groups {
  const g: Groups = { ready: 0, unready: new Set(), missing: new Set(), ignored: new Set() };
  for (const p of pods) {
    if (p.deleting || p.phase === 'Failed') {
      g.ignored.add(p.name);
      continue;
    }
    if (p.phase === 'Pending') {
      g.unready.add(p.name);
      continue;
    }
    const m = metrics.get(p.name);
    if (!m) {
      g.missing.add(p.name);
      continue;
    }
    if (resource === 'cpu') {
      let unready: boolean;
      if (!p.ready || p.startTimeMs === undefined) unready = true;
      else if (p.startTimeMs + CPU_INITIALIZATION_PERIOD_MS > nowMs) unready = p.ready.status === 'False' || m.timestampMs < p.ready.lastTransitionMs + m.windowMs;
      else unready = p.ready.status === 'False' && p.startTimeMs + INITIAL_READINESS_DELAY_MS > p.ready.lastTransitionMs;
      if (unready) {
        g.unready.add(p.name);
        continue;
      }
    }
    g.ready++;
  }
  return g;
}

/** Each pod's request of the resource; a container without one is upstream's error. */
function podRequests(pods: readonly PodInfo[], resource: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const p of pods) {
    let sum = 0;
    for (const c of p.requests) {
      if (c.milli === undefined) throw new MetricsError(`missing request for ${resource} in container ${c.container} of Pod ${p.name}`);
      sum += c.milli;
    }
    out.set(p.name, sum);
  }
  return out;
}

/** Upstream GetResourceUtilizationRatio: (ratio, utilization %, average usage). */
function utilizationRatio(metrics: ReadonlyMap<string, number>, requests: ReadonlyMap<string, number>, target: number): [number, number, number] {
  let total = 0;
  let requested = 0;
  let n = 0;
  for (const [pod, v] of metrics) {
    const r = requests.get(pod);
    if (r === undefined) continue;
    total += v;
    requested += r;
    n++;
  }
  if (requested === 0) throw new MetricsError('no metrics returned matched known pods');
  const utilization = Math.trunc((total * 100) / requested);
  return [utilization / target, utilization, Math.trunc(total / n)];
}

/** Upstream GetMetricUsageRatio: (ratio, average usage). */
function usageRatio(metrics: ReadonlyMap<string, number>, target: number): [number, number] {
  let total = 0;
  for (const v of metrics.values()) total += v;
  const avg = Math.trunc(total / metrics.size);
  return [avg / target, avg];
}

/** The recommendation for one resource metric; throws MetricsError with upstream's messages. */
export function resourceReplicas(
  currentReplicas: number,
  target: ResourceTarget,
  pods: readonly PodInfo[],
  samples: ReadonlyMap<string, PodSample>,
  nowMs: number,
  tolerance = DEFAULT_TOLERANCE,
): Recommendation {
  if (samples.size === 0) throw new MetricsError(`unable to get metrics for resource ${target.resource}: no metrics returned from resource metrics API`);
  if (pods.length === 0) throw new MetricsError('no pods returned by selector while calculating replica count');
  const g = groupPods(pods, samples, target.resource, nowMs);
  const metrics = new Map<string, number>();
  let timestampMs = 0;
  for (const [pod, s] of samples) {
    if (g.ignored.has(pod) || g.unready.has(pod) || !pods.some((p) => p.name === pod)) continue;
    metrics.set(pod, s.milli);
    timestampMs = Math.max(timestampMs, s.timestampMs);
  }
  if (metrics.size === 0) throw new MetricsError('did not receive metrics for targeted pods (pods might be unready)');
  const requests = target.kind === 'Utilization' ? podRequests(pods, target.resource) : new Map<string, number>();
  const ratioOf = (m: ReadonlyMap<string, number>): [number, number | undefined, number] => {
    if (target.kind === 'Utilization') return utilizationRatio(m, requests, target.value);
    const [r, avg] = usageRatio(m, target.value);
    return [r, undefined, avg];
  };
  const [ratio, utilization, averageMilli] = ratioOf(metrics);
  const result = (replicas: number): Recommendation => ({ replicas, ...(utilization !== undefined ? { utilization } : {}), averageMilli, timestampMs });
  const scaleUpWithUnready = g.unready.size > 0 && ratio > 1;
  if (!scaleUpWithUnready && g.missing.size === 0) {
    if (Math.abs(1 - ratio) <= tolerance) return result(currentReplicas);
    return result(Math.ceil(ratio * g.ready));
  }
  if (g.missing.size > 0) {
    for (const pod of g.missing) {
      if (ratio < 1) {
        // On a scale-down a missing pod counts as using exactly the target (at least its request).
        metrics.set(pod, target.kind === 'Utilization' ? ((requests.get(pod) ?? 0) * Math.max(100, target.value)) / 100 : target.value);
      } else if (ratio > 1) metrics.set(pod, 0);
    }
  }
  if (scaleUpWithUnready) for (const pod of g.unready) metrics.set(pod, 0);
  const [newRatio] = ratioOf(metrics);
  if (Math.abs(1 - newRatio) <= tolerance || (ratio < 1 && newRatio > 1) || (ratio > 1 && newRatio < 1)) return result(currentReplicas);
  const replicas = Math.ceil(newRatio * metrics.size);
  if ((newRatio < 1 && replicas > currentReplicas) || (newRatio > 1 && replicas < currentReplicas)) return result(currentReplicas);
  return result(replicas);
}
