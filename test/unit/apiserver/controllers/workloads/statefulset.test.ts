import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { StatefulSetController } from '../../../../../apiserver/controllers/workloads/statefulset-controller';
import { adminCtx, openFixture, type Fixture } from '../store-fixture';
import { fakeClock, list, podNames, RecordingRecorder, setPodStatus, until } from './harness';
import type { FakeTimers } from '../../scheduler/fake-timers';

const NS = 'shop';

interface Ctx {
  f: Fixture;
  recorder: RecordingRecorder;
  timers: FakeTimers;
}

async function setup(t: { teardown(fn: () => Promise<void>): void }): Promise<Ctx> {
  const f = await openFixture();
  const recorder = new RecordingRecorder();
  const { clock, timers } = fakeClock(f);
  const c = new StatefulSetController(f.store, f.cache, f.registry, { log: f.log, recorder, clock });
  const ac = new AbortController();
  const running = c.run(ac.signal);
  t.teardown(async () => {
    ac.abort();
    await running;
    await f.close();
  });
  return { f, recorder, timers };
}

const sets = (f: Fixture) => f.type('apps', 'v1', 'statefulsets');

function statefulSet(name: string, spec: Record<string, unknown> = {}, image = 'nginx:1.27'): KObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name },
    spec: {
      replicas: 3,
      serviceName: name,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image }] } },
      ...spec,
    },
  };
}

async function create(f: Fixture, o: KObject): Promise<KObject> {
  return f.store.create(sets(f), NS, o, adminCtx);
}

async function patchSpec(f: Fixture, name: string, change: (spec: Record<string, any>) => void): Promise<void> {
  await f.store.update(
    sets(f),
    NS,
    name,
    (cur) => {
      change(cur!.spec as Record<string, any>);
      return cur!;
    },
    adminCtx,
  );
}

const getSet = (f: Fixture, name: string) => f.store.get(sets(f), NS, name);
const getPod = (f: Fixture, name: string) => f.store.get(f.type('', 'v1', 'pods'), NS, name).catch(() => null);
const statusOf = (o: KObject) => (o.status ?? {}) as Record<string, any>;

/** Waits for the pods to be exactly these names. */
const podsAre = (f: Fixture, names: string[]) => until(f, async () => JSON.stringify(await podNames(f, NS)) === JSON.stringify(names), `pods ${names.join(',')}`);

/** Waits for the set's status to satisfy pred. */
const statusIs = (f: Fixture, name: string, pred: (s: Record<string, any>) => boolean, what: string) => until(f, async () => pred(statusOf(await getSet(f, name))) && (await getSet(f, name)), what);

