/**
 * GET metrics.k8s.io/v1beta1 (metrics.svc.io) nodes and pods, one or a list: the resource metrics
 * API as metrics-server serves it. The objects are made at each request from the latest scrape
 * (UsageReader) and the Node or Pod objects of the store: names, namespaces and labels are theirs,
 * so label and field selectors select by the node's or pod's labels and fields, as metrics-server's
 * do; a node or pod without usage is left out of a list and is NotFound by name. Usage is
 * formatted as metrics-server's: CPU in nanocores ("250m" once canonical), memory in bytes with a
 * binary suffix when exact ("64Mi"). Other verbs are 405; the caller was authorized for get or
 * list on the metrics resource by the router, as for every resource.
 */
import { errors } from '../api/errors';
import { formatGoDuration } from '../api/go-duration';
import type { KObject } from '../api/types';
import { apiVersionOf, type ResourceType } from '../registry/resource-type';
import { negotiate } from '../server/negotiation';
import { toTable } from '../server/table';
import { listQuery, reply, type ResourceRequest } from './context';

export interface NodeUsageView {
  timestampMs: number;
  windowMs: number;
  cpuNanoCores: number;
  memoryBytes: number;
}

export interface PodUsageView {
  timestampMs: number;
  windowMs: number;
  containers: ReadonlyArray<{ name: string; cpuNanoCores: number; memoryBytes: number }>;
}

/** The latest usage this server scraped (controllers/metrics UsageCache). */
export interface UsageReader {
  node(name: string): NodeUsageView | undefined;
  pod(namespace: string, name: string): PodUsageView | undefined;
}

const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** CPU as resource.NewScaledQuantity(nanocores, -9), canonical: 250000000n is 250m, 2000000000n is 2. */
export function cpuQuantity(nanoCores: number): string {
  const n = Math.round(nanoCores);
  if (n % 1_000_000_000 === 0) return String(n / 1_000_000_000);
  if (n % 1_000_000 === 0) return `${n / 1_000_000}m`;
  if (n % 1000 === 0) return `${n / 1000}u`;
  return `${n}n`;
}

/** Memory as resource.NewQuantity(bytes, BinarySI), canonical: the largest binary suffix that is exact. */
export function memoryQuantity(bytes: number): string {
  const n = Math.round(bytes);
  for (const [suffix, f] of [['Ei', 2 ** 60], ['Pi', 2 ** 50], ['Ti', 2 ** 40], ['Gi', 2 ** 30], ['Mi', 2 ** 20], ['Ki', 1024]] as const) {
    if (n >= f && n % f === 0) return `${n / f}${suffix}`;
  }
  return String(n);
}

export interface MetricsHandlerDeps {
  usage: UsageReader;
  /** The core types whose objects the metrics describe. */
  nodes: ResourceType;
  pods: ResourceType;
}

function baseMeta(obj: KObject, created: string): Record<string, unknown> {
  const m = obj.metadata;
  return { name: m.name, ...(m.namespace ? { namespace: m.namespace } : {}), creationTimestamp: created, ...(m.labels ? { labels: m.labels } : {}) };
}

function nodeMetrics(t: ResourceType, node: KObject, u: NodeUsageView, now: string): KObject {
  return {
    apiVersion: apiVersionOf(t),
    kind: t.kind,
    metadata: baseMeta(node, now),
    timestamp: rfc3339(u.timestampMs),
    window: formatGoDuration(u.windowMs * 1e6),
    usage: { cpu: cpuQuantity(u.cpuNanoCores), memory: memoryQuantity(u.memoryBytes) },
  };
}

function podMetrics(t: ResourceType, pod: KObject, u: PodUsageView, now: string): KObject {
  return {
    apiVersion: apiVersionOf(t),
    kind: t.kind,
    metadata: baseMeta(pod, now),
    timestamp: rfc3339(u.timestampMs),
    window: formatGoDuration(u.windowMs * 1e6),
    containers: u.containers.map((c) => ({ name: c.name, usage: { cpu: cpuQuantity(c.cpuNanoCores), memory: memoryQuantity(c.memoryBytes) } })),
  };
}

export function resourceMetricsHandler(d: MetricsHandlerDeps): (r: ResourceRequest) => Promise<void> {
  return async (r) => {
    if (r.info.verb !== 'get' && r.info.verb !== 'list') throw errors.methodNotAllowed(`the resource metrics API serves get and list only, not ${r.info.verb}`);
    const isNodes = r.type.kind === 'NodeMetrics';
    const source = isNodes ? d.nodes : d.pods;
    const now = rfc3339(r.now().getTime());
    const make = (obj: KObject): KObject | undefined => {
      if (isNodes) {
        const u = d.usage.node(obj.metadata.name!);
        return u && nodeMetrics(r.type, obj, u, now);
      }
      const u = d.usage.pod(obj.metadata.namespace!, obj.metadata.name!);
      return u && podMetrics(r.type, obj, u, now);
    };
    // metrics-server's group resource in NotFound: nodemetrics.metrics.k8s.io "n1" not found.
    const resource = isNodes ? 'nodemetrics' : 'podmetrics';
    if (r.info.verb === 'get') {
      const obj = await r.store.get(source, r.info.namespace, r.info.name).catch(() => undefined);
      const m = obj && make(obj);
      if (!m) throw errors.notFound(resource, r.info.name, r.type.group);
      reply(r, 200, m);
      return;
    }
    const q = listQuery({ ...r, type: source });
    const list = await r.store.list(source, r.info.namespace, { labelSelector: q.labelSelector, fieldSelector: q.fieldSelector });
    const items = list.items.map(make).filter((m): m is KObject => m !== undefined);
    const rendering = negotiate(r.req.headers.accept, { tableAllowed: true, includeObject: r.query.get('includeObject') ?? undefined, protobuf: false, cbor: false });
    const meta = { resourceVersion: '' };
    if (rendering.kind === 'table') {
      reply(r, 200, toTable(r.type, items, meta, rendering));
      return;
    }
    reply(r, 200, { apiVersion: apiVersionOf(r.type), kind: r.type.listKind, metadata: meta, items }, { yaml: rendering.kind === 'yaml' });
  };
}
