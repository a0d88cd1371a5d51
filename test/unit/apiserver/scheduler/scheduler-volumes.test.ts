import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import { Scheduler } from '../../../../apiserver/scheduler/scheduler';
import { RecordingRecorder } from '../../../helpers/recording-recorder';
import { adminCtx, openFixture, waitFor, type Fixture } from '../controllers/store-fixture';
import { FakeTimers } from './fake-timers';
import { node } from './objects';

async function setup(t: { teardown(fn: () => Promise<void>): void }): Promise<Fixture> {
  const f = await openFixture();
  const s = new Scheduler(f.store, f.cache, f.registry, { now: f.clock.now, log: f.log, timers: new FakeTimers(f.clock), recorder: new RecordingRecorder() });
  const ac = new AbortController();
  const running = s.run(ac.signal);
  t.teardown(async () => {
    ac.abort();
    await running;
    await f.close();
  });
  return f;
}

const type = (f: Fixture, resource: string, group = '') => f.type(group, 'v1', resource);
const nodeName = (p: KObject | null) => (p?.spec as { nodeName?: string } | undefined)?.nodeName;
const scheduledMessage = (p: KObject | null) => ((p?.status as { conditions?: Array<Record<string, string>> } | undefined)?.conditions ?? []).find((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable')?.message;

async function addNodes(f: Fixture, ...names: string[]): Promise<void> {
  for (const n of names) await f.store.create(type(f, 'nodes'), '', node(n, { labels: { 'kubernetes.io/hostname': n } }), adminCtx);
}
const addClaim = (f: Fixture, name: string, spec: Record<string, unknown>) =>
  f.store.create(type(f, 'persistentvolumeclaims'), 'ns', { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec } }, adminCtx);
const addPod = (f: Fixture, name: string, claim: string) =>
  f.store.create(type(f, 'pods'), 'ns', { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox' }], volumes: [{ name: 'd', persistentVolumeClaim: { claimName: claim } }] } }, adminCtx);

test('a pod whose claim is missing or unbound Immediate is unschedulable with upstream\'s reason', async (t) => {
  const f = await setup(t);
  await addNodes(f, 'n1');
  await addPod(f, 'orphan', 'nope');
  t.is(scheduledMessage(await waitFor(f, type(f, 'pods'), 'ns', 'orphan', (p) => !!scheduledMessage(p))), '0/1 nodes are available: 1 persistentvolumeclaim "nope" not found.');
  await addClaim(f, 'immediate', { storageClassName: '' });
  await addPod(f, 'early', 'immediate');
  t.is(scheduledMessage(await waitFor(f, type(f, 'pods'), 'ns', 'early', (p) => !!scheduledMessage(p))), '0/1 nodes are available: 1 pod has unbound immediate PersistentVolumeClaims.');
});

test('a bound volume\'s node affinity picks the node', async (t) => {
  const f = await setup(t);
  await addNodes(f, 'n1', 'n2', 'n3');
  const pinned = { nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['n2'] }] }] } } };
  await f.store.create(type(f, 'persistentvolumes'), '', { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv1' }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/d' }, ...pinned } }, adminCtx);
  await addClaim(f, 'data', { storageClassName: '', volumeName: 'pv1' });
  await addPod(f, 'user', 'data');
  t.is(nodeName(await waitFor(f, type(f, 'pods'), 'ns', 'user', (p) => !!nodeName(p))), 'n2');
});

test('WaitForFirstConsumer: the pod is bound and its claim gets the chosen node as selected-node', async (t) => {
  const f = await setup(t);
  await addNodes(f, 'n1');
  await f.store.create(type(f, 'storageclasses', 'storage.svc.io'), '', { apiVersion: 'storage.svc.io/v1', kind: 'StorageClass', metadata: { name: 'lp' }, provisioner: 'svc.io/local-path', volumeBindingMode: 'WaitForFirstConsumer' }, adminCtx);
  await addClaim(f, 'late', { storageClassName: 'lp' });
  await addPod(f, 'consumer', 'late');
  t.is(nodeName(await waitFor(f, type(f, 'pods'), 'ns', 'consumer', (p) => !!nodeName(p))), 'n1');
  t.is((await f.store.get(type(f, 'persistentvolumeclaims'), 'ns', 'late')).metadata.annotations?.['volume.svc.io/selected-node'], 'n1');
});

test('WaitForFirstConsumer without a provisioner: only nodes with a fitting Available volume', async (t) => {
  const f = await setup(t);
  await addNodes(f, 'n1', 'n2');
  await f.store.create(type(f, 'storageclasses', 'storage.svc.io'), '', { apiVersion: 'storage.svc.io/v1', kind: 'StorageClass', metadata: { name: 'local' }, provisioner: 'kubernetes.io/no-provisioner', volumeBindingMode: 'WaitForFirstConsumer' }, adminCtx);
  await addClaim(f, 'c', { storageClassName: 'local' });
  await addPod(f, 'needs', 'c');
  t.is(scheduledMessage(await waitFor(f, type(f, 'pods'), 'ns', 'needs', (p) => !!scheduledMessage(p))), "0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind.");
});
