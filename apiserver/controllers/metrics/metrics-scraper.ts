/**
 * The bundled metrics server's scrape loop: every resolution (metrics-server's --metric-resolution,
 * 15 s by default) it reads /stats/summary from the agent of each Ready node, at most `concurrency`
 * at a time, and replaces that node's entry in the UsageCache; a node that fails (logged) or is no
 * longer Ready is forgotten, so stale usage is never served. Runs on every API server replica (each
 * serves the metrics API from its own cache), not under leader election.
 */
import type { Logger } from 'pino';
import { sleepOn, type Clock } from '../../../common/informer/clock';
import type { KObject } from '../../api/types';
import { usageFromSummary } from './summary-usage';
import type { UsageCache } from './usage-cache';

export interface ScraperOptions {
  /** The nodes as the shared informer holds them. */
  nodes: () => readonly KObject[];
  /** Fetches a node's summary JSON (agentSummaryClient); rejects when the agent cannot be read. */
  fetchSummary: (node: KObject) => Promise<unknown>;
  cache: UsageCache;
  resolutionMs: number;
  clock: Clock;
  log: Logger;
  concurrency?: number;
}

function ready(node: KObject): boolean {
  const conditions = (node.status as { conditions?: Array<{ type?: string; status?: string }> } | undefined)?.conditions ?? [];
  return conditions.some((c) => c.type === 'Ready' && c.status === 'True');
}

export class MetricsScraper {
  constructor(private readonly o: ScraperOptions) {}

  async run(signal: AbortSignal): Promise<void> {
    do {
      await this.scrapeOnce();
    } while (await sleepOn(this.o.clock, this.o.resolutionMs, signal));
  }

  /** One round over every node; resolves when each has been read or has failed. */
  async scrapeOnce(): Promise<void> {
    const nodes = this.o.nodes();
    const names = new Set(nodes.map((n) => n.metadata.name!));
    for (const name of this.o.cache.nodeNames()) if (!names.has(name)) this.o.cache.set(name, undefined);
    const queue = [...nodes];
    const worker = async (): Promise<void> => {
      for (let n = queue.shift(); n; n = queue.shift()) await this.scrapeNode(n);
    };
    await Promise.all(Array.from({ length: Math.min(this.o.concurrency ?? 10, queue.length) }, worker));
  }

  private async scrapeNode(node: KObject): Promise<void> {
    const name = node.metadata.name!;
    if (!ready(node)) {
      this.o.cache.set(name, undefined);
      return;
    }
    try {
      const body = await this.o.fetchSummary(node);
      this.o.cache.set(name, usageFromSummary(body, this.o.clock.now(), this.o.resolutionMs));
    } catch (err) {
      this.o.cache.set(name, undefined);
      this.o.log.warn({ node: name, err: (err as Error).message }, 'failed to scrape the node\'s resource usage');
    }
  }
}
