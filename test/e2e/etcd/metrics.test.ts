import test from 'ava';
import { startApiServer } from '../../helpers/apiserver-process';
import { startEtcdCluster } from '../../helpers/etcd-cluster';
import { call } from '../../helpers/http';

// /metrics reports request counts and latencies and the store's latencies (issue 7, point 4).
test('GET /metrics: apiserver_request_total, apiserver_request_duration_seconds and etcd_request_duration_seconds', async (t) => {
  const cluster = await startEtcdCluster({ size: 1 });
  const server = await startApiServer({ args: [`--etcd-servers=${cluster.endpoints()[0]}`] });
  t.teardown(async () => {
    await server.stop();
    await cluster.close();
  });
  const base = `${server.url}/api/v1/namespaces/default/configmaps`;
  t.is((await call(server.admin, 'POST', base, { metadata: { name: 'm1' } })).status, 201);
  t.is((await call(server.admin, 'POST', base, { metadata: { name: 'm1' } })).status, 409);
  t.is((await call(server.admin, 'GET', `${base}/m1`)).status, 200);
  t.is((await call(server.admin, 'GET', base)).status, 200);

  const m = await call(server.admin, 'GET', `${server.url}/metrics`);
  t.is(m.status, 200);
  t.regex(String(m.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  const value = (re: RegExp): number => Number(re.exec(m.text)?.[1] ?? NaN);
  t.is(value(/^apiserver_request_total\{verb="POST",resource="configmaps",code="201"\} (\d+)$/m), 1);
  t.is(value(/^apiserver_request_total\{verb="POST",resource="configmaps",code="409"\} (\d+)$/m), 1);
  t.is(value(/^apiserver_request_total\{verb="GET",resource="configmaps",code="200"\} (\d+)$/m), 1);
  t.is(value(/^apiserver_request_total\{verb="LIST",resource="configmaps",code="200"\} (\d+)$/m), 1);
  t.true(value(/^apiserver_request_total\{verb="GET",resource="",code="200"\} (\d+)$/m) >= 1, 'readyz polls are non-resource GETs');
  t.is(value(/^apiserver_request_duration_seconds_count\{verb="POST",resource="configmaps"\} (\d+)$/m), 2);
  t.true(value(/^etcd_request_duration_seconds_count\{operation="create",type="configmaps"\} (\d+)$/m) >= 2);
  t.is(value(/^etcd_request_errors_total\{operation="create",type="configmaps"\} (\d+)$/m), 1, 'the AlreadyExists create');
  t.true(value(/^etcd_request_duration_seconds_count\{operation="get",type="configmaps"\} (\d+)$/m) >= 1);
  t.true(value(/^etcd_request_duration_seconds_count\{operation="currentRevision",type=""\} (\d+)$/m) >= 1);
  t.regex(m.text, /^process_resident_memory_bytes \d+/m);

  // Like other non-resource paths, /metrics needs an authorized user.
  const anonymous = await call(server.anonymous, 'GET', `${server.url}/metrics`);
  t.true(anonymous.status === 401 || anonymous.status === 403, `anonymous /metrics: ${anonymous.status}`);
});
