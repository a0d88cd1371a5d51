import test from 'ava';
import { DEFAULT_SUBRESOURCE, NODE_PATH_RULES, requestAttributes, subresourceFor, subresourcesFor, verbFor } from '../../../../agent/server/request-attributes';

test('paths map to the upstream sub-resources; unknown paths are proxy', (t) => {
  t.is(subresourceFor('/checkpoint/ns/pod/c'), 'checkpoint');
  // Issue 16, defect 8: /containerLogs is nodes/proxy as upstream's kubelet has it; nodes/log is /logs.
  t.is(subresourceFor('/containerLogs/ns/pod/c'), 'proxy');
  t.is(subresourceFor('/logs/'), 'log');
  t.is(subresourceFor('/logs/syslog'), 'log');
  t.is(subresourceFor('/metrics'), 'metrics');
  t.is(subresourceFor('/metrics/cadvisor'), 'metrics');
  t.is(subresourceFor('/healthz'), 'healthz');
  t.is(subresourceFor('/stats/summary'), 'stats');
  t.is(subresourceFor('/pods'), 'pods');
  t.is(subresourceFor('/runningPods/'), 'pods');
  t.is(subresourceFor('/spec/'), 'proxy');
  t.is(subresourceFor('/livez'), 'healthz');
  t.is(subresourceFor('/readyz'), 'healthz');
  t.is(subresourceFor('/run/ns/pod/c'), 'proxy');
  t.is(subresourceFor('/exec/ns/pod/c'), 'proxy');
  t.is(subresourceFor('/checkpointx'), 'proxy');
  t.is(subresourceFor('/logsx'), 'proxy');
  t.is(subresourceFor('/'), 'proxy');
});

test('/pods, /runningPods, /healthz (and /livez, /readyz), /configz fall back to nodes/proxy; the others do not', (t) => {
  t.deepEqual(subresourcesFor('/pods'), { subresource: 'pods', fallback: 'proxy' });
  t.deepEqual(subresourcesFor('/runningPods'), { subresource: 'pods', fallback: 'proxy' });
  t.deepEqual(subresourcesFor('/healthz'), { subresource: 'healthz', fallback: 'proxy' });
  t.deepEqual(subresourcesFor('/configz'), { subresource: 'configz', fallback: 'proxy' });
  t.deepEqual(subresourcesFor('/metrics'), { subresource: 'metrics' });
  t.deepEqual(subresourcesFor('/logs/x'), { subresource: 'log' });
  t.deepEqual(subresourcesFor('/checkpoint/a/b/c'), { subresource: 'checkpoint' });
  t.deepEqual(subresourcesFor('/containerLogs/a/b/c'), { subresource: 'proxy' });
  t.deepEqual(subresourcesFor('/exec/a/b/c'), { subresource: 'proxy' });
  t.deepEqual(requestAttributes('GET', '/healthz', 'n1'), { verb: 'get', subresource: 'healthz', fallback: 'proxy', name: 'n1', path: '/healthz' });
});

test('the table: one row per path, no row shadows a later one, a fallback only for a sub-resource of its own, every row reached', (t) => {
  const paths = NODE_PATH_RULES.map((r) => r.path);
  t.is(new Set(paths).size, paths.length);
  for (const [i, r] of NODE_PATH_RULES.entries()) {
    t.regex(r.path, /^\/[A-Za-z]+$/, r.path);
    t.false(paths.slice(0, i).some((p) => r.path.startsWith(p + '/')), `${r.path} is shadowed`);
    if (r.fallback) t.not(r.fallback, r.subresource);
    t.deepEqual(subresourcesFor(r.path + '/x'), r.fallback ? { subresource: r.subresource, fallback: r.fallback } : { subresource: r.subresource });
    t.true(r.note.length > 0, `${r.path} says where it comes from`);
  }
  t.is(DEFAULT_SUBRESOURCE, 'proxy');
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
