/** The cluster DNS server's figures on the agent's /metrics, read at each scrape. */
import test from 'ava';
import { AgentMetrics } from '../../../../agent/metrics/agent-metrics';

test('svc_node_dns_* report the handler counters and the cache size as they are at the scrape', async (t) => {
  const m = new AgentMetrics();
  const c = { cluster: 7, forwarded: 3, cacheHits: 5, servfail: 1, refused: 2 };
  let entries = 4;
  m.observeDns({ counters: () => c, cacheEntries: () => entries });
  let text = await m.registry.metrics();
  t.regex(text, /svc_node_dns_requests_total\{source="cluster"\} 7/);
  t.regex(text, /svc_node_dns_requests_total\{source="cache"\} 5/);
  t.regex(text, /svc_node_dns_requests_total\{source="forward"\} 3/);
  t.regex(text, /svc_node_dns_responses_failed_total\{rcode="SERVFAIL"\} 1/);
  t.regex(text, /svc_node_dns_responses_failed_total\{rcode="REFUSED"\} 2/);
  t.regex(text, /svc_node_dns_cache_entries 4/);
  c.cluster = 9;
  entries = 0;
  text = await m.registry.metrics();
  t.regex(text, /svc_node_dns_requests_total\{source="cluster"\} 9/);
  t.regex(text, /svc_node_dns_cache_entries 0/);
});
