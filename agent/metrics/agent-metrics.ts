/**
 * The agent's Prometheus metrics (served at /metrics), in a Registry of its own (never
 * prom-client's global one, so tests and benches with several agents in a process do not share
 * counters). Names follow upstream's kubelet metrics with the svc_node_ prefix instead of kubelet_:
 * - svc_node_http_requests_total{method, path, code} / svc_node_http_requests_duration_seconds{method, path}:
 *   the agent server's requests; path is the endpoint's first segment (/checkpoint, /containerLogs,
 *   ...) so that pod names never become label values (upstream labels by path the same way).
 * - svc_node_node_heartbeats_total{kind, result}: Lease renewals and node status syncs, success or failure.
 * - svc_node_runtime_operations_duration_seconds{operation_type}, svc_node_runtime_operations_total,
 *   svc_node_runtime_operations_errors_total{operation_type, code}: every CRI call (upstream's
 *   kubelet_runtime_operations_*).
 * - svc_node_container_checkpoints_total{result} and svc_node_container_checkpoint_duration_seconds:
 *   POST /checkpoint outcomes and durations; svc_node_checkpoint_archives_removed_total counts the
 *   retention policy's deletions.
 * - svc_node_events_dropped_total{reason}: events the agent did not write (QueueFull, Spam,
 *   Rejected, RetriesExhausted); upstream's kubelet only logs them.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { HeartbeatObserver } from '../node/heartbeat-observer';

/** Upstream's kubelet runtime-operation buckets (seconds). */
const RUNTIME_BUCKETS = [0.005, 0.0125, 0.03125, 0.078125, 0.1953125, 0.48828125, 1.220703125, 3.0517578125, 7.62939453125, 19.073486328125, 47.6837158203125, 119.20928955078125];
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** Receives the timing of each container runtime call. */
export interface RuntimeCallObserver {
  /** A CRI call finished after `seconds`; errorCode is set (the gRPC status name) when it failed. Must not throw. */
  runtimeCall(operation: string, seconds: number, errorCode?: string): void;
}

/** Receives the agent server's requests. */
export interface RequestObserver {
  /** One request answered with `code` after `seconds`. Must not throw. */
  request(method: string, path: string, code: number, seconds: number): void;
}

/** Receives checkpoint outcomes and retention deletions. */
export interface CheckpointObserver {
  /** One checkpoint request ran the runtime call; result "success" or "failure". Must not throw. */
  checkpoint(result: 'success' | 'failure', seconds: number): void;
  /** The retention policy removed `n` archives. Must not throw. */
  archivesRemoved(n: number): void;
}

/** The endpoint label for a request path: its first segment, or "other" for paths the server does not serve. */
export function pathLabel(path: string, known: readonly string[]): string {
  const first = '/' + (path.split('/')[1] ?? '');
  return known.includes(first) ? first : 'other';
}

/** The cluster DNS server's counts (agent/dns QueryHandler's counters and its cache), read at every scrape. */
export interface DnsCounts {
  counters(): { cluster: number; forwarded: number; cacheHits: number; servfail: number; refused: number };
  cacheEntries(): number;
}

/** Open streaming connections (exec, attach, port-forward) and the runtime streams behind them. */
export interface StreamCounts {
  connections(): number;
  runtimeStreams(): number;
}

export class AgentMetrics implements RuntimeCallObserver, RequestObserver, CheckpointObserver, HeartbeatObserver {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'path' | 'code'>;
  private readonly requestLatency: Histogram<'method' | 'path'>;
  private readonly heartbeats: Counter<'kind' | 'result'>;
  private readonly runtimeLatency: Histogram<'operation_type'>;
  private readonly runtimeCalls: Counter<'operation_type'>;
  private readonly runtimeErrors: Counter<'operation_type' | 'code'>;
  private readonly checkpoints: Counter<'result'>;
  private readonly checkpointLatency: Histogram<never>;
  private readonly removed: Counter<never>;
  private readonly droppedEvents: Counter<'reason'>;

  /** Reports the streams' counts at every scrape (`svc_node_streaming_connections`, `svc_node_runtime_streams`). */
  observeStreams(counts: StreamCounts): void {
    const registers = [this.registry];
    new Gauge({ name: 'svc_node_streaming_connections', help: 'Exec, attach and port-forward connections open on the agent server.', registers, collect() { this.set(counts.connections()); } });
    new Gauge({ name: 'svc_node_runtime_streams', help: 'Streams open to the container runtime for exec, attach and port-forward.', registers, collect() { this.set(counts.runtimeStreams()); } });
  }

