import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import { GarbageCollector } from '../../../../apiserver/controllers/garbage-collector';
import { reconcileTaints } from '../../../../apiserver/controllers/node-lifecycle';
import { adminCtx, openFixture, waitFor } from './store-fixture';

// Issue 17, item 3: the controllers read upstream's spellings as svc.io's.

const node = (ready: string, taints: unknown[], unschedulable = false): KObject => ({
  metadata: { name: 'n' },
  spec: { taints, ...(unschedulable ? { unschedulable } : {}) },
  status: { conditions: [{ type: 'Ready', status: ready }] },
});

test('node lifecycle: a taint it owns written in upstream spelling is that taint: kept when wanted, dropped when not', (t) => {
  const now = Date.parse('2025-03-01T12:00:00Z');
  const upstream = { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute', timeAdded: '2025-03-01T11:00:00Z' };
  // Not ready: the upstream-spelled NoExecute taint stands for the controller's; no second one (nor a new timeAdded).
  const kept = reconcileTaints(node('False', [upstream]), now);
  t.deepEqual(kept.filter((x) => x.effect === 'NoExecute'), [upstream]);
  t.deepEqual(kept.map((x) => `${x.key}:${x.effect}`).sort(), ['node.kubernetes.io/not-ready:NoExecute', 'node.svc.io/not-ready:NoSchedule']);
  // Ready again: it goes, as the svc.io one would; a user's own taint stays.
  const own = { key: 'example.com/dedicated', effect: 'NoSchedule' };
  t.deepEqual(reconcileTaints(node('True', [upstream, { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }, own]), now), [own]);
  t.deepEqual(reconcileTaints(node('True', [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }], true), now), [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }]);
});

test('garbage collection: an owner referenced as rbac.authorization.k8s.io/v1 keeps its dependent while it lives, and takes it when it goes', async (t) => {
  const f = await openFixture();
  const ac = new AbortController();
  const gc = new GarbageCollector(f.store, f.cache, f.registry, f.log);
  const running = gc.run(ac.signal);
  try {
    const roles = f.type('rbac.authorization.svc.io', 'v1', 'roles');
    const cms = f.type('', 'v1', 'configmaps');
    const role = await f.store.create(roles, 'default', { metadata: { name: 'owner' }, rules: [] }, adminCtx);
    const owned = (name: string, apiVersion: string): KObject => ({ metadata: { name, ownerReferences: [{ apiVersion, kind: 'Role', name: 'owner', uid: role.metadata.uid! }] }, data: {} });
    await f.store.create(cms, 'default', owned('by-k8s', 'rbac.authorization.k8s.io/v1'), adminCtx);
    await f.store.create(cms, 'default', owned('by-svc', 'rbac.authorization.svc.io/v1'), adminCtx);
    // A dependent whose owner is gone is collected: the collector is working while the others stay.
    await f.store.create(cms, 'default', { metadata: { name: 'orphan', ownerReferences: [{ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', name: 'gone', uid: 'no-such-uid' }] }, data: {} }, adminCtx);
    t.is(await waitFor(f, cms, 'default', 'orphan', (o) => o === null), null);
    t.truthy(await f.store.get(cms, 'default', 'by-k8s'));
    t.truthy(await f.store.get(cms, 'default', 'by-svc'));
    await f.store.delete(roles, 'default', 'owner', {}, adminCtx);
    t.is(await waitFor(f, cms, 'default', 'by-k8s', (o) => o === null), null);
    t.is(await waitFor(f, cms, 'default', 'by-svc', (o) => o === null), null);
  } finally {
    ac.abort();
    await running;
    await f.close();
  }
});
