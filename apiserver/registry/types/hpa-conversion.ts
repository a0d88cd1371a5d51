/**
 * autoscaling/v1 ↔ autoscaling/v2 HorizontalPodAutoscaler, as upstream converts them: v1's
 * targetCPUUtilizationPercentage is v2's Resource cpu Utilization metric, and
 * currentCPUUtilizationPercentage its current value; what v1 cannot say (other metrics, the
 * behaviour, conditions, other current metrics) rides in upstream's annotations
 * autoscaling.alpha.kubernetes.io/{metrics,behavior,conditions,current-metrics} so a v1
 * read-modify-write keeps it. Differs: the annotations hold the v2 JSON forms (upstream writes the
 * older v2beta1-like shapes).
 */
import type { KObject } from '../../api/types';
import { num, rec, recs } from '../obj-access';

export const ANN_METRICS = 'autoscaling.alpha.kubernetes.io/metrics';
export const ANN_BEHAVIOR = 'autoscaling.alpha.kubernetes.io/behavior';
export const ANN_CONDITIONS = 'autoscaling.alpha.kubernetes.io/conditions';
export const ANN_CURRENT = 'autoscaling.alpha.kubernetes.io/current-metrics';
const ANNOTATIONS = [ANN_METRICS, ANN_BEHAVIOR, ANN_CONDITIONS, ANN_CURRENT];

type J = Record<string, unknown>;

const isCpuUtilization = (m: J): boolean => m.type === 'Resource' && rec(m.resource)?.name === 'cpu' && rec(rec(m.resource)?.target)?.type === 'Utilization';

function parseAnnotation(v: string | undefined): unknown {
  if (v === undefined) return undefined;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return undefined;
  }
}

/** The v1 form of a stored (v2) object. */
export function hpaV2ToV1(o: KObject): KObject {
  const spec = rec(o.spec) ?? {};
  const status = rec(o.status);
  const metrics = recs(spec.metrics);
  const cpu = metrics.find(isCpuUtilization);
  const others = metrics.filter((m) => m !== cpu);
  const annotations: Record<string, string> = { ...(o.metadata.annotations ?? {}) };
  for (const a of ANNOTATIONS) delete annotations[a];
  if (others.length) annotations[ANN_METRICS] = JSON.stringify(others);
  if (spec.behavior) annotations[ANN_BEHAVIOR] = JSON.stringify(spec.behavior);
  const v1Spec: J = { scaleTargetRef: spec.scaleTargetRef, ...(spec.minReplicas !== undefined ? { minReplicas: spec.minReplicas } : {}), maxReplicas: spec.maxReplicas };
  const cpuTarget = num(rec(rec(cpu?.resource)?.target)?.averageUtilization);
  if (cpuTarget !== undefined) v1Spec.targetCPUUtilizationPercentage = cpuTarget;
  let v1Status: J | undefined;
  if (status) {
    const current = recs(status.currentMetrics);
    const cpuNow = current.find((m) => m.type === 'Resource' && rec(m.resource)?.name === 'cpu');
    const restNow = current.filter((m) => m !== cpuNow);
    if (restNow.length) annotations[ANN_CURRENT] = JSON.stringify(restNow);
    if (recs(status.conditions).length) annotations[ANN_CONDITIONS] = JSON.stringify(status.conditions);
    const util = num(rec(rec(cpuNow?.resource)?.current)?.averageUtilization);
    v1Status = {
      ...(status.observedGeneration !== undefined ? { observedGeneration: status.observedGeneration } : {}),
      ...(status.lastScaleTime !== undefined ? { lastScaleTime: status.lastScaleTime } : {}),
      currentReplicas: status.currentReplicas ?? 0,
      desiredReplicas: status.desiredReplicas ?? 0,
      ...(util !== undefined ? { currentCPUUtilizationPercentage: util } : {}),
    };
  }
  const metadata = { ...o.metadata };
  if (Object.keys(annotations).length) metadata.annotations = annotations;
  else delete metadata.annotations;
  return { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata, spec: v1Spec, ...(v1Status ? { status: v1Status } : {}) };
}

/** The stored (v2) form of a v1 object. */
export function hpaV1ToV2(o: KObject): KObject {
  const spec = rec(o.spec) ?? {};
  const status = rec(o.status);
  const ann = o.metadata.annotations ?? {};
  const metrics = recs(parseAnnotation(ann[ANN_METRICS]));
  const cpu = num(spec.targetCPUUtilizationPercentage);
  if (cpu !== undefined) metrics.unshift({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: cpu } } });
  const behavior = rec(parseAnnotation(ann[ANN_BEHAVIOR]));
  const v2Spec: J = {
    scaleTargetRef: spec.scaleTargetRef,
    ...(spec.minReplicas !== undefined ? { minReplicas: spec.minReplicas } : {}),
    maxReplicas: spec.maxReplicas,
    ...(metrics.length ? { metrics } : {}),
    ...(behavior ? { behavior } : {}),
  };
  let v2Status: J | undefined;
  if (status) {
    const current = recs(parseAnnotation(ann[ANN_CURRENT]));
    const util = num(status.currentCPUUtilizationPercentage);
    if (util !== undefined) current.unshift({ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: util } } });
    const conditions = recs(parseAnnotation(ann[ANN_CONDITIONS]));
    v2Status = {
      ...(status.observedGeneration !== undefined ? { observedGeneration: status.observedGeneration } : {}),
      ...(status.lastScaleTime !== undefined ? { lastScaleTime: status.lastScaleTime } : {}),
      currentReplicas: status.currentReplicas ?? 0,
      desiredReplicas: status.desiredReplicas ?? 0,
      ...(current.length ? { currentMetrics: current } : {}),
      ...(conditions.length ? { conditions } : {}),
    };
  }
  const annotations = { ...ann };
  for (const a of ANNOTATIONS) delete annotations[a];
  const metadata = { ...o.metadata };
  if (Object.keys(annotations).length) metadata.annotations = annotations;
  else delete metadata.annotations;
  return { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata, spec: v2Spec, ...(v2Status ? { status: v2Status } : {}) };
}
