/**
 * The bundled metrics server's scrape loop with fake agents (controllers/metrics/): Ready nodes are
 * read, others and failing ones forgotten; summaries become usage with incomplete pods left out;
 * the handler's quantity and duration formats follow metrics-server's.
 */
import test from 'ava';
import pino from 'pino';
import type { KObject } from '../../../../../apiserver/api/types';
import { MetricsScraper } from '../../../../../apiserver/controllers/metrics/metrics-scraper';
import { usageFromSummary } from '../../../../../apiserver/controllers/metrics/summary-usage';
import { UsageCache } from '../../../../../apiserver/controllers/metrics/usage-cache';
import { formatGoDuration, parseGoDuration } from '../../../../../apiserver/api/go-duration';
import { cpuQuantity, memoryQuantity } from '../../../../../apiserver/handlers/resource-metrics';
import { FakeClock } from '../../../../helpers/fake-clock';

const T = '2025-01-01T00:00:10Z';

function node(name: string, ready: 'True' | 'False' | 'Unknown'): KObject {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name }, status: { conditions: [{ type: 'Ready', status: ready }] } };
}

function summary(pods: Array<{ name: string; containers: Array<[string, number | undefined, number]> }>): unknown {
  return {
    node: { nodeName: 'n', cpu: { time: T, usageNanoCores: 1_500_000_000 }, memory: { time: T, workingSetBytes: 2 * 1024 ** 3 } },
    pods: pods.map((p) => ({
      podRef: { name: p.name, namespace: 'default', uid: 'u' },
      containers: p.containers.map(([name, cpu, mem]) => ({ name, cpu: { time: T, ...(cpu !== undefined ? { usageNanoCores: cpu } : {}) }, memory: { time: T, workingSetBytes: mem } })),
    })),
  };
}

test('usageFromSummary: node and complete pods; a pod with a container lacking CPU is left out; garbage is refused', (t) => {
  const s = usageFromSummary(summary([{ name: 'a', containers: [['app', 250_000_000, 1024]] }, { name: 'b', containers: [['app', 1, 1], ['side', undefined, 1]] }]), 0, 15_000);
  t.deepEqual(s.node, { timestampMs: Date.parse(T), windowMs: 15_000, cpuNanoCores: 1_500_000_000, memoryBytes: 2 * 1024 ** 3 });
  t.deepEqual([...s.pods.keys()], ['default/a']);
  t.deepEqual(s.pods.get('default/a')?.containers, [{ name: 'app', cpuNanoCores: 250_000_000, memoryBytes: 1024 }]);
  t.throws(() => usageFromSummary({ items: [] }, 0, 15_000), { message: /not a stats summary/ });
});

test('scraper: reads Ready nodes each resolution, forgets not-Ready, failing and removed nodes', async (t) => {
  const clock = new FakeClock();
  const cache = new UsageCache();
  let nodes = [node('n1', 'True'), node('n2', 'True'), node('n3', 'Unknown')];
  const calls: string[] = [];
  let n2fails = false;
  const scraper = new MetricsScraper({
    nodes: () => nodes,
    fetchSummary: (n) => {
      calls.push(n.metadata.name!);
      if (n.metadata.name === 'n2' && n2fails) return Promise.reject(new Error('connection refused'));
      return Promise.resolve(summary([{ name: `pod-${n.metadata.name}`, containers: [['app', 100_000_000, 4096]] }]));
    },
    cache,
    resolutionMs: 15_000,
    clock,
    log: pino({ level: 'silent' }),
  });
  const ac = new AbortController();
  const running = scraper.run(ac.signal);
  const settle = async () => {
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  };
  await settle();
  t.deepEqual(calls.sort(), ['n1', 'n2'], 'the not-Ready node is not asked');
  t.truthy(cache.node('n1'));
  t.truthy(cache.pod('default', 'pod-n2'));
  t.is(cache.node('n3'), undefined);

  n2fails = true;
  nodes = [node('n2', 'True')];
  await clock.advance(15_000);
  await settle();
  t.deepEqual(calls.slice(2), ['n2']);
  t.is(cache.node('n1'), undefined, 'a removed node is forgotten');
  t.is(cache.pod('default', 'pod-n1'), undefined);
  t.is(cache.node('n2'), undefined, 'a failed scrape is forgotten');
  t.is(cache.pod('default', 'pod-n2'), undefined);
  ac.abort();
  await running;
});

test('formats: CPU and memory quantities and windows as metrics-server writes them', (t) => {
  t.is(cpuQuantity(250_000_000), '250m');
  t.is(cpuQuantity(2_000_000_000), '2');
  t.is(cpuQuantity(1234), '1234n');
  t.is(cpuQuantity(5000), '5u');
  t.is(memoryQuantity(64 * 1024 * 1024), '64Mi');
  t.is(memoryQuantity(1536 * 1024), '1536Ki');
  t.is(memoryQuantity(1000), '1000');
  t.is(formatGoDuration(15e9), '15s');
  t.is(formatGoDuration(1.5e9), '1.5s');
  t.is(formatGoDuration(150e9), '2m30s');
  t.is(formatGoDuration(3600e9), '1h0m0s');
  t.is(formatGoDuration(500e6), '500ms');
  t.is(formatGoDuration(0), '0s');
  for (const text of ['15s', '1.5s', '2m30s', '1h0m0s', '500ms', '0s', '1h2m3.25s', '-4m']) t.is(formatGoDuration(parseGoDuration(text)!), text === '-4m' ? '-4m0s' : text);
  t.is(parseGoDuration('1h30'), undefined);
  t.is(parseGoDuration(''), undefined);
});
