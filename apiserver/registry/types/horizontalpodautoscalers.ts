import type { KObject } from '../../api/types';
import { num, rec, recs, str } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { ageColumn, column, type Now } from '../table';
import { hpaV1ToV2, hpaV2ToV1 } from './hpa-conversion';
import { hpaV1Schema, hpaV2Schema } from './hpa-schema';
import { validateHpaSpec } from './hpa-validation';

/**
 * autoscaling/v2 HorizontalPodAutoscaler (stored form) and autoscaling/v1's view of the same
 * objects (hpa-conversion.ts), as upstream serves both; the HPA controller
 * (controllers/hpa/) keeps their status.
 */

/** Upstream's autoscaling.DefaultCPUUtilization: the metric of an HPA that names none. */
export const DEFAULT_CPU_UTILIZATION = 80;

/** Upstream GenerateHPAScaleUpRules / GenerateHPAScaleDownRules: the rules a behaviour leaves unset. */
export function defaultScaleUp(r: Record<string, unknown> | undefined): Record<string, unknown> {
  return {
    ...r,
    stabilizationWindowSeconds: r?.stabilizationWindowSeconds ?? 0,
    selectPolicy: r?.selectPolicy ?? 'Max',
    policies: r?.policies ?? [
      { type: 'Pods', value: 4, periodSeconds: 15 },
      { type: 'Percent', value: 100, periodSeconds: 15 },
    ],
  };
}

export function defaultScaleDown(r: Record<string, unknown> | undefined): Record<string, unknown> {
  return { ...r, selectPolicy: r?.selectPolicy ?? 'Max', policies: r?.policies ?? [{ type: 'Percent', value: 100, periodSeconds: 15 }] };
}

/** Upstream SetDefaults_HorizontalPodAutoscaler (v2): minReplicas 1, 80% CPU when no metric, a set behaviour's unset rules. */
function defaultsV2(o: KObject): void {
  const spec = (o.spec ??= {}) as Record<string, unknown>;
  spec.minReplicas ??= 1;
  if (!Array.isArray(spec.metrics) || spec.metrics.length === 0) {
    spec.metrics = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: DEFAULT_CPU_UTILIZATION } } }];
  }
  const behavior = rec(spec.behavior);
  if (behavior) spec.behavior = { scaleUp: defaultScaleUp(rec(behavior.scaleUp)), scaleDown: defaultScaleDown(rec(behavior.scaleDown)) };
}

/** Upstream's printer: "cpu: 20%/50%", "memory: 100Mi/200Mi", "<unknown>" before a reading, " + N more..." past four. */
export function formatTargets(o: KObject): string {
  const spec = rec(o.spec) ?? {};
  const metrics = recs(spec.metrics);
  const statuses = recs(rec(o.status)?.currentMetrics);
  if (metrics.length === 0) return '<none>';
  const list: string[] = [];
  metrics.forEach((m, i) => {
    const st = statuses[i];
    const kind = m.type === 'ContainerResource' ? 'containerResource' : m.type === 'Resource' ? 'resource' : undefined;
    if (kind) {
      const src = rec(m[kind]) ?? {};
      const target = rec(src.target) ?? {};
      const cur = rec(rec(st?.[kind])?.current);
      const name = str(src.name) ?? '';
      if (target.averageValue !== undefined) {
        list.push(`${name}: ${str(cur?.averageValue) ?? '<unknown>'}/${str(target.averageValue) ?? ''}`);
      } else {
        const now = num(cur?.averageUtilization);
        const want = num(target.averageUtilization);
        list.push(`${name}: ${now !== undefined ? `${now}%` : '<unknown>'}/${want !== undefined ? `${want}%` : '<auto>'}`);
      }
      return;
    }
    const field = m.type === 'Pods' ? 'pods' : m.type === 'Object' ? 'object' : 'external';
    const target = rec(rec(m[field])?.target) ?? {};
    const cur = rec(rec(st?.[field])?.current);
    const want = str(target.averageValue) ?? str(target.value) ?? '';
    const now = str(cur?.averageValue) ?? str(cur?.value) ?? '<unknown>';
    list.push(`${now}/${want}${target.averageValue !== undefined && m.type !== 'Pods' ? ' (avg)' : ''}`);
  });
  const shown = list.slice(0, 4).join(', ');
  return list.length > 4 ? `${shown} + ${list.length - 4} more...` : shown;
}

function columns(now: Now, targets: (o: KObject) => string): TableColumn[] {
  return [
    column('Reference', 'string', 'The scale target of the autoscaler.', (o) => {
      const ref = rec(rec(o.spec)?.scaleTargetRef) ?? {};
      return `${str(ref.kind) ?? ''}/${str(ref.name) ?? ''}`;
    }),
    column('Targets', 'string', 'The metrics and their current and target values.', targets),
    column('MinPods', 'string', 'The lower limit for the number of pods.', (o) => {
      const v = num(rec(o.spec)?.minReplicas);
      return v === undefined ? '<unset>' : String(v);
    }),
    column('MaxPods', 'integer', 'The upper limit for the number of pods.', (o) => num(rec(o.spec)?.maxReplicas) ?? 0),
    column('Replicas', 'integer', 'The current number of pods.', (o) => num(rec(o.status)?.currentReplicas) ?? 0),
    ageColumn(now),
  ];
}

const common = {
  group: 'autoscaling',
  resource: 'horizontalpodautoscalers',
  singular: 'horizontalpodautoscaler',
  kind: 'HorizontalPodAutoscaler',
  listKind: 'HorizontalPodAutoscalerList',
  namespaced: true,
  shortNames: ['hpa'],
  categories: ['all'],
  hasStatus: true,
} as const;

export function makeHpaTypes(now: Now): ResourceType[] {
  const v2: ResourceType = {
    ...common,
    version: 'v2',
    schema: hpaV2Schema,
    defaults: defaultsV2,
    validate: (o) => validateHpaSpec(rec(o.spec) ?? {}),
    tableColumns: columns(now, formatTargets),
  };
  const v1: ResourceType = {
    ...common,
    version: 'v1',
    schema: hpaV1Schema,
    defaults: (o) => {
      const spec = (o.spec ??= {}) as Record<string, unknown>;
      spec.minReplicas ??= 1;
    },
    validate: (o) => validateHpaSpec(rec(hpaV1ToV2(o).spec) ?? {}),
    tableColumns: columns(now, (o) => formatTargets(hpaV1ToV2(o))),
    // The same stored objects as v2, converted both ways (upstream's conversion through the internal type).
    storedAs: { group: 'autoscaling', resource: 'horizontalpodautoscalers', fromStorage: hpaV2ToV1, toStorage: (o) => { const v2o = hpaV1ToV2(o); defaultsV2(v2o); return v2o; } },
  };
  return [v2, v1];
}
