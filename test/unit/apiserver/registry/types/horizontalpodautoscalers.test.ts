/**
 * autoscaling/v2 HorizontalPodAutoscaler (registry/types/horizontalpodautoscalers.ts and hpa-*.ts):
 * upstream's defaults, validation messages for bad input, the kubectl table's TARGETS cell, and
 * the v1 ↔ v2 conversion keeping what v1 cannot say in upstream's annotations.
 */
import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { ANN_BEHAVIOR, ANN_METRICS, hpaV1ToV2, hpaV2ToV1 } from '../../../../../apiserver/registry/types/hpa-conversion';
import { formatTargets, makeHpaTypes } from '../../../../../apiserver/registry/types/horizontalpodautoscalers';

const [v2] = makeHpaTypes(() => Date.parse('2025-03-01T12:00:00Z'));
const ref = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };

function hpa(spec: Record<string, unknown>): KObject {
  return { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'web', namespace: 'default' }, spec: { scaleTargetRef: ref, maxReplicas: 5, ...spec } };
}

function causes(spec: Record<string, unknown>): string[] {
  const o = hpa(spec);
  v2.defaults!(o);
  return (v2.validate!(o) ?? []).map((c) => `${c.field}: ${c.message}`);
}

test('defaults: minReplicas 1 and 80% CPU without metrics; a set behaviour gets the default rules', (t) => {
  const o = hpa({ behavior: { scaleDown: { stabilizationWindowSeconds: 60 } } });
  v2.defaults!(o);
  t.like(o.spec, { minReplicas: 1, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }] });
  t.deepEqual((o.spec as any).behavior, {
    scaleUp: { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }] },
    scaleDown: { stabilizationWindowSeconds: 60, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
  });
  const bare = hpa({});
  v2.defaults!(bare);
  t.is((bare.spec as any).behavior, undefined, 'no behaviour is made up');
});

test('bad input is refused with the field named', (t) => {
  t.deepEqual(causes({}), []);
  t.deepEqual(causes({ scaleTargetRef: { kind: '', name: 'x' } }), ['spec.scaleTargetRef.kind: Required value']);
  t.deepEqual(causes({ minReplicas: 0 }), ['spec.minReplicas: Invalid value: 0: must be greater than or equal to 1']);
  t.deepEqual(causes({ minReplicas: 6 }), ['spec.maxReplicas: Invalid value: 5: must be greater than or equal to `minReplicas`']);
  t.deepEqual(causes({ maxReplicas: 0, minReplicas: 1 }).slice(0, 1), ['spec.maxReplicas: Invalid value: 0: must be greater than 0']);
  t.deepEqual(causes({ metrics: [{ type: 'Resource' }] }), ['spec.metrics[0].resource: Required value: must populate information for the given metric source']);
  t.deepEqual(causes({ metrics: [{ type: 'Bogus' }] }), ['spec.metrics[0].type: Unsupported value: "Bogus": supported values: "ContainerResource", "External", "Object", "Pods", "Resource"']);
  t.deepEqual(causes({ metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 0 } } }] }), [
    'spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0',
  ]);
  t.deepEqual(causes({ metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Value', value: '1' } } }] }), [
    'spec.metrics[0].resource.target.averageUtilization: Required value: must set either a target raw value or a target utilization',
  ]);
  t.deepEqual(causes({ metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 5 } }, pods: {} }] }), ['spec.metrics[0].pods: Forbidden: must populate the given metric source only']);
  t.deepEqual(causes({ behavior: { scaleUp: { stabilizationWindowSeconds: 4000, selectPolicy: 'Most', policies: [{ type: 'Pods', value: 0, periodSeconds: 2000 }] } } }), [
    'spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: 4000: must be less than or equal to 3600',
    'spec.behavior.scaleUp.selectPolicy: Unsupported value: "Most": supported values: "Disabled", "Max", "Min"',
    'spec.behavior.scaleUp.policies[0].value: Invalid value: 0: must be greater than zero',
    'spec.behavior.scaleUp.policies[0].periodSeconds: Invalid value: 2000: must be less than or equal to 1800',
  ]);
});

test('TARGETS: upstream\'s cell, with <unknown> before a reading', (t) => {
  const o = hpa({ metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }, { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } } }] });
  t.is(formatTargets(o), 'cpu: <unknown>/50%, memory: <unknown>/100Mi');
  o.status = { currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 20, averageValue: '20m' } } }, { type: 'Resource', resource: { name: 'memory', current: { averageValue: '64Mi' } } }] };
  t.is(formatTargets(o), 'cpu: 20%/50%, memory: 64Mi/100Mi');
});

test('v1 ↔ v2: targetCPUUtilizationPercentage is the cpu metric; other metrics and the behaviour ride in annotations and come back', (t) => {
  const o = hpa({
    minReplicas: 2,
    metrics: [
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } },
      { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } } },
    ],
    behavior: { scaleUp: { selectPolicy: 'Disabled' } },
  });
  o.status = { currentReplicas: 2, desiredReplicas: 3, currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 75 } } }] };
  const v1 = hpaV2ToV1(o);
  t.like(v1, { apiVersion: 'autoscaling/v1', spec: { minReplicas: 2, maxReplicas: 5, targetCPUUtilizationPercentage: 50 }, status: { currentReplicas: 2, desiredReplicas: 3, currentCPUUtilizationPercentage: 75 } });
  t.deepEqual(JSON.parse(v1.metadata.annotations![ANN_METRICS]), [{ type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } } }]);
  t.truthy(v1.metadata.annotations![ANN_BEHAVIOR]);
  const back = hpaV1ToV2(v1);
  t.deepEqual(back.spec, o.spec);
  t.deepEqual(back.status, o.status);
  t.is(back.metadata.annotations, undefined);
});
