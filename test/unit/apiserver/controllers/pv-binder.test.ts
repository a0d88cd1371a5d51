import test from 'ava';
import type { EventRecorder } from '../../../../common/events/recorder';
import type { KObject } from '../../../../apiserver/api/types';
import { localPathStorageClass } from '../../../../apiserver/controllers/local-path-provisioner';
import { PvBinder } from '../../../../apiserver/controllers/pv-binder';
import { adminCtx, openFixture, waitFor, type Fixture } from './store-fixture';

interface Recorded {
  name: string;
  type: string;
  reason: string;
  message: string;
}

async function setup(t: { teardown(fn: () => Promise<void>): void }) {
  const f = await openFixture();
  const events: Recorded[] = [];
  const waiters: Array<() => void> = [];
  const recorder: EventRecorder = {
    event(ref, type, reason, message) {
      events.push({ name: ref.name, type, reason, message });
      waiters.splice(0).forEach((w) => w());
    },
  };
  const binder = new PvBinder(f.store, f.cache, f.registry, { log: f.log, now: f.clock.now, recorder });
  const ac = new AbortController();
  const run = binder.run(ac.signal);
  t.teardown(async () => {
    ac.abort();
    await run;
    await f.close();
  });
  /** Resolves once an event with this reason about the object has been recorded. */
  const eventFor = async (name: string, reason: string): Promise<Recorded> => {
    for (;;) {
      const e = events.find((x) => x.name === name && x.reason === reason);
      if (e) return e;
      await new Promise<void>((r) => waiters.push(r));
    }
  };
  return { f, events, eventFor };
}

const pvs = (f: Fixture) => f.type('', 'v1', 'persistentvolumes');
const pvcs = (f: Fixture) => f.type('', 'v1', 'persistentvolumeclaims');
const scs = (f: Fixture) => f.type('storage.svc.io', 'v1', 'storageclasses');
const phase = (p: string) => (o: KObject | null) => (o?.status as { phase?: string } | undefined)?.phase === p;

const makePv = (f: Fixture, name: string, size: string, policy = 'Retain', cls = 'manual') =>
  f.store.create(pvs(f), '', { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name }, spec: { capacity: { storage: size }, accessModes: ['ReadWriteOnce'], storageClassName: cls, persistentVolumeReclaimPolicy: policy, hostPath: { path: `/d/${name}` } } }, adminCtx);
const makeClaim = (f: Fixture, name: string, spec: Record<string, unknown>) =>
  f.store.create(pvcs(f), 'default', { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: 'default' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec } }, adminCtx);

test('a claim binds to the smallest fitting volume, both sides written; Retain leaves it Released after the claim goes', async (t) => {
  const { f } = await setup(t);
  await makePv(f, 'big', '10Gi');
  await makePv(f, 'small', '2Gi');
  t.truthy(await waitFor(f, pvs(f), '', 'small', phase('Available')));
  await makeClaim(f, 'data', { storageClassName: 'manual' });
  const claim = (await waitFor(f, pvcs(f), 'default', 'data', phase('Bound')))!;
  t.is((claim.spec as any).volumeName, 'small');
  t.deepEqual((claim.status as any).capacity, { storage: '2Gi' });
  t.deepEqual((claim.status as any).accessModes, ['ReadWriteOnce']);
  t.is(claim.metadata.annotations?.['pv.svc.io/bind-completed'], 'yes');
  const pv = (await waitFor(f, pvs(f), '', 'small', phase('Bound')))!;
  t.like((pv.spec as any).claimRef, { namespace: 'default', name: 'data', uid: claim.metadata.uid });
  t.is(((await f.store.get(pvs(f), '', 'big')).status as any).phase, 'Available');

  await f.store.delete(pvcs(f), 'default', 'data', {}, adminCtx);
  t.truthy(await waitFor(f, pvs(f), '', 'small', phase('Released')));
});

test('claims that cannot bind say why: no class and no volume, an unknown class, waiting for a consumer', async (t) => {
  const { f, eventFor } = await setup(t);
  await makeClaim(f, 'none', { storageClassName: '' });
  t.is((await eventFor('none', 'FailedBinding')).message, 'no persistent volumes available for this claim and no storage class is set');
  await makeClaim(f, 'ghost', { storageClassName: 'gold' });
  t.is((await eventFor('ghost', 'ProvisioningFailed')).message, 'storageclass.storage.k8s.io "gold" not found');
  await f.store.create(scs(f), '', localPathStorageClass(), adminCtx);
  await makeClaim(f, 'later', { storageClassName: 'local-path' });
  t.is((await eventFor('later', 'WaitForFirstConsumer')).message, 'waiting for first consumer to be created before binding');
  t.is(((await f.store.get(pvcs(f), 'default', 'later')).status as any).phase, 'Pending');
});

