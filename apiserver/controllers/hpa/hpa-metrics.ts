/**
 * The HPA's resource metric reading (upstream computeReplicasForMetrics for Resource and
 * ContainerResource metrics): each metric's recommendation from the pods the target's scale
 * selects and their usage in the metrics API of this process; the current value it reports in
 * status.currentMetrics; the reason a scale names ("cpu resource utilization (percentage of
 * request) above target"). Object, Pods and External metrics have no source here.
 */
import type { KObject } from '../../api/types';
import { num, rec, recs, str } from '../../registry/obj-access';
import { cpuQuantity, memoryQuantity } from '../../handlers/resource-metrics';
import { milliOf, MetricsError, resourceReplicas, type PodInfo, type PodSample } from './replica-calculator';

/** The latest usage of a pod (the metrics API's UsageCache). */
export interface PodUsageSource {
  pod(namespace: string, name: string): { timestampMs: number; windowMs: number; containers: ReadonlyArray<{ name: string; cpuNanoCores: number; memoryBytes: number }> } | undefined;
}

export interface MetricResult {
  replicas: number;
  /** status.currentMetrics entry. */
  status: Record<string, unknown>;
  /** How the metric names itself in events ("cpu resource utilization (percentage of request)"). */
  name: string;
  timestampMs: number;
}

/** A metric the controller could not read: the condition and event reason and the message. */
export class MetricFailure extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

function podInfo(pod: KObject, resource: string, container: string | undefined): PodInfo {
  const spec = rec(pod.spec) ?? {};
  const status = rec(pod.status) ?? {};
  const ready = recs(status.conditions).find((c) => c.type === 'Ready');
  const start = Date.parse(str(status.startTime) ?? '');
  const containers = recs(spec.containers).filter((c) => container === undefined || c.name === container);
  return {
    name: pod.metadata.name!,
    deleting: !!pod.metadata.deletionTimestamp,
    phase: str(status.phase) ?? 'Pending',
    ...(Number.isFinite(start) ? { startTimeMs: start } : {}),
    ...(ready ? { ready: { status: str(ready.status) ?? 'Unknown', lastTransitionMs: Date.parse(str(ready.lastTransitionTime) ?? '') || 0 } } : {}),
    requests: containers.map((c) => ({ container: str(c.name) ?? '', milli: milliOf(rec(rec(c.resources)?.requests)?.[resource]) })),
  };
}

/** One Resource or ContainerResource metric's recommendation; throws MetricFailure with upstream's reasons. */
export function resourceMetric(metric: Record<string, unknown>, pods: readonly KObject[], usage: PodUsageSource, currentReplicas: number, nowMs: number, tolerance: number): MetricResult {
  const containerMetric = metric.type === 'ContainerResource';
  const src = rec(containerMetric ? metric.containerResource : metric.resource) ?? {};
  const resource = str(src.name) ?? '';
  const container = containerMetric ? str(src.container) : undefined;
  const target = rec(src.target) ?? {};
  const failReason = containerMetric ? 'FailedGetContainerResourceMetric' : 'FailedGetResourceMetric';
  if (resource !== 'cpu' && resource !== 'memory') throw new MetricFailure(failReason, `failed to get ${resource} utilization: unable to get metrics for resource ${resource}: the resource metrics API reports cpu and memory only`);
  const samples = new Map<string, PodSample>();
  for (const p of pods) {
    const u = usage.pod(p.metadata.namespace ?? '', p.metadata.name!);
    if (!u) continue;
    const cs = u.containers.filter((c) => container === undefined || c.name === container);
    if (cs.length === 0) continue;
    const milli = cs.reduce((s, c) => s + (resource === 'cpu' ? c.cpuNanoCores / 1e6 : c.memoryBytes * 1000), 0);
    samples.set(p.metadata.name!, { milli: Math.round(milli), timestampMs: u.timestampMs, windowMs: u.windowMs });
  }
  const infos = pods.map((p) => podInfo(p, resource, container));
  const utilization = num(target.averageUtilization);
  const byValue = target.averageValue !== undefined && target.averageValue !== null;
  const what = byValue ? `${resource} resource` : `${resource} resource utilization (percentage of request)`;
  try {
    const kind = byValue ? 'AverageValue' : 'Utilization';
    const value = byValue ? (milliOf(target.averageValue) ?? 0) : (utilization ?? 0);
    const r = resourceReplicas(currentReplicas, { resource, kind, value }, infos, samples, nowMs, tolerance);
    const avg = resource === 'cpu' ? cpuQuantity(r.averageMilli * 1e6) : memoryQuantity(r.averageMilli / 1000);
    const current = { averageValue: avg, ...(r.utilization !== undefined ? { averageUtilization: r.utilization } : {}) };
    const status = containerMetric ? { type: 'ContainerResource', containerResource: { name: resource, container, current } } : { type: 'Resource', resource: { name: resource, current } };
    return { replicas: r.replicas, status, name: containerMetric ? `${what} of container ${container}` : what, timestampMs: r.timestampMs };
  } catch (err) {
    if (!(err instanceof MetricsError)) throw err;
    const prefix = byValue ? `failed to get ${resource} usage` : `failed to get ${resource} utilization`;
    throw new MetricFailure(failReason, `${prefix}: ${err.message}`);
  }
}