test('OrderedReady: pods are made one at a time, each after the previous is Ready, with identity, labels and a revision', async (t) => {
  const { f, recorder } = await setup(t);
  const set = await create(f, statefulSet('web'));
  await podsAre(f, ['web-0']);
  // web-0 is not Ready: nothing more happens (the status shows one replica, made from revision 1).
  const s0 = await statusIs(f, 'web', (s) => s.replicas === 1 && s.observedGeneration === 1, 'one replica counted');
  t.deepEqual(await podNames(f, NS), ['web-0']);
  const revisions = await list(f, 'apps', 'controllerrevisions', NS);
  t.is(revisions.length, 1);
  const rev = revisions[0];
  t.is(rev.revision, 1);
  t.is(statusOf(s0).currentRevision, rev.metadata.name);
  t.is(statusOf(s0).updateRevision, rev.metadata.name);
  t.regex(rev.metadata.name!, /^web-[bcdfghjklmnpqrstvwxz2456789]+$/);
  t.is(rev.metadata.labels?.['controller-revision-hash'], rev.metadata.name!.slice('web-'.length));
  t.is(rev.metadata.labels?.app, 'web');
  t.deepEqual(rev.metadata.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: set.metadata.uid, controller: true, blockOwnerDeletion: true }]);
  t.like(rev.data, { spec: { template: { $patch: 'replace', metadata: { labels: { app: 'web' } } } } });
  const pod = (await getPod(f, 'web-0'))!;
  t.like(pod.metadata.labels, {
    app: 'web',
    'statefulset.kubernetes.io/pod-name': 'web-0',
    'statefulset.svc.io/pod-name': 'web-0',
    'apps.kubernetes.io/pod-index': '0',
    'apps.svc.io/pod-index': '0',
    'controller-revision-hash': rev.metadata.name,
  });
  t.like(pod.spec, { hostname: 'web-0', subdomain: 'web' });
  t.is(pod.metadata.ownerReferences?.[0].uid, set.metadata.uid);
  await setPodStatus(f, NS, 'web-0', { ready: false });
  await statusIs(f, 'web', (s) => s.replicas === 1 && s.readyReplicas === undefined, 'web-0 counted not ready (readyReplicas 0 is left out, as upstream omits it)');
  t.deepEqual(await podNames(f, NS), ['web-0']);
  await setPodStatus(f, NS, 'web-0');
  await podsAre(f, ['web-0', 'web-1']);
  await setPodStatus(f, NS, 'web-1');
  await podsAre(f, ['web-0', 'web-1', 'web-2']);
  await setPodStatus(f, NS, 'web-2');
  const done = await statusIs(f, 'web', (s) => s.readyReplicas === 3 && s.availableReplicas === 3 && s.updatedReplicas === 3 && s.currentReplicas === 3, 'all ready');
  t.is(statusOf(done).currentRevision, statusOf(done).updateRevision);
  t.deepEqual(recorder.messages('SuccessfulCreate'), ['create Pod web-0 in StatefulSet web successful', 'create Pod web-1 in StatefulSet web successful', 'create Pod web-2 in StatefulSet web successful']);
  t.true(recorder.events.every((e) => e.regarding === 'StatefulSet/web'));
});

test('OrderedReady scale-down deletes from the highest ordinal, one at a time, waiting for the rest to be healthy', async (t) => {
  const { f, recorder } = await setup(t);
  await create(f, statefulSet('db', { replicas: 3 }));
  for (const n of ['db-0', 'db-1', 'db-2']) {
    await until(f, () => getPod(f, n), `${n} made`);
    await setPodStatus(f, NS, n);
  }
  await statusIs(f, 'db', (s) => s.readyReplicas === 3, 'three ready');
  await patchSpec(f, 'db', (s) => (s.replicas = 1));
  // Unbound pods are deleted at once (no grace period), so each deletion finishes before the next pass.
  await podsAre(f, ['db-0']);
  t.deepEqual(recorder.messages('SuccessfulDelete'), ['delete Pod db-2 in StatefulSet db successful', 'delete Pod db-1 in StatefulSet db successful']);
  await statusIs(f, 'db', (s) => s.replicas === 1 && s.readyReplicas === 1, 'one replica');
});

test('OrderedReady scale-down waits while a lower ordinal is not Ready', async (t) => {
  const { f } = await setup(t);
  await create(f, statefulSet('kv', { replicas: 3 }));
  for (const n of ['kv-0', 'kv-1', 'kv-2']) {
    await until(f, () => getPod(f, n), `${n} made`);
    await setPodStatus(f, NS, n);
  }
  await statusIs(f, 'kv', (s) => s.readyReplicas === 3, 'three ready');
  await setPodStatus(f, NS, 'kv-0', { ready: false });
  await patchSpec(f, 'kv', (s) => (s.replicas = 2));
  await statusIs(f, 'kv', (s) => s.observedGeneration === 2 && s.readyReplicas === 2, 'the scale-down observed');
  t.deepEqual(await podNames(f, NS), ['kv-0', 'kv-1', 'kv-2']);
  await setPodStatus(f, NS, 'kv-0');
  await podsAre(f, ['kv-0', 'kv-1']);
});

test('Parallel makes and deletes every pod at once', async (t) => {
  const { f } = await setup(t);
  await create(f, statefulSet('par', { replicas: 4, podManagementPolicy: 'Parallel' }));
  await podsAre(f, ['par-0', 'par-1', 'par-2', 'par-3']);
  await patchSpec(f, 'par', (s) => (s.replicas = 1));
  await podsAre(f, ['par-0']);
  t.deepEqual(await podNames(f, NS), ['par-0']);
});