test('local-path: the selected node gets a provisioned volume that binds; deleting the claim deletes it, held by the cleanup finalizer', async (t) => {
  const { f, eventFor } = await setup(t);
  await f.store.create(scs(f), '', localPathStorageClass(), adminCtx);
  await f.store.create(f.type('', 'v1', 'nodes'), '', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { 'kubernetes.io/hostname': 'n1' } } }, adminCtx);
  const created = await makeClaim(f, 'www', { storageClassName: 'local-path' });
  await eventFor('www', 'WaitForFirstConsumer');
  await f.store.update(pvcs(f), 'default', 'www', (c) => ({ ...c!, metadata: { ...c!.metadata, annotations: { 'volume.kubernetes.io/selected-node': 'n1' } } }), adminCtx);
  const claim = (await waitFor(f, pvcs(f), 'default', 'www', phase('Bound')))!;
  const name = `pvc-${created.metadata.uid}`;
  t.is((claim.spec as any).volumeName, name);
  t.is(claim.metadata.annotations?.['volume.svc.io/storage-provisioner'], 'svc.io/local-path');
  t.regex((await eventFor('www', 'ProvisioningSucceeded')).message, new RegExp(`Successfully provisioned volume ${name}`));
  const pv = (await waitFor(f, pvs(f), '', name, phase('Bound')))!;
  t.is((pv.spec as any).hostPath.path, `/var/lib/svc-node/local-path/${name}_default_www`);

  await f.store.delete(pvcs(f), 'default', 'www', {}, adminCtx);
  const terminating = (await waitFor(f, pvs(f), '', name, (o) => !!o?.metadata.deletionTimestamp))!;
  t.deepEqual(terminating.metadata.finalizers, ['svc.io/local-path-cleanup']);
  // The node's agent removes the directory, then the finalizer: the volume is gone.
  await f.store.update(pvs(f), '', name, (c) => ({ ...c!, metadata: { ...c!.metadata, finalizers: [] } }), adminCtx);
  t.is(await waitFor(f, pvs(f), '', name, (o) => o === null), null);
});

test('a pre-bound claim (spec.volumeName) binds to that volume; a bound claim whose volume is deleted is Lost', async (t) => {
  const { f, eventFor } = await setup(t);
  await makePv(f, 'chosen', '1Gi', 'Retain', '');
  await makeClaim(f, 'pinned', { storageClassName: '', volumeName: 'chosen' });
  t.truthy(await waitFor(f, pvcs(f), 'default', 'pinned', phase('Bound')));
  t.truthy(await waitFor(f, pvs(f), '', 'chosen', phase('Bound')));
  await f.store.delete(pvs(f), '', 'chosen', {}, adminCtx);
  t.truthy(await waitFor(f, pvcs(f), 'default', 'pinned', phase('Lost')));
  t.regex((await eventFor('pinned', 'ClaimLost')).message, /Data on the volume is lost/);
});

test('Delete waits while a pod still uses the deleted claim, and deletes the volume once the pod is gone', async (t) => {
  const { f } = await setup(t);
  await makePv(f, 'busy', '1Gi', 'Delete');
  await makeClaim(f, 'inuse', { storageClassName: 'manual' });
  t.truthy(await waitFor(f, pvcs(f), 'default', 'inuse', phase('Bound')));
  const podsT = f.type('', 'v1', 'pods');
  await f.store.create(podsT, 'default', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'user', namespace: 'default' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }], volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'inuse' } }] } }, adminCtx);
  // Another volume, released with no user, shows the binder has looked since: it is deleted at once.
  await makePv(f, 'idle', '1Gi', 'Delete');
  await makeClaim(f, 'unused', { storageClassName: 'manual', volumeName: 'idle' });
  t.truthy(await waitFor(f, pvcs(f), 'default', 'unused', phase('Bound')));
  await f.store.delete(pvcs(f), 'default', 'inuse', {}, adminCtx);
  t.truthy(await waitFor(f, pvs(f), '', 'busy', phase('Released')));
  await f.store.delete(pvcs(f), 'default', 'unused', {}, adminCtx);
  t.is(await waitFor(f, pvs(f), '', 'idle', (o) => o === null), null);
  t.is(((await f.store.get(pvs(f), '', 'busy')).status as any).phase, 'Released', 'kept while its pod runs');
  await f.store.delete(podsT, 'default', 'user', { gracePeriodSeconds: 0 }, adminCtx);
  t.is(await waitFor(f, pvs(f), '', 'busy', (o) => o === null), null);
});

test('regression: a claim made before any volume fits binds once one becomes Available', async (t) => {
  const { f, eventFor } = await setup(t);
  await makeClaim(f, 'early', { storageClassName: 'manual' });
  await eventFor('early', 'ProvisioningFailed');
  await makePv(f, 'later', '1Gi');
  t.is(((await waitFor(f, pvcs(f), 'default', 'early', phase('Bound')))!.spec as any).volumeName, 'later');
});

test('a claim naming no class gets the default class once one exists (retroactive default class)', async (t) => {
  const { f, eventFor } = await setup(t);
  await makeClaim(f, 'classless', {});
  await eventFor('classless', 'FailedBinding');
  await f.store.create(scs(f), '', localPathStorageClass(), adminCtx);
  const c = await waitFor(f, pvcs(f), 'default', 'classless', (o) => (o?.spec as any)?.storageClassName === 'local-path');
  t.truthy(c);
  t.is((await eventFor('classless', 'WaitForFirstConsumer')).message, 'waiting for first consumer to be created before binding');
});

test('local-path: a claim given a node the binder does not know yet is provisioned once the node appears', async (t) => {
  const { f, eventFor } = await setup(t);
  await f.store.create(scs(f), '', localPathStorageClass(), adminCtx);
  await f.store.create(pvcs(f), 'default', { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'ahead', namespace: 'default', annotations: { 'volume.svc.io/selected-node': 'n9' } }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'local-path', resources: { requests: { storage: '1Gi' } } } }, adminCtx);
  t.regex((await eventFor('ahead', 'ProvisioningFailed')).message, /node "n9" not found/);
  await f.store.create(f.type('', 'v1', 'nodes'), '', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n9' } }, adminCtx);
  const c = (await waitFor(f, pvcs(f), 'default', 'ahead', phase('Bound')))!;
  t.is((c.spec as any).volumeName, `pvc-${c.metadata.uid}`);
});
