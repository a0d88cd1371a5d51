/**
 * The proxy's metrics on the agent's /metrics, with upstream kube-proxy's names and buckets
 * (pkg/proxy/metrics): kubeproxy_sync_proxy_rules_duration_seconds (every sync),
 * kubeproxy_sync_full_proxy_rules_duration_seconds and
 * kubeproxy_sync_partial_proxy_rules_duration_seconds (by kind), and
 * kubeproxy_sync_proxy_rules_last_timestamp_seconds (the last successful sync).
 */
import { Gauge, Histogram, type Registry } from 'prom-client';
import type { SyncObserver } from './proxier';

/** Upstream's buckets: exponential from 1 ms, factor 2, 15 buckets. */
const BUCKETS = Array.from({ length: 15 }, (_, i) => 0.001 * 2 ** i);

export function proxyMetrics(registry: Registry): SyncObserver {
  const registers = [registry];
  const all = new Histogram({ name: 'kubeproxy_sync_proxy_rules_duration_seconds', help: 'SyncProxyRules latency in seconds', buckets: BUCKETS, registers });
  const full = new Histogram({ name: 'kubeproxy_sync_full_proxy_rules_duration_seconds', help: 'SyncProxyRules latency in seconds for full resyncs', buckets: BUCKETS, registers });
  const partial = new Histogram({ name: 'kubeproxy_sync_partial_proxy_rules_duration_seconds', help: 'SyncProxyRules latency in seconds for partial resyncs', buckets: BUCKETS, registers });
  const last = new Gauge({ name: 'kubeproxy_sync_proxy_rules_last_timestamp_seconds', help: 'The last time proxy rules were successfully synced', registers });
  return {
    synced(seconds, isFull, atMs) {
      all.observe(seconds);
      (isFull ? full : partial).observe(seconds);
      last.set(atMs / 1000);
    },
  };
}
