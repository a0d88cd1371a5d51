/** Representative HorizontalPodAutoscalers (autoscaling v2 and v1) and resource metrics, for the protobuf tests. */

const meta = (name: string, namespace?: string) => ({ name, ...(namespace ? { namespace } : {}), uid: `uid-${name}`, resourceVersion: '42', creationTimestamp: '2025-03-01T12:00:00Z' });

export const hpaV2Fixture = {
  apiVersion: 'autoscaling/v2',
  kind: 'HorizontalPodAutoscaler',
  metadata: meta('web', 'shop'),
  spec: {
    scaleTargetRef: { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' },
    minReplicas: 1,
    maxReplicas: 10,
    metrics: [
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } },
      { type: 'ContainerResource', containerResource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' }, container: 'app' } },
      { type: 'Pods', pods: { metric: { name: 'qps', selector: { matchLabels: { a: 'b' } } }, target: { type: 'AverageValue', averageValue: '10' } } },
    ],
    behavior: {
      scaleUp: { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }] },
      scaleDown: { stabilizationWindowSeconds: 300, selectPolicy: 'Min', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }], tolerance: '50m' },
    },
  },
  status: {
    observedGeneration: 3,
    lastScaleTime: '2025-03-01T12:01:00Z',
    currentReplicas: 2,
    desiredReplicas: 4,
    currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageValue: '200m', averageUtilization: 200 } } }],
    conditions: [{ type: 'AbleToScale', status: 'True', lastTransitionTime: '2025-03-01T12:01:00Z', reason: 'SucceededRescale', message: 'the HPA controller was able to update the target scale to 4' }],
  },
};

export const hpaV1Fixture = {
  apiVersion: 'autoscaling/v1',
  kind: 'HorizontalPodAutoscaler',
  metadata: meta('web', 'shop'),
  spec: { scaleTargetRef: { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' }, minReplicas: 1, maxReplicas: 10, targetCPUUtilizationPercentage: 50 },
  status: { observedGeneration: 3, lastScaleTime: '2025-03-01T12:01:00Z', currentReplicas: 2, desiredReplicas: 4, currentCPUUtilizationPercentage: 200 },
};

export const nodeMetricsFixture = {
  apiVersion: 'metrics.svc.io/v1beta1',
  kind: 'NodeMetrics',
  metadata: { name: 'node-1', creationTimestamp: '2025-03-01T12:00:00Z', labels: { 'kubernetes.io/hostname': 'node-1' } },
  timestamp: '2025-03-01T11:59:58Z',
  window: '15s',
  usage: { cpu: '250m', memory: '1536Mi' },
};

export const podMetricsFixture = {
  apiVersion: 'metrics.svc.io/v1beta1',
  kind: 'PodMetrics',
  metadata: { name: 'web-1', namespace: 'shop', creationTimestamp: '2025-03-01T12:00:00Z' },
  timestamp: '2025-03-01T11:59:58Z',
  window: '1m30.5s',
  containers: [
    { name: 'app', usage: { cpu: '10m', memory: '4Mi' } },
    { name: 'side', usage: { cpu: '1234n', memory: '1000' } },
  ],
};