test('spec.ordinals.start numbers the replicas from start', async (t) => {
  const { f } = await setup(t);
  await create(f, statefulSet('one', { replicas: 2, podManagementPolicy: 'Parallel', ordinals: { start: 1 } }));
  await podsAre(f, ['one-1', 'one-2']);
  t.is((await getPod(f, 'one-2'))!.metadata.labels?.['apps.kubernetes.io/pod-index'], '2');
});

async function allReady(f: Fixture, names: string[]): Promise<void> {
  for (const n of names) {
    await until(f, async () => (await getPod(f, n))?.status !== undefined, `${n} made`);
    await setPodStatus(f, NS, n);
  }
}

test('RollingUpdate with a partition updates from the highest ordinal down to the partition, each after the one above is Ready', async (t) => {
  const { f } = await setup(t);
  await create(f, statefulSet('app', { replicas: 3, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } } }));
  await allReady(f, ['app-0', 'app-1', 'app-2']);
  const before = statusOf(await statusIs(f, 'app', (s) => s.readyReplicas === 3, 'three ready'));
  await patchSpec(f, 'app', (s) => (s.template.spec.containers[0].image = 'nginx:1.28'));
  const revision = (p: KObject | null) => p?.metadata.labels?.['controller-revision-hash'];
  // app-2 goes first and comes back at the new revision; app-1 waits for it to be Ready.
  const app2 = await until(f, async () => { const p = await getPod(f, 'app-2'); return p && revision(p) !== before.currentRevision && p; }, 'app-2 updated');
  const updateRevision = revision(app2);
  t.is((app2.spec as any).containers[0].image, 'nginx:1.28');
  t.is(revision(await getPod(f, 'app-1')), before.currentRevision);
  await setPodStatus(f, NS, 'app-2');
  const app1 = await until(f, async () => { const p = await getPod(f, 'app-1'); return p && revision(p) === updateRevision && p; }, 'app-1 updated');
  await setPodStatus(f, NS, 'app-1');
  const partitioned = await statusIs(f, 'app', (s) => s.updatedReplicas === 2 && s.readyReplicas === 3, 'partitioned rollout done');
  t.is(statusOf(partitioned).currentRevision, before.currentRevision);
  t.is(statusOf(partitioned).updateRevision, updateRevision);
  t.is(statusOf(partitioned).currentReplicas, 1);
  t.is(revision(await getPod(f, 'app-0')), before.currentRevision);
  t.truthy(app1);
  // Partition 0 finishes the rollout: the update revision becomes current.
  await patchSpec(f, 'app', (s) => (s.updateStrategy.rollingUpdate.partition = 0));
  await until(f, async () => revision(await getPod(f, 'app-0')) === updateRevision, 'app-0 updated');
  await setPodStatus(f, NS, 'app-0');
  const complete = await statusIs(f, 'app', (s) => s.currentRevision === updateRevision && s.updatedReplicas === 3, 'rollout complete');
  t.is(statusOf(complete).currentReplicas, 3);
  t.deepEqual((await list(f, 'apps', 'controllerrevisions', NS)).map((r) => r.revision).sort(), [1, 2]);
});

test('OnDelete leaves pods alone until they are deleted, then makes them at the update revision', async (t) => {
  const { f } = await setup(t);
  await create(f, statefulSet('od', { replicas: 2, updateStrategy: { type: 'OnDelete' } }));
  await allReady(f, ['od-0', 'od-1']);
  const before = statusOf(await statusIs(f, 'od', (s) => s.readyReplicas === 2, 'two ready'));
  await patchSpec(f, 'od', (s) => (s.template.spec.containers[0].image = 'nginx:1.28'));
  const after = statusOf(await statusIs(f, 'od', (s) => s.observedGeneration === 2, 'template change observed'));
  t.not(after.updateRevision, before.updateRevision);
  t.is(after.updatedReplicas, undefined, 'zero, left out as upstream');
  const uid = (await getPod(f, 'od-1'))!.metadata.uid;
  await f.store.delete(f.type('', 'v1', 'pods'), NS, 'od-1', {}, adminCtx);
  const remade = await until(f, async () => { const p = await getPod(f, 'od-1'); return p && p.metadata.uid !== uid && p; }, 'od-1 made again');
  t.is(remade.metadata.labels?.['controller-revision-hash'], after.updateRevision);
  t.is((await getPod(f, 'od-0'))!.metadata.labels?.['controller-revision-hash'], before.currentRevision);
});

