import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { claim, controllerRefOf, newControllerRef } from '../../../../../apiserver/controllers/workloads/controller-ref';
import { Expectations } from '../../../../../apiserver/controllers/workloads/expectations';
import { podFromTemplate, slowStartBatch } from '../../../../../apiserver/controllers/workloads/pod-control';
import { deletionOrder, isPodAvailable, msUntilAvailable } from '../../../../../apiserver/controllers/workloads/pod-state';
import { adminCtx, openFixture } from '../store-fixture';

const NOW = Date.parse('2025-03-01T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

function pod(name: string, o: { node?: string; phase?: string; readySince?: number; restarts?: number; created?: number } = {}): KObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', ...(o.created !== undefined ? { creationTimestamp: iso(o.created) } : {}) },
    spec: { ...(o.node ? { nodeName: o.node } : {}) },
    status: {
      phase: o.phase ?? 'Running',
      conditions: o.readySince !== undefined ? [{ type: 'Ready', status: 'True', lastTransitionTime: iso(o.readySince) }] : [{ type: 'Ready', status: 'False' }],
      containerStatuses: [{ name: 'c', restartCount: o.restarts ?? 0 }],
    },
  };
}

test('deletionOrder puts unassigned, then pending, then not ready, then fresher and more restarted, then newer pods first', (t) => {
  const old = NOW - 3600_000;
  const pods = [
    pod('ready-long', { node: 'n', readySince: NOW - 3000_000, created: old }),
    pod('restarts', { node: 'n', readySince: NOW - 3000_000, created: old, restarts: 5 }),
    pod('ready-new', { node: 'n', readySince: NOW - 2_000, created: old }),
    pod('not-ready', { node: 'n', created: old }),
    pod('pending', { node: 'n', phase: 'Pending', created: old }),
    pod('unassigned', { phase: 'Pending', created: old }),
  ];
  const sorted = [...pods].sort((a, b) => deletionOrder(a, b, {}, NOW)).map((p) => p.metadata.name);
  t.deepEqual(sorted, ['unassigned', 'pending', 'not-ready', 'ready-new', 'restarts', 'ready-long']);
  // Same bucket of age: the newer goes first; a doubled-up pod (higher rank) before a lone one.
  const a = pod('a', { node: 'n', readySince: old, created: NOW - 10_000_000 });
  const b = pod('b', { node: 'n', readySince: old, created: NOW - 100_000 });
  t.true(deletionOrder(b, a, {}, NOW) < 0);
  t.true(deletionOrder(a, b, { a: 2, b: 1 }, NOW) < 0);
});

test('isPodAvailable waits minReadySeconds after the Ready transition', (t) => {
  const p = pod('p', { node: 'n', readySince: NOW - 5_000 });
  t.true(isPodAvailable(p, 0, NOW));
  t.true(isPodAvailable(p, 5, NOW));
  t.false(isPodAvailable(p, 10, NOW));
  t.is(msUntilAvailable(p, 10, NOW), 5_000);
  t.false(isPodAvailable(pod('q', {}), 0, NOW));
});

