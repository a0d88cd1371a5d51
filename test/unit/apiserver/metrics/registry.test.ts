import test from 'ava';
import { register as globalRegistry } from 'prom-client';
import { ApiMetrics, reportedVerb } from '../../../../apiserver/metrics/registry';

test('recordRequest counts by upstream verb, resource and code, and observes latency', async (t) => {
  const m = new ApiMetrics();
  m.recordRequest('create', 'configmaps', 201, 0.01);
  m.recordRequest('create', 'configmaps', 201, 0.03);
  m.recordRequest('create', 'configmaps', 503, 7);
  m.recordRequest('list', 'pods', 200, 0.002);
  m.recordRequest('get', '', 200, 0.001);
  const text = await m.metricsText();
  t.regex(text, /^# TYPE apiserver_request_total counter$/m);
  t.regex(text, /^apiserver_request_total\{verb="POST",resource="configmaps",code="201"\} 2$/m);
  t.regex(text, /^apiserver_request_total\{verb="POST",resource="configmaps",code="503"\} 1$/m);
  t.regex(text, /^apiserver_request_total\{verb="LIST",resource="pods",code="200"\} 1$/m);
  t.regex(text, /^apiserver_request_total\{verb="GET",resource="",code="200"\} 1$/m);
  t.regex(text, /^# TYPE apiserver_request_duration_seconds histogram$/m);
  t.regex(text, /^apiserver_request_duration_seconds_count\{verb="POST",resource="configmaps"\} 3$/m);
  t.regex(text, /^apiserver_request_duration_seconds_bucket\{le="0\.025",verb="POST",resource="configmaps"\} 1$/m);
  t.regex(text, /^apiserver_request_duration_seconds_bucket\{le="0\.05",verb="POST",resource="configmaps"\} 2$/m);
  t.regex(text, /^apiserver_request_duration_seconds_bucket\{le="8",verb="POST",resource="configmaps"\} 3$/m);
});

test('watches are counted but kept out of the latency histogram, as upstream does', async (t) => {
  const m = new ApiMetrics();
  m.recordRequest('watch', 'pods', 200, 1800);
  const text = await m.metricsText();
  t.regex(text, /^apiserver_request_total\{verb="WATCH",resource="pods",code="200"\} 1$/m);
  t.notRegex(text, /apiserver_request_duration_seconds_count\{verb="WATCH"/);
});

test('each ApiMetrics has its own registry, never the global one', async (t) => {
  const a = new ApiMetrics();
  const b = new ApiMetrics();
  a.recordRequest('get', 'pods', 200, 0.1);
  t.regex(await a.metricsText(), /apiserver_request_total\{verb="GET",resource="pods",code="200"\} 1/);
  t.notRegex(await b.metricsText(), /apiserver_request_total\{/);
  t.is(globalRegistry.getSingleMetric('apiserver_request_total'), undefined);
  t.is(a.contentType, 'text/plain; version=0.0.4; charset=utf-8');
});

test('process metrics are opt-in', async (t) => {
  t.notRegex(await new ApiMetrics().metricsText(), /process_resident_memory_bytes/);
  t.regex(await new ApiMetrics({ processMetrics: true }).metricsText(), /^process_resident_memory_bytes \d+/m);
});

test('reportedVerb maps API verbs to upstream reporting verbs', (t) => {
  t.deepEqual(
    ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection', 'apply', 'head'].map(reportedVerb),
    ['GET', 'LIST', 'WATCH', 'POST', 'PUT', 'PATCH', 'DELETE', 'DELETECOLLECTION', 'APPLY', 'HEAD'],
  );
});

test('include appends other registries to the exposition', async (t) => {
  const m = new ApiMetrics();
  m.include(() => '# HELP authentication_config_controller_automatic_reload_last_timestamp_seconds x\n# TYPE authentication_config_controller_automatic_reload_last_timestamp_seconds gauge\nauthentication_config_controller_automatic_reload_last_timestamp_seconds 5\n');
  const text = await m.metricsText();
  t.regex(text, /^# TYPE apiserver_request_total counter$/m);
  t.regex(text, /\nauthentication_config_controller_automatic_reload_last_timestamp_seconds 5\n$/);
});

test('watch cache gauges are read at each scrape; terminated watchers are counted per resource', async (t) => {
  const m = new ApiMetrics();
  let stats = { historyBytes: 1234, historyEvents: 5, watchers: new Map([['/configmaps', 3], ['apps/deployments', 1]]) };
  m.watchCache(() => stats);
  m.watcherTerminated('', 'configmaps');
  let text = await m.metricsText();
  t.regex(text, /^apiserver_registered_watchers\{group="",resource="configmaps"\} 3$/m);
  t.regex(text, /^apiserver_registered_watchers\{group="apps",resource="deployments"\} 1$/m);
  t.regex(text, /^apiserver_watch_cache_history_bytes 1234$/m);
  t.regex(text, /^apiserver_watch_cache_history_events 5$/m);
  t.regex(text, /^apiserver_terminated_watchers_total\{group="",resource="configmaps"\} 1$/m);
  stats = { historyBytes: 0, historyEvents: 0, watchers: new Map([['/configmaps', 1]]) };
  text = await m.metricsText();
  t.regex(text, /^apiserver_registered_watchers\{group="",resource="configmaps"\} 1$/m);
  t.notRegex(text, /resource="deployments"/, 'a resource no longer watched leaves the gauge');
  t.regex(text, /^apiserver_watch_cache_history_bytes 0$/m);
});

test('declarative validation mismatches and panics: upstream counters, [BETA], exported at 0 before any', async (t) => {
  const m = new ApiMetrics();
  const before = await m.metricsText();
  t.regex(before, /^# HELP apiserver_validation_declarative_validation_mismatch_total \[BETA\] Number of times declarative validation results differed from handwritten validation results for core types\.$/m);
  t.regex(before, /^# TYPE apiserver_validation_declarative_validation_mismatch_total counter$/m);
  t.regex(before, /^apiserver_validation_declarative_validation_mismatch_total 0$/m);
  t.regex(before, /^# HELP apiserver_validation_declarative_validation_panic_total \[BETA\] /m);
  t.regex(before, /^# TYPE apiserver_validation_declarative_validation_panic_total counter$/m);
  m.declarativeValidationMismatch();
  m.declarativeValidationMismatch();
  m.declarativeValidationPanic();
  const after = await m.metricsText();
  t.regex(after, /^apiserver_validation_declarative_validation_mismatch_total 2$/m);
  t.regex(after, /^apiserver_validation_declarative_validation_panic_total 1$/m);
});

test('lists served from the watch cache snapshots: upstream apiserver_cache_list_total{resource_prefix, index}, [ALPHA]', async (t) => {
  const m = new ApiMetrics();
  m.cacheListServed('/core/configmaps');
  m.cacheListServed('/core/configmaps');
  m.cacheListServed('/apps/deployments');
  const text = await m.metricsText();
  t.regex(text, /^# HELP apiserver_cache_list_total \[ALPHA\] /m);
  t.regex(text, /^apiserver_cache_list_total\{resource_prefix="\/core\/configmaps",index=""\} 2$/m);
  t.regex(text, /^apiserver_cache_list_total\{resource_prefix="\/apps\/deployments",index=""\} 1$/m);
});