test('a Failed pod is deleted and made again', async (t) => {
  const { f, recorder } = await setup(t);
  await create(f, statefulSet('crash', { replicas: 1 }));
  await allReady(f, ['crash-0']);
  const uid = (await getPod(f, 'crash-0'))!.metadata.uid;
  await setPodStatus(f, NS, 'crash-0', { phase: 'Failed', ready: false });
  await until(f, async () => { const p = await getPod(f, 'crash-0'); return p && p.metadata.uid !== uid; }, 'crash-0 made again');
  t.deepEqual(recorder.messages('SuccessfulDelete'), ['delete Pod crash-0 in StatefulSet crash successful']);
});

test('volumeClaimTemplates: each pod gets its claim before it is made, and its volume names the claim', async (t) => {
  const { f, recorder } = await setup(t);
  const claimTemplate = { metadata: { name: 'www', labels: { tier: 'data' } }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
  const tpl = { metadata: { labels: { app: 'vol' } }, spec: { containers: [{ name: 'app', image: 'nginx', volumeMounts: [{ name: 'www', mountPath: '/www' }] }], volumes: [{ name: 'www', emptyDir: {} }, { name: 'tmp', emptyDir: {} }] } };
  await create(f, statefulSet('vol', { replicas: 2, podManagementPolicy: 'Parallel', template: tpl, volumeClaimTemplates: [claimTemplate] }));
  await podsAre(f, ['vol-0', 'vol-1']);
  const claims = await list(f, '', 'persistentvolumeclaims', NS);
  t.deepEqual(claims.map((c) => c.metadata.name).sort(), ['www-vol-0', 'www-vol-1']);
  t.deepEqual(claims[0].metadata.labels, { tier: 'data', app: 'vol' });
  t.is(claims[0].metadata.ownerReferences, undefined, 'Retain/Retain: no owners');
  t.like(claims[0].spec, { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } });
  t.is((claims[0].status as any).phase, 'Pending');
  const volumes = ((await getPod(f, 'vol-1'))!.spec as any).volumes;
  t.deepEqual(volumes.slice(0, 2), [{ name: 'www', persistentVolumeClaim: { claimName: 'www-vol-1' } }, { name: 'tmp', emptyDir: {} }]);
  t.true(recorder.messages('SuccessfulCreate').includes('create Claim www-vol-0 Pod vol-0 in StatefulSet vol success'));
});

test('persistentVolumeClaimRetentionPolicy: whenDeleted Delete gives claims to the set; whenScaled Delete gives a scaled-away claim to its pod', async (t) => {
  const { f } = await setup(t);
  const tpl = { metadata: { labels: { app: 'ret' } }, spec: { containers: [{ name: 'app', image: 'nginx', volumeMounts: [{ name: 'data', mountPath: '/d' }] }] } };
  const set = await create(
    f,
    statefulSet('ret', {
      replicas: 2,
      podManagementPolicy: 'Parallel',
      template: tpl,
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Delete' },
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
    }),
  );
  await allReady(f, ['ret-0', 'ret-1']);
  const claim = (n: string) => f.store.get(f.type('', 'v1', 'persistentvolumeclaims'), NS, n).catch(() => null);
  const owners = async (n: string) => ((await claim(n))?.metadata.ownerReferences ?? []).map((r) => `${r.kind}/${r.name}`).join(',');
  await until(f, async () => (await owners('data-ret-1')) === 'StatefulSet/ret', 'claims owned by the set');
  t.deepEqual((await claim('data-ret-0'))!.metadata.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'ret', uid: set.metadata.uid }]);
  const pod1 = (await getPod(f, 'ret-1'))!;
  await patchSpec(f, 'ret', (s) => (s.replicas = 1));
  await podsAre(f, ['ret-0']);
  // The claim of the pod scaled away now belongs to that pod (the garbage collector takes it with the pod).
  t.deepEqual((await claim('data-ret-1'))!.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Pod', name: 'ret-1', uid: pod1.metadata.uid }]);
  t.is(await owners('data-ret-0'), 'StatefulSet/ret');
});