test('slowStartBatch grows 1, 2, 4, … and stops after the first batch with a failure', async (t) => {
  const calls: number[] = [];
  const all = await slowStartBatch(10, 1, (i) => Promise.resolve(void calls.push(i)));
  t.deepEqual(all, { ok: 10 });
  t.deepEqual(calls, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  let n = 0;
  const failing = await slowStartBatch(100, 1, () => {
    n++;
    return n > 3 ? Promise.reject(new Error('quota')) : Promise.resolve();
  });
  // Batches 1, 2 succeed; the batch of 4 has failures; nothing after it runs.
  t.is(n, 7);
  t.is(failing.ok, 3);
  t.is((failing.error as Error).message, 'quota');
});

test('Expectations hold a sync back until every create and deletion is observed, or 5 minutes pass', (t) => {
  let now = 0;
  const e = new Expectations(() => now);
  t.true(e.satisfied('ns/rs'));
  e.expect('ns/rs', 2, ['u1']);
  t.false(e.satisfied('ns/rs'));
  e.creationObserved('ns/rs');
  e.creationObserved('ns/rs');
  t.false(e.satisfied('ns/rs'));
  e.deletionObserved('ns/rs', 'other');
  t.false(e.satisfied('ns/rs'));
  e.deletionObserved('ns/rs', 'u1');
  t.true(e.satisfied('ns/rs'));
  e.expect('ns/rs', 1);
  now += 5 * 60_000 + 1;
  t.true(e.satisfied('ns/rs'));
});

test('podFromTemplate copies labels, annotations, finalizers and spec, and sets the controller reference', (t) => {
  const owner: KObject = { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web', namespace: 'default', uid: 'u-rs' } };
  const ref = newControllerRef(owner, 'apps/v1', 'ReplicaSet');
  const tpl = { metadata: { labels: { app: 'web' }, annotations: { a: 'b' }, finalizers: ['x/y'], name: 'ignored' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } };
  const p = podFromTemplate(tpl, ref, { generateName: 'web-' });
  t.deepEqual(p.metadata, { generateName: 'web-', ownerReferences: [ref], labels: { app: 'web' }, annotations: { a: 'b' }, finalizers: ['x/y'] });
  t.deepEqual(p.spec, tpl.spec);
  t.not(p.spec, tpl.spec);
  t.deepEqual(controllerRefOf(p), { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'u-rs', controller: true, blockOwnerDeletion: true });
});

test('claim adopts matching orphans, releases owned pods that stop matching, and leaves other controllers\' pods alone', async (t) => {
  const f = await openFixture();
  t.teardown(() => f.close());
  const pods = f.type('', 'v1', 'pods');
  const mk = (name: string, labels: Record<string, string>, ownerReferences?: KObject['metadata']['ownerReferences']) =>
    f.store.create(pods, 'default', { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels, ...(ownerReferences ? { ownerReferences } : {}) }, spec: { containers: [{ name: 'c', image: 'nginx' }] } }, adminCtx);
  const owner: KObject = { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web', namespace: 'default', uid: 'u-rs' } };
  const ref = newControllerRef(owner, 'apps/v1', 'ReplicaSet');
  const other = { ...ref, name: 'other', uid: 'u-other' };
  const objs = [await mk('orphan', { app: 'web' }), await mk('mine-moved', { app: 'db' }, [ref]), await mk('mine', { app: 'web' }, [ref]), await mk('theirs', { app: 'web' }, [other]), await mk('stranger', { app: 'db' })];
  const owned = await claim(f.store, owner, objs, { selector: { matchLabels: { app: 'web' } }, ref, type: pods, ctx: adminCtx });
  t.deepEqual(owned.map((p) => p.metadata.name).sort(), ['mine', 'orphan']);
  t.deepEqual((await f.store.get(pods, 'default', 'orphan')).metadata.ownerReferences, [ref]);
  t.is((await f.store.get(pods, 'default', 'mine-moved')).metadata.ownerReferences, undefined);
  t.deepEqual((await f.store.get(pods, 'default', 'theirs')).metadata.ownerReferences, [other]);
  t.is((await f.store.get(pods, 'default', 'stranger')).metadata.ownerReferences, undefined);
  // A stale cache entry (the pod was replaced under the same name) is not adopted.
  await f.store.delete(pods, 'default', 'stranger', { gracePeriodSeconds: 0 }, adminCtx);
  const stale = objs[4];
  await mk('stranger', { app: 'web' });
  const again = await claim(f.store, owner, [{ ...stale, metadata: { ...stale.metadata, labels: { app: 'web' } } }], { selector: { matchLabels: { app: 'web' } }, ref, type: pods, ctx: adminCtx });
  t.deepEqual(again, []);
});
