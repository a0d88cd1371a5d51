import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import { buildDisruptedPodMap, countHealthyPods, DELETION_TIMEOUT_MS, expectedPodCount, scaledValue } from '../../../../apiserver/controllers/disruption-status';
import { ownerScaleFinder } from '../../../../apiserver/controllers/owner-scale';
import { withMeta } from '../../../../apiserver/registry/common-schemas';
import { ResourceRegistry } from '../../../../apiserver/registry/resource-registry';
import type { ResourceType } from '../../../../apiserver/registry/resource-type';
import { int32, obj } from '../../../../apiserver/registry/schema-builders';

test('scaledValue: integers as they are, percentages rounded up, anything else upstream\'s error', (t) => {
  t.is(scaledValue(3, 10), 3);
  t.is(scaledValue('50%', 3), 2);
  t.is(scaledValue('10%', 1), 1);
  t.is(scaledValue('0%', 7), 0);
  t.is(scaledValue('100%', 7), 7);
  t.throws(() => scaledValue('5', 10), { message: 'invalid value for IntOrString: invalid type: string is not a percentage' });
});

const T = Date.parse('2025-03-01T12:00:00Z');
const podOf = (name: string, o: { ready?: boolean; deleting?: boolean; owner?: string } = {}): KObject => ({
  metadata: {
    name,
    namespace: 'ns',
    ...(o.deleting ? { deletionTimestamp: '2025-03-01T12:00:00Z' } : {}),
    ...(o.owner ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: o.owner, uid: `uid-${o.owner}`, controller: true }] } : {}),
  },
  status: { conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }] },
});

test('countHealthyPods: ready, not terminating, not disrupted within the timeout', (t) => {
  const pods = [podOf('a'), podOf('b', { ready: false }), podOf('c', { deleting: true }), podOf('d'), podOf('e')];
  const disrupted = { d: '2025-03-01T12:00:00Z', e: '2025-03-01T11:00:00Z' };
  t.is(countHealthyPods(pods, disrupted, T + 1000), 2); // a and e (whose entry timed out)
  t.is(countHealthyPods(pods, disrupted, T + DELETION_TIMEOUT_MS), 3);
});

test('buildDisruptedPodMap: keeps live entries with the earliest recheck, drops terminating, gone and timed-out pods', (t) => {
  const pdb: KObject = { metadata: { name: 'p', namespace: 'ns' }, status: { disruptedPods: { a: '2025-03-01T12:00:00Z', b: '2025-03-01T12:00:30Z', c: '2025-03-01T12:00:00Z', gone: '2025-03-01T12:00:00Z', old: '2025-03-01T11:00:00Z' } } };
  const out = buildDisruptedPodMap([podOf('a'), podOf('b'), podOf('c', { deleting: true }), podOf('old')], pdb, T + 1000);
  t.deepEqual(out.disrupted, { a: '2025-03-01T12:00:00Z', b: '2025-03-01T12:00:30Z' });
  t.is(out.recheckAtMs, T + DELETION_TIMEOUT_MS);
  t.deepEqual(out.notDeleted.map((p) => p.metadata.name), ['old']);
});

test('expectedPodCount: one lookup per controller, unmanaged pods listed, a missing controller fails', async (t) => {
  const asked: string[] = [];
  const find = (ref: { name: string; uid: string }) => {
    asked.push(ref.name);
    return Promise.resolve(ref.name === 'missing' ? null : { uid: ref.uid, replicas: 5 });
  };
  const pdb = (spec: Record<string, unknown>): KObject => ({ metadata: { name: 'p' }, spec });
  const pods = [podOf('a', { owner: 'rs' }), podOf('b', { owner: 'rs' }), podOf('c')];
  t.deepEqual(await expectedPodCount(pdb({ maxUnavailable: '20%' }), pods, find), { expectedCount: 5, desiredHealthy: 4, unmanagedPods: ['c'] });
  t.deepEqual(asked, ['rs']);
  t.deepEqual(await expectedPodCount(pdb({ minAvailable: 2 }), pods, find), { expectedCount: 3, desiredHealthy: 2, unmanagedPods: [] });
  t.deepEqual(await expectedPodCount(pdb({ maxUnavailable: 9 }), pods, find), { expectedCount: 5, desiredHealthy: 0, unmanagedPods: ['c'] });
  t.deepEqual(await expectedPodCount(pdb({}), pods, find), { expectedCount: 0, desiredHealthy: 0, unmanagedPods: [] });
  await t.throwsAsync(expectedPodCount(pdb({ minAvailable: '50%' }), [podOf('x', { owner: 'missing' })], find), { message: 'found no controllers for pod "x"' });
});

/** Fake apps kinds (the real ones arrive on another branch): only their schema's spec.replicas matters. */
function workload(kind: string, resource: string): ResourceType {
  return {
    group: 'apps',
    version: 'v1',
    resource,
    singular: kind.toLowerCase(),
    kind,
    listKind: `${kind}List`,
    namespaced: true,
    schema: withMeta(`fake.${kind}`, { spec: [2, obj(`fake.${kind}Spec`, { replicas: [1, int32()] })] }),
    hasStatus: true,
  };
}

test('ownerScaleFinder: by apiVersion and kind through the registry; a ReplicaSet of a Deployment stands for the Deployment; uid must match', async (t) => {
  const registry = new ResourceRegistry();
  const rsType = workload('ReplicaSet', 'replicasets');
  const depType = workload('Deployment', 'deployments');
  registry.register(rsType);
  registry.register(depType);
  const objects = new Map<string, KObject>([
    ['replicasets/rs-1', { metadata: { name: 'rs-1', uid: 'rs-uid', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'dep', uid: 'dep-uid', controller: true }] }, spec: { replicas: 2 } }],
    ['deployments/dep', { metadata: { name: 'dep', uid: 'dep-uid' }, spec: { replicas: 7 } }],
    ['replicasets/rs-2', { metadata: { name: 'rs-2', uid: 'rs2-uid' }, spec: {} }],
    ['replicasets/rs-3', { metadata: { name: 'rs-3', uid: 'rs3-uid', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'gone', uid: 'x', controller: true }] }, spec: { replicas: 4 } }],
  ]);
  const find = ownerScaleFinder({ registry, get: (ty, _ns, name) => Promise.resolve(objects.get(`${ty.resource}/${name}`) ?? null) });
  const ref = (name: string, uid: string) => ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', name, uid, controller: true });
  t.deepEqual(await find(ref('rs-1', 'rs-uid'), 'ns'), { uid: 'dep-uid', replicas: 7 });
  t.deepEqual(await find(ref('rs-2', 'rs2-uid'), 'ns'), { uid: 'rs2-uid', replicas: 1 }, 'replicas unset: 1, as Go defaults it');
  t.deepEqual(await find(ref('rs-3', 'rs3-uid'), 'ns'), { uid: 'rs3-uid', replicas: 4 }, 'its Deployment gone: the ReplicaSet\'s own scale');
  t.is(await find(ref('rs-1', 'another-uid'), 'ns'), null);
  t.is(await find(ref('nope', 'u'), 'ns'), null);
  await t.throwsAsync(find({ apiVersion: 'batch/v1', kind: 'Job', name: 'j', uid: 'u' }, 'ns'), { message: 'no matches for kind "Job" in version "batch/v1"' });
});
