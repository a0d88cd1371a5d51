import test from 'ava';
import { requestAttributes, subresourceFor, subresourcesFor, verbFor } from '../../../../agent/server/request-attributes';

test('paths map to the upstream sub-resources; unknown paths are proxy', (t) => {
  t.is(subresourceFor('/checkpoint/ns/pod/c'), 'checkpoint');
  t.is(subresourceFor('/containerLogs/ns/pod/c'), 'log');
  t.is(subresourceFor('/logs/'), 'log');
  t.is(subresourceFor('/metrics'), 'metrics');
  t.is(subresourceFor('/metrics/cadvisor'), 'metrics');
  t.is(subresourceFor('/healthz'), 'healthz');
  t.is(subresourceFor('/stats/summary'), 'stats');
  t.is(subresourceFor('/pods'), 'pods');
  t.is(subresourceFor('/spec/'), 'spec');
  t.is(subresourceFor('/livez'), 'healthz');
  t.is(subresourceFor('/readyz'), 'healthz');
  t.is(subresourceFor('/run/ns/pod/c'), 'proxy');
  t.is(subresourceFor('/checkpointx'), 'proxy');
});

test('/pods, /healthz (and /livez, /readyz), /configz fall back to nodes/proxy; the others do not', (t) => {
  t.deepEqual(subresourcesFor('/pods'), { subresource: 'pods', fallback: 'proxy' });
  t.deepEqual(subresourcesFor('/healthz'), { subresource: 'healthz', fallback: 'proxy' });
  t.deepEqual(subresourcesFor('/configz'), { subresource: 'configz', fallback: 'proxy' });
  t.deepEqual(subresourcesFor('/metrics'), { subresource: 'metrics' });
  t.deepEqual(subresourcesFor('/checkpoint/a/b/c'), { subresource: 'checkpoint' });
  t.deepEqual(subresourcesFor('/exec/a/b/c'), { subresource: 'proxy' });
  t.deepEqual(requestAttributes('GET', '/healthz', 'n1'), { verb: 'get', subresource: 'healthz', fallback: 'proxy', name: 'n1', path: '/healthz' });
});

test('methods map to API verbs (A.1)', (t) => {
  t.is(verbFor('POST'), 'create');
  t.is(verbFor('GET'), 'get');
  t.is(verbFor('HEAD'), 'get');
  t.is(verbFor('PUT'), 'update');
  t.is(verbFor('PATCH'), 'patch');
  t.is(verbFor('DELETE'), 'delete');
  t.deepEqual(requestAttributes('POST', '/checkpoint/a/b/c', 'n1'), { verb: 'create', subresource: 'checkpoint', name: 'n1', path: '/checkpoint/a/b/c' });
});
