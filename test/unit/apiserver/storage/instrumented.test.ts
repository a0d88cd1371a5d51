import test from 'ava';
import { ApiMetrics } from '../../../../apiserver/metrics/registry';
import { InstrumentedStorage, storeType, type StoreLatencyRecorder } from '../../../../apiserver/storage/instrumented';
import { SqliteStorage } from '../../../../apiserver/storage/sqlite';
import { StorageError } from '../../../../apiserver/storage/storage';
import { storageConformance } from '../../../conformance/storage-suite';

// The decorator must not change behaviour: the whole conformance suite runs through it.
storageConformance('instrumented(sqlite)', () => {
  const inner = SqliteStorage.open(':memory:');
  const storage = new InstrumentedStorage(inner, { recordStore: () => undefined }, () => 0);
  return { storage, cleanup: () => storage.close() };
});

interface Recorded {
  operation: string;
  type: string;
  seconds: number;
  failed: boolean;
}

function recorder(): StoreLatencyRecorder & { calls: Recorded[] } {
  const calls: Recorded[] = [];
  return { calls, recordStore: (operation, type, seconds, failed) => void calls.push({ operation, type, seconds, failed }) };
}

/** A clock that advances 250 ms every time it is read, so each call lasts exactly 0.25 s. */
function steppingClock(): () => number {
  let t = 1000;
  return () => (t += 250);
}

test('each call is recorded with its operation, the type from its key, its duration and whether it failed', async (t) => {
  const r = recorder();
  const s = new InstrumentedStorage(SqliteStorage.open(':memory:'), r, steppingClock());
  t.teardown(() => s.close());
  const kv = await s.create('/core/configmaps/default/a', Buffer.from('{}'));
  await s.get('/core/configmaps/default/a');
  await s.update('/core/configmaps/default/a', Buffer.from('{"x":1}'), kv.modRevision);
  const err = await t.throwsAsync(s.update('/core/configmaps/default/a', Buffer.from('{}'), kv.modRevision));
  t.true(err instanceof StorageError && err.code === 'Conflict', 'errors pass through unchanged');
  await s.list('/coordination.svc.io/leases/');
  await s.delete('/core/configmaps/default/a');
  const rev = await s.currentRevision();
  await s.compact(rev);
  await s.compactedRevision();
  t.deepEqual(r.calls, [
    { operation: 'create', type: 'configmaps', seconds: 0.25, failed: false },
    { operation: 'get', type: 'configmaps', seconds: 0.25, failed: false },
    { operation: 'update', type: 'configmaps', seconds: 0.25, failed: false },
    { operation: 'update', type: 'configmaps', seconds: 0.25, failed: true },
    { operation: 'list', type: 'leases.coordination.svc.io', seconds: 0.25, failed: false },
    { operation: 'delete', type: 'configmaps', seconds: 0.25, failed: false },
    { operation: 'currentRevision', type: '', seconds: 0.25, failed: false },
    { operation: 'compact', type: '', seconds: 0.25, failed: false },
    { operation: 'compactedRevision', type: '', seconds: 0.25, failed: false },
  ]);
});

test('watches are passed through untimed', async (t) => {
  const r = recorder();
  const s = new InstrumentedStorage(SqliteStorage.open(':memory:'), r, steppingClock());
  t.teardown(() => s.close());
  const ac = new AbortController();
  const it = s.watch('/core/', 0, ac.signal)[Symbol.asyncIterator]();
  const next = it.next();
  await s.create('/core/pods/ns/p', Buffer.from('{}'));
  const ev = await next;
  ac.abort();
  t.is(ev.value?.key, '/core/pods/ns/p');
  t.deepEqual(r.calls.map((c) => c.operation), ['create']);
});

test('storeType names the group-resource as upstream labels it', (t) => {
  t.is(storeType('/core/pods/default/web'), 'pods');
  t.is(storeType('/core/namespaces/kube-system'), 'namespaces');
  t.is(storeType('/core/configmaps/'), 'configmaps');
  t.is(storeType('/apps/deployments/default/x'), 'deployments.apps');
  t.is(storeType('/coordination.svc.io/leases/svc-system/l'), 'leases.coordination.svc.io');
  t.is(storeType('/'), '');
  t.is(storeType('/core/'), '');
  t.is(storeType(''), '');
});

test('latencies reach etcd_request_duration_seconds through ApiMetrics', async (t) => {
  const m = new ApiMetrics();
  const s = new InstrumentedStorage(SqliteStorage.open(':memory:'), m, steppingClock());
  t.teardown(() => s.close());
  await s.create('/core/secrets/ns/a', Buffer.from('{}'));
  await t.throwsAsync(s.create('/core/secrets/ns/a', Buffer.from('{}')));
  const text = await m.metricsText();
  t.regex(text, /^etcd_request_duration_seconds_count\{operation="create",type="secrets"\} 2$/m);
  t.regex(text, /^etcd_request_duration_seconds_sum\{operation="create",type="secrets"\} 0\.5$/m);
  t.regex(text, /^etcd_request_duration_seconds_bucket\{le="0\.2",operation="create",type="secrets"\} 0$/m);
  t.regex(text, /^etcd_request_duration_seconds_bucket\{le="0\.4",operation="create",type="secrets"\} 2$/m);
  t.regex(text, /^etcd_request_errors_total\{operation="create",type="secrets"\} 1$/m);
});
