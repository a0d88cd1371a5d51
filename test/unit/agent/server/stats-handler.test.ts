/**
 * GET /stats/summary and /metrics/resource behind the agent server's error edge: the Summary as
 * JSON (only CPU and memory when asked), the Prometheus text, a failed read as a 500 for the
 * summary and as resource_scrape_error 1 for the metrics, other methods 405.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { answer, type RequestHandler } from '../../../../agent/server/node-server';
import { resourceMetricsHandler, summaryHandler, type SummarySource } from '../../../../agent/server/stats-handler';
import type { Summary } from '../../../../agent/stats/types';

async function serve(t: { teardown(f: () => void): void }, handler: RequestHandler): Promise<string> {
  const server: Server = createServer((req, res) => void answer(handler, req, res, { errors: 'status' }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => void server.close());
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const time = '2025-01-01T00:00:00Z';
const summary: Summary = {
  node: { nodeName: 'n1', startTime: time, cpu: { time, usageNanoCores: 5, usageCoreNanoSeconds: 9 }, memory: { time, workingSetBytes: 7 }, fs: { time, usedBytes: 1 } },
  pods: [{ podRef: { name: 'p', namespace: 'default', uid: 'u' }, startTime: time, containers: [{ name: 'c', startTime: time, cpu: { time, usageNanoCores: 1 }, rootfs: { time, usedBytes: 3 } }], 'ephemeral-storage': { time, usedBytes: 3 } }],
};
const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, child: () => silent } as never;

test('summary: JSON; only_cpu_and_memory drops filesystems; a failed read is a 500; POST is 405', async (t) => {
  let fail = false;
  const source: SummarySource = { summary: () => (fail ? Promise.reject(new Error('runtime down')) : Promise.resolve(summary)) };
  const url = await serve(t, summaryHandler(source));
  t.deepEqual(await (await fetch(`${url}/stats/summary`)).json(), summary);
  const only = (await (await fetch(`${url}/stats/summary?only_cpu_and_memory=true`)).json()) as Summary;
  t.deepEqual(only.node, { nodeName: 'n1', startTime: time, cpu: summary.node.cpu, memory: summary.node.memory });
  t.deepEqual(only.pods[0].containers, [{ name: 'c', startTime: time, cpu: { time, usageNanoCores: 1 } }]);
  t.false('ephemeral-storage' in only.pods[0]);
  t.is((await fetch(`${url}/stats/summary`, { method: 'POST' })).status, 405);
  t.is((await fetch(`${url}/stats/default/p/c`)).status, 404);
  fail = true;
  t.is((await fetch(`${url}/stats/summary`)).status, 500);
});

test('resource metrics: the text format; a failed read answers resource_scrape_error 1', async (t) => {
  let fail = false;
  const source: SummarySource = { summary: () => (fail ? Promise.reject(new Error('runtime down')) : Promise.resolve(summary)) };
  const url = await serve(t, resourceMetricsHandler(source, silent));
  const ok = await fetch(`${url}/metrics/resource`);
  t.is(ok.status, 200);
  t.regex(ok.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  t.regex(await ok.text(), /^node_cpu_usage_seconds_total 9e-09 \d+$/m);
  fail = true;
  const failed = await fetch(`${url}/metrics/resource`);
  t.is(failed.status, 200);
  t.regex(await failed.text(), /^resource_scrape_error 1$/m);
});
