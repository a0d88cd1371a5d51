import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { AgentMetrics } from '../../../../agent/metrics/agent-metrics';
import { healthHandler, type HealthCheck } from '../../../../agent/server/health-handler';
import { metricsHandler } from '../../../../agent/server/metrics-handler';
import { podsHandler } from '../../../../agent/server/pods-handler';
import { answer, type RequestHandler } from '../../../../agent/server/node-server';
import type { ErrorBody } from '../../../../agent/server/status-reply';
import type { Pod } from '../../../../agent/api/core-v1';

/** Serves one handler behind the agent server's error edge (errors answered as its routes answer them). */
async function serve(t: { teardown(f: () => void): void }, handler: RequestHandler, errors: ErrorBody = 'status'): Promise<string> {
  const server: Server = createServer((req, res) => void answer(handler, req, res, { errors }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => void server.close());
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

test('health: ok when every check passes; failing checks are listed with a 500; readyz adds its checks; one check by name', async (t) => {
  let syncOk = true;
  let nodeWhy: string | undefined = 'container runtime: not answering';
  const live: HealthCheck[] = [
    { name: 'ping', check: () => undefined },
    { name: 'syncloop', check: () => (syncOk ? undefined : 'stuck') },
  ];
  const url = await serve(t, healthHandler({ live, ready: [{ name: 'node', check: () => Promise.resolve(nodeWhy) }] }), 'text');
  const get = async (p: string) => {
    const r = await fetch(url + p);
    return [r.status, await r.text()] as const;
  };
  t.deepEqual(await get('/healthz'), [200, 'ok']);
  t.deepEqual(await get('/livez'), [200, 'ok']);
  t.deepEqual(await get('/readyz'), [500, '[-]node failed: container runtime: not answering\nreadyz check failed\n']);
  nodeWhy = undefined;
  t.deepEqual(await get('/readyz?verbose'), [200, '[+]ping ok\n[+]syncloop ok\n[+]node ok\nreadyz check passed\n']);
  syncOk = false;
  t.deepEqual(await get('/healthz'), [500, '[-]syncloop failed: stuck\nhealthz check failed\n']);
  t.deepEqual(await get('/healthz/ping'), [200, 'ok']);
  t.is((await get('/healthz/nope'))[0], 404);
  t.is((await fetch(url + '/healthz', { method: 'POST' })).status, 405);
});

test('pods: a v1 PodList of what the agent runs', async (t) => {
  const pods = [{ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default', uid: 'u1' }, spec: { containers: [] }, status: { phase: 'Running' } }] as unknown as Pod[];
  const url = await serve(t, podsHandler({ runningPods: () => pods }));
  const r = await fetch(url + '/pods');
  t.is(r.status, 200);
  t.deepEqual(await r.json(), { kind: 'PodList', apiVersion: 'v1', metadata: {}, items: pods });
  t.is((await fetch(url + '/pods', { method: 'DELETE' })).status, 405);
});

test('metrics: the Prometheus text carries requests, heartbeats, runtime calls and checkpoints', async (t) => {
  const m = new AgentMetrics();
  m.request('POST', '/checkpoint', 200, 0.01);
  m.heartbeat('lease', true);
  m.heartbeat('status', false);
  m.runtimeCall('checkpoint_container', 0.2);
  m.runtimeCall('list_containers', 0.001, 'Unavailable');
  m.checkpoint('success', 0.3);
  m.archivesRemoved(2);
  const url = await serve(t, metricsHandler(m));
  const r = await fetch(url + '/metrics');
  t.is(r.status, 200);
  t.regex(r.headers.get('content-type') ?? '', /^text\/plain/);
  const text = await r.text();
  t.regex(text, /svc_node_http_requests_total\{method="POST",path="\/checkpoint",code="200"\} 1/);
  t.regex(text, /svc_node_node_heartbeats_total\{kind="lease",result="success"\} 1/);
  t.regex(text, /svc_node_node_heartbeats_total\{kind="status",result="failure"\} 1/);
  t.regex(text, /svc_node_runtime_operations_total\{operation_type="checkpoint_container"\} 1/);
  t.regex(text, /svc_node_runtime_operations_errors_total\{operation_type="list_containers",code="Unavailable"\} 1/);
  t.regex(text, /svc_node_container_checkpoints_total\{result="success"\} 1/);
  t.regex(text, /svc_node_container_checkpoint_duration_seconds_count 1/);
  t.regex(text, /svc_node_checkpoint_archives_removed_total 2/);
});
