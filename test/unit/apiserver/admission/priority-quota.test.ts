/**
 * The default admission chain (wiring/admission.ts, the flags' default plugins) over a real store:
 * the Priority plugin runs before ResourceQuota, so a pod naming no class is counted by a quota
 * scoped to the global default class (scope PriorityClass reads spec.priorityClassName, as
 * upstream's), and the RuntimeClass plugin's overhead is what the quota charges.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { ApiError } from '../../../../apiserver/api/errors';
import { parseFlags } from '../../../../apiserver/config/flags';
import { makeBuiltinTypes, ResourceRegistry } from '../../../../apiserver/registry/builtin';
import { SqliteStorage } from '../../../../apiserver/storage/sqlite';
import { ObjectStore, type WriteContext } from '../../../../apiserver/store/object-store';
import { WatchCache } from '../../../../apiserver/store/watch-cache';
import { buildAdmission } from '../../../../apiserver/wiring/admission';

const admin: WriteContext = { user: { username: 'admin', groups: ['system:masters'] }, dryRun: false, subresource: '' };

test('a pod naming no class gets the global default and is counted by the quota scoped to it; RuntimeClass overhead is charged', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-priority-quota-'));
  const storage = SqliteStorage.open(join(dir, 'state.db'), { synchronous: 'NORMAL' });
  const cache = new WatchCache(storage, { retainMs: 60_000, now: Date.now });
  const registry = new ResourceRegistry();
  for (const ty of makeBuiltinTypes()) registry.register(ty);
  const core = (resource: string) => registry.lookup('', 'v1', resource)!;
  let store: ObjectStore | undefined;
  const chain = buildAdmission(parseFlags([]), { registry, store: () => store!, escalation: () => ({ name: 'RBACEscalation', validate: () => Promise.resolve() }) });
  store = new ObjectStore(storage, cache, chain, { now: () => new Date(), rvWaitMs: 2000 });
  const ac = new AbortController();
  const running = cache.run(ac.signal);
  await cache.whenReady();
  t.teardown(async () => {
    ac.abort();
    await running.catch(() => undefined);
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const s = store;
  await s.create(core('namespaces'), '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns' } }, admin);
  await s.create(core('serviceaccounts'), 'ns', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } }, admin);
  await s.create(registry.lookup('scheduling.svc.io', 'v1', 'priorityclasses')!, '', { apiVersion: 'scheduling.svc.io/v1', kind: 'PriorityClass', metadata: { name: 'batch' }, value: 100, globalDefault: true }, admin);
  await s.create(registry.lookup('node.svc.io', 'v1', 'runtimeclasses')!, '', { apiVersion: 'node.svc.io/v1', kind: 'RuntimeClass', metadata: { name: 'vm' }, handler: 'kata', overhead: { podFixed: { cpu: '250m' } } }, admin);
  const hard = { pods: '2', 'requests.cpu': '1' };
  const spec = { hard, scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['batch'] }] } };
  await s.create(core('resourcequotas'), 'ns', { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'batch' }, spec }, admin);
  await s.update(core('resourcequotas'), 'ns', 'batch', (cur) => ({ ...cur!, status: { hard, used: { pods: '0', 'requests.cpu': '0' } } }), { ...admin, subresource: 'status' });
  const pod = (name: string, extra: Record<string, unknown> = {}) =>
    s.create(core('pods'), 'ns', { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'i', resources: { requests: { cpu: '100m' } } }], ...extra } }, admin);
  const a = await pod('a', { runtimeClassName: 'vm' });
  t.like(a.spec, { priorityClassName: 'batch', priority: 100, overhead: { cpu: '250m' } });
  const used = async () => ((await s.get(core('resourcequotas'), 'ns', 'batch')).status as { used: Record<string, string> }).used;
  t.deepEqual(await used(), { pods: '1', 'requests.cpu': '350m' });
  await pod('b');
  const refused = await pod('c').then(
    () => undefined,
    (e: unknown) => e,
  );
  t.true(refused instanceof ApiError);
  t.regex((refused as ApiError).message, /^pods "c" is forbidden: exceeded quota: batch, requested: pods=1, used: pods=2, limited: pods=2/);
  const unknownClass = await pod('d', { priorityClassName: 'nope' }).then(
    () => undefined,
    (e: unknown) => e,
  );
  t.regex((unknownClass as Error).message, /no PriorityClass with name nope was found \(admission plugin Priority\)/);
});