  /**
   * Reports the cluster DNS server at every scrape (names after CoreDNS's metrics, prefixed):
   * svc_node_dns_requests_total by where the answer came from (cluster records, cache, forwarded),
   * svc_node_dns_responses_failed_total by rcode (SERVFAIL from upstream failures, REFUSED at the
   * forwarding limit), svc_node_dns_cache_entries.
   */
  observeDns(dns: DnsCounts): void {
    const registers = [this.registry];
    new Counter({
      name: 'svc_node_dns_requests_total',
      help: 'Queries the cluster DNS server answered, by source: cluster (records), cache, forward (upstream).',
      labelNames: ['source'],
      registers,
      collect() {
        const c = dns.counters();
        this.reset();
        this.inc({ source: 'cluster' }, c.cluster);
        this.inc({ source: 'cache' }, c.cacheHits);
        this.inc({ source: 'forward' }, c.forwarded);
      },
    });
    new Counter({
      name: 'svc_node_dns_responses_failed_total',
      help: 'Forwarded queries answered with an error by the cluster DNS server, by rcode.',
      labelNames: ['rcode'],
      registers,
      collect() {
        const c = dns.counters();
        this.reset();
        this.inc({ rcode: 'SERVFAIL' }, c.servfail);
        this.inc({ rcode: 'REFUSED' }, c.refused);
      },
    });
    new Gauge({ name: 'svc_node_dns_cache_entries', help: 'Forwarded answers in the cluster DNS server\'s cache.', registers, collect() { this.set(dns.cacheEntries()); } });
  }

  constructor() {
    const registers = [this.registry];
    this.requests = new Counter({ name: 'svc_node_http_requests_total', help: 'Requests to the agent server by method, endpoint path and HTTP code.', labelNames: ['method', 'path', 'code'], registers });
    this.requestLatency = new Histogram({ name: 'svc_node_http_requests_duration_seconds', help: 'Latency of the agent server\'s requests by method and endpoint path.', labelNames: ['method', 'path'], buckets: HTTP_BUCKETS, registers });
    this.heartbeats = new Counter({ name: 'svc_node_node_heartbeats_total', help: 'Node heartbeat attempts (kind lease or status) by result.', labelNames: ['kind', 'result'], registers });
    this.runtimeLatency = new Histogram({ name: 'svc_node_runtime_operations_duration_seconds', help: 'Duration in seconds of container runtime operations by operation type.', labelNames: ['operation_type'], buckets: RUNTIME_BUCKETS, registers });
    this.runtimeCalls = new Counter({ name: 'svc_node_runtime_operations_total', help: 'Container runtime operations by operation type.', labelNames: ['operation_type'], registers });
    this.runtimeErrors = new Counter({ name: 'svc_node_runtime_operations_errors_total', help: 'Failed container runtime operations by operation type and gRPC code.', labelNames: ['operation_type', 'code'], registers });
    this.checkpoints = new Counter({ name: 'svc_node_container_checkpoints_total', help: 'Container checkpoint requests that reached the runtime, by result.', labelNames: ['result'], registers });
    this.checkpointLatency = new Histogram({ name: 'svc_node_container_checkpoint_duration_seconds', help: 'Duration of container checkpoints (runtime call and archive verification).', buckets: RUNTIME_BUCKETS, registers });
    this.droppedEvents = new Counter({ name: 'svc_node_events_dropped_total', help: 'Events the agent did not write, by reason.', labelNames: ['reason'], registers });
    this.removed = new Counter({ name: 'svc_node_checkpoint_archives_removed_total', help: 'Checkpoint archives removed by the retention policy.', registers });
  }

  request(method: string, path: string, code: number, seconds: number): void {
    this.requests.inc({ method, path, code: String(code) });
    this.requestLatency.observe({ method, path }, seconds);
  }

  heartbeat(kind: 'lease' | 'status', ok: boolean): void {
    this.heartbeats.inc({ kind, result: ok ? 'success' : 'failure' });
  }

  runtimeCall(operation: string, seconds: number, errorCode?: string): void {
    this.runtimeCalls.inc({ operation_type: operation });
    this.runtimeLatency.observe({ operation_type: operation }, seconds);
    if (errorCode !== undefined) this.runtimeErrors.inc({ operation_type: operation, code: errorCode });
  }

  checkpoint(result: 'success' | 'failure', seconds: number): void {
    this.checkpoints.inc({ result });
    this.checkpointLatency.observe(seconds);
  }

  archivesRemoved(n: number): void {
    if (n > 0) this.removed.inc(n);
  }

  /** One event not written. */
  eventDropped(reason: string): void {
    this.droppedEvents.inc({ reason });
  }

  /** The Prometheus text exposition and its content type. */
  async text(): Promise<{ body: string; contentType: string }> {
    return { body: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}
