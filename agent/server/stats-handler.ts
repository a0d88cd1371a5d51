/**
 * GET /stats/summary (the kubelet's Summary API, JSON; `?only_cpu_and_memory=true` keeps CPU and
 * memory only, as upstream's) and GET /metrics/resource (the same readings in the Prometheus text
 * format, upstream's resource metrics). Authorized as nodes/stats and nodes/metrics by the path
 * (request-attributes.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MethodNotAllowedError, NotFoundError } from '../errors';
import type { Log } from '../platform/logger';
import { renderResourceMetrics } from '../stats/resource-metrics';
import type { PodStats, Summary } from '../stats/types';

/** Where the readings come from. */
export interface SummarySource {
  /** The node's and its pods' usage now; rejects when the runtime cannot be asked. */
  summary(): Promise<Summary>;
}

function checkGet(req: IncomingMessage): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') throw new MethodNotAllowedError(`method ${req.method ?? ''} not allowed; use GET`);
}

function cpuAndMemoryOnly(s: Summary): Summary {
  const { nodeName, startTime, cpu, memory } = s.node;
  const pods = s.pods.map((p): PodStats => ({
    podRef: p.podRef,
    startTime: p.startTime,
    containers: p.containers.map((c) => ({ name: c.name, startTime: c.startTime, ...(c.cpu ? { cpu: c.cpu } : {}), ...(c.memory ? { memory: c.memory } : {}) })),
    ...(p.cpu ? { cpu: p.cpu } : {}),
    ...(p.memory ? { memory: p.memory } : {}),
  }));
  return { node: { nodeName, startTime, ...(cpu ? { cpu } : {}), ...(memory ? { memory } : {}) }, pods };
}

/**
 * Everything under /stats/: the Summary at /stats/summary (answered as JSON by the server); other
 * paths are 404, as upstream's kubelet dropped its older per-container stats paths.
 */
export function summaryHandler(source: SummarySource): (req: IncomingMessage) => Promise<unknown> {
  return async (req) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname !== '/stats/summary') throw new NotFoundError(`no stats at ${url.pathname}: the Summary API is /stats/summary`);
    checkGet(req);
    const q = url.searchParams.get('only_cpu_and_memory');
    const s = await source.summary();
    return q === 'true' ? cpuAndMemoryOnly(s) : s;
  };
}

/** /metrics/resource: a failed read is answered 200 with resource_scrape_error 1, as upstream's collector. */
export function resourceMetricsHandler(source: SummarySource, log: Log): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    checkGet(req);
    let s: Summary | undefined;
    try {
      s = await source.summary();
    } catch (e) {
      log.warn({ error: (e as Error).message }, 'resource metrics: cannot read the usage');
    }
    const body = renderResourceMetrics(s);
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
}
