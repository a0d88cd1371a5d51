/**
 * The bundled metrics server: the usage cache, its scrape loop over the shared node informer (run
 * on every replica for the life of the process, since each serves metrics.k8s.io from its own
 * cache), and the get/list handlers of NodeMetrics and PodMetrics registered as virtual resources.
 */
import type { Logger } from 'pino';
import { realClock } from '../../common/informer/clock';
import type { ApiServerFlags } from '../config/flags';
import { agentSummaryClient } from '../controllers/metrics/agent-summary-client';
import { MetricsScraper } from '../controllers/metrics/metrics-scraper';
import { UsageCache } from '../controllers/metrics/usage-cache';
import type { ResourceRequest } from '../handlers/context';
import { resourceMetricsHandler } from '../handlers/resource-metrics';
import { METRICS_GROUP } from '../registry/types/metrics';
import type { StorageLayer } from './storage';
import type { StoreLayer } from './store';
import { kubeletClientTls, type ServingTls } from './tls';

export interface ResourceMetricsLayer {
  usage: UsageCache;
  /** Router entries: group/version/resource → handler. */
  virtual: ReadonlyMap<string, (r: ResourceRequest) => Promise<void>>;
  /** Scrapes until the signal aborts. */
  run(signal: AbortSignal): Promise<void>;
}

export function buildResourceMetrics(flags: ApiServerFlags, s: StorageLayer, core: StoreLayer, tls: ServingTls, log: Logger): ResourceMetricsLayer {
  const usage = new UsageCache();
  const nodes = s.registry.lookup('', 'v1', 'nodes')!;
  const pods = s.registry.lookup('', 'v1', 'pods')!;
  const handler = resourceMetricsHandler({ usage, nodes, pods });
  const nodeInformer = core.informers.informer(nodes);
  // metrics-server's scrape timeout is below its resolution; so is ours (at most 10 s).
  const timeoutMs = Math.max(1000, Math.min(10_000, Math.floor(flags.metricResolutionMs * 0.9)));
  const scraper = new MetricsScraper({
    nodes: () => nodeInformer.store.list(),
    fetchSummary: agentSummaryClient(kubeletClientTls(flags, tls.pki), timeoutMs),
    cache: usage,
    resolutionMs: flags.metricResolutionMs,
    clock: realClock,
    log: log.child({ component: 'metrics-scraper' }),
  });
  return {
    usage,
    virtual: new Map([
      [`${METRICS_GROUP}/v1beta1/nodes`, handler],
      [`${METRICS_GROUP}/v1beta1/pods`, handler],
    ]),
    run: async (signal) => {
      if (!(await nodeInformer.whenSynced(signal))) return;
      await scraper.run(signal);
    },
  };
}