test('history: a template rolled back renumbers its old revision; revisions beyond revisionHistoryLimit are deleted', async (t) => {
  const { f } = await setup(t);
  await create(f, statefulSet('h', { replicas: 1, podManagementPolicy: 'Parallel', revisionHistoryLimit: 1 }));
  await allReady(f, ['h-0']);
  const image = async (i: string, generation: number) => {
    await patchSpec(f, 'h', (s) => (s.template.spec.containers[0].image = i));
    await statusIs(f, 'h', (s) => s.observedGeneration === generation, `generation ${generation}`);
    await until(f, async () => ((await getPod(f, 'h-0'))?.spec as any)?.containers[0].image === i, `h-0 at ${i}`);
    await setPodStatus(f, NS, 'h-0');
    await statusIs(f, 'h', (s) => s.updatedReplicas === 1 && s.readyReplicas === 1 && s.currentRevision === s.updateRevision, `rolled to ${i}`);
  };
  const revs = async () => (await list(f, 'apps', 'controllerrevisions', NS)).map((r) => [r.revision, ((r.data as any).spec.template.spec.containers[0].image as string)]).sort();
  await image('nginx:1.28', 2);
  await image('nginx:1.27', 3);
  // The first revision came back as revision 3; the limit of 1 keeps one unused revision besides it.
  await until(f, async () => JSON.stringify(await revs()) === JSON.stringify([[2, 'nginx:1.28'], [3, 'nginx:1.27']]), 'history trimmed and renumbered');
  await image('nginx:1.29', 4);
  await until(f, async () => JSON.stringify(await revs()) === JSON.stringify([[3, 'nginx:1.27'], [4, 'nginx:1.29']]), 'oldest revision deleted');
  t.deepEqual(await revs(), [[3, 'nginx:1.27'], [4, 'nginx:1.29']]);
});

test('adoption: an orphan pod with the name and labels of an ordinal is adopted; a matching pod with another name is not', async (t) => {
  const { f } = await setup(t);
  const pods = f.type('', 'v1', 'pods');
  const bare = (name: string): KObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: 'ad' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
  await f.store.create(pods, NS, bare('ad-0'), adminCtx);
  await f.store.create(pods, NS, bare('stranger'), adminCtx);
  const set = await create(f, statefulSet('ad', { replicas: 1 }));
  const adopted = await until(f, async () => { const p = await getPod(f, 'ad-0'); return p?.metadata.ownerReferences?.[0]?.uid === set.metadata.uid && p; }, 'ad-0 adopted');
  t.is(adopted.metadata.ownerReferences?.length, 1);
  await statusIs(f, 'ad', (s) => s.replicas === 1, 'status counts the adopted pod');
  t.is((await getPod(f, 'stranger'))!.metadata.ownerReferences, undefined);
});

test('minReadySeconds: a Ready pod counts as available only after minReadySeconds, and the next waits for it', async (t) => {
  const { f, timers } = await setup(t);
  await create(f, statefulSet('slow', { replicas: 2, minReadySeconds: 30 }));
  await until(f, () => getPod(f, 'slow-0'), 'slow-0 made');
  await setPodStatus(f, NS, 'slow-0');
  await statusIs(f, 'slow', (s) => s.readyReplicas === 1 && s.availableReplicas === 0, 'ready, not yet available');
  t.deepEqual(await podNames(f, NS), ['slow-0']);
  for (let i = 0; i < 10 && !timers.delays().includes(30_000); i++) await timers.nextTimer();
  t.true(timers.delays().includes(30_000), 'requeued after minReadySeconds');
  timers.advance(30_000);
  await podsAre(f, ['slow-0', 'slow-1']);
  await statusIs(f, 'slow', (s) => s.availableReplicas === 1, 'available after 30 s');
});
