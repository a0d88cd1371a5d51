import type { KObject } from '../../api/types';
import { withMeta } from '../common-schemas';
import type { ResourceType } from '../resource-type';
import { atomicList, described, duration, obj, quantityMap, str, time } from '../schema-builders';
import { ageColumn, column, type Now } from '../table';

/**
 * metrics.svc.io/v1beta1 (metrics.k8s.io/v1beta1 under its upstream name) NodeMetrics and
 * PodMetrics: the resource metrics API that metrics-server serves upstream, built in here and fed
 * by the scraper of controllers/metrics/. Read-only (get, list): the objects are made at each
 * request from the latest scrape and never stored. Messages and field numbers are upstream's
 * (k8s.io/metrics/pkg/apis/metrics/v1beta1), `window` a meta/v1 Duration (kubectl top reads
 * them in protobuf). Their .proto file is not generated here (upstream's lives in k8s.io/metrics).
 */

const METRICS = 'k8s.io.metrics.pkg.apis.metrics.v1beta1';

export const METRICS_GROUP = 'metrics.svc.io';

const timestamp = time('The following fields define time interval from which metrics were collected from the interval [Timestamp-Window, Timestamp].');
const window = duration('The time interval the usage was averaged over ("15s"); nanoseconds in protobuf, as meta/v1 Duration.');
const usage = quantityMap('The memory usage is the memory working set.');

export const nodeMetricsSchema = withMeta(`${METRICS}.NodeMetrics`, {
  timestamp: [2, timestamp],
  window: [3, window],
  usage: [4, usage],
});

export const podMetricsSchema = withMeta(`${METRICS}.PodMetrics`, {
  timestamp: [2, timestamp],
  window: [3, window],
  containers: [
    4,
    described(
      'Metrics for all containers are collected within the same time window.',
      atomicList(obj(`${METRICS}.ContainerMetrics`, { name: [1, str('Container name corresponding to the one from pod.spec.containers.')], usage: [2, usage] }, { required: ['name', 'usage'] })),
    ),
  ],
});

const READ_ONLY = ['get', 'list'] as const;

function usageCell(key: string): (o: KObject) => unknown {
  return (o) => ((o as { usage?: Record<string, string> }).usage ?? {})[key] ?? '';
}

export function makeMetricsTypes(now: Now): ResourceType[] {
  const common = { group: METRICS_GROUP, version: 'v1beta1', hasStatus: false, servedVerbs: READ_ONLY } as const;
  return [
    {
      ...common,
      resource: 'nodes',
      singular: '',
      kind: 'NodeMetrics',
      listKind: 'NodeMetricsList',
      namespaced: false,
      schema: nodeMetricsSchema,
      tableColumns: [column('CPU', 'string', 'The node\'s CPU usage.', usageCell('cpu')), column('Memory', 'string', 'The node\'s memory working set.', usageCell('memory')), column('Window', 'string', 'The interval the usage was averaged over.', (o) => (o as { window?: string }).window ?? ''), ageColumn(now)],
    },
    {
      ...common,
      resource: 'pods',
      singular: '',
      kind: 'PodMetrics',
      listKind: 'PodMetricsList',
      namespaced: true,
      schema: podMetricsSchema,
      tableColumns: [column('Window', 'string', 'The interval the usage was averaged over.', (o) => (o as { window?: string }).window ?? ''), ageColumn(now)],
    },
  ];
}
