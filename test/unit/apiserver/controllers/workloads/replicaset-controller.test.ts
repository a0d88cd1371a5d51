import test from 'ava';
import { ApiError } from '../../../../../apiserver/api/errors';
import type { KObject } from '../../../../../apiserver/api/types';
import { controllerRefOf } from '../../../../../apiserver/controllers/workloads/controller-ref';
import { ReplicaSetController } from '../../../../../apiserver/controllers/workloads/replicaset-controller';
import { adminCtx, openFixture, type Fixture } from '../store-fixture';
import { fakeClock, podsOf, podTemplate, RecordingRecorder, setPodState, until, waitStatus } from './deployment-harness';

interface Ctx {
  f: Fixture;
  recorder: RecordingRecorder;
  advance: (ms: number) => void;
}

async function setup(t: { teardown(fn: () => Promise<void>): void }, opts: { burstReplicas?: number } = {}): Promise<Ctx> {
  const f = await openFixture();
  const recorder = new RecordingRecorder();
  const { clock, timers } = fakeClock(f);
  const c = new ReplicaSetController(f.store, f.cache, f.registry, { log: f.log, recorder, clock, ...opts });
  const ac = new AbortController();
  const running = c.run(ac.signal);
  t.teardown(async () => {
    ac.abort();
    await running;
    await f.close();
  });
  return { f, recorder, advance: (ms) => timers.advance(ms) };
}

const rsType = (f: Fixture) => f.type('apps', 'v1', 'replicasets');

function replicaSet(name: string, replicas: number, extra: Record<string, unknown> = {}): KObject {
  return { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name }, spec: { replicas, selector: { matchLabels: { app: name } }, template: podTemplate({ app: name }), ...extra } };
}

async function scale(f: Fixture, name: string, replicas: number): Promise<void> {
  await f.store.update(rsType(f), 'default', name, (cur) => ({ ...cur!, spec: { ...(cur!.spec as object), replicas } }), adminCtx);
}

test('creates the missing pods from the template with a controller reference, records SuccessfulCreate, and reports status', async (t) => {
  const { f, recorder } = await setup(t);
  const rs = await f.store.create(rsType(f), 'default', replicaSet('web', 3), adminCtx);
  await waitStatus(f, 'apps', 'replicasets', 'web', (s) => s.replicas === 3 && s.observedGeneration === 1);
  const pods = await podsOf(f, rs.metadata.uid);
  t.is(pods.length, 3);
  for (const p of pods) {
    t.true(p.metadata.name!.startsWith('web-'));
    t.deepEqual(p.metadata.labels, { app: 'web' });
    t.deepEqual(controllerRefOf(p), { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: rs.metadata.uid, controller: true, blockOwnerDeletion: true });
  }
  t.deepEqual(recorder.about('web').sort(), pods.map((p) => `SuccessfulCreate: Created pod: ${p.metadata.name}`).sort());
  // Ready pods count as ready and available (minReadySeconds 0); fullyLabeled counts template labels.
  for (const p of pods) await setPodState(f, p, { node: 'n1' });
  const done = await waitStatus(f, 'apps', 'replicasets', 'web', (s) => s.availableReplicas === 3);
  t.like(done!.status, { replicas: 3, fullyLabeledReplicas: 3, readyReplicas: 3, availableReplicas: 3, observedGeneration: 1 });
  // No more pods than asked for, however many syncs ran.
  t.is((await podsOf(f, rs.metadata.uid)).length, 3);
});

test('scales down least valuable first: unscheduled, then pending, then not ready, then doubled up on a node', async (t) => {
  const { f, recorder } = await setup(t);
  const rs = await f.store.create(rsType(f), 'default', replicaSet('web', 5), adminCtx);
  await waitStatus(f, 'apps', 'replicasets', 'web', (s) => s.replicas === 5);
  const [p1, p2, p3, p4, p5] = await podsOf(f, rs.metadata.uid);
  // p1 unscheduled; p2 pending on n1; p3 running not ready on n2; p4 and p5 ready, p4 alone on n3, p5 with p2 on n1.
  await setPodState(f, p2, { node: 'n1', phase: 'Pending', ready: false });
  await setPodState(f, p3, { node: 'n2', ready: false });
  await setPodState(f, p4, { node: 'n3' });
  await setPodState(f, p5, { node: 'n1' });
  await waitStatus(f, 'apps', 'replicasets', 'web', (s) => s.readyReplicas === 2);
  await scale(f, 'web', 1);
  // The first status of the new generation already leaves the deleted pods out.
  const first = await waitStatus(f, 'apps', 'replicasets', 'web', (s) => s.observedGeneration === 2);
  t.like(first!.status, { replicas: 1, availableReplicas: 1 });
  // Bound pods are deleted gracefully (their node agent finishes it): they remain, terminating.
  const left = (await podsOf(f, rs.metadata.uid)).filter((p) => !p.metadata.deletionTimestamp);
  t.deepEqual(left.map((p) => p.metadata.name), [p4.metadata.name]);
  t.deepEqual(recorder.about('web').filter((e) => e.startsWith('SuccessfulDelete')).sort(), [p1, p2, p3, p5].map((p) => `SuccessfulDelete: Deleted pod: ${p.metadata.name}`).sort());
});

test('adopts a matching orphan, releases a pod whose labels stop matching, and replaces it', async (t) => {
  const { f } = await setup(t);
  const pods = f.type('', 'v1', 'pods');
  await f.store.create(pods, 'default', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'stray', labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } }, adminCtx);
  const rs = await f.store.create(rsType(f), 'default', replicaSet('web', 2), adminCtx);
  await waitStatus(f, 'apps', 'replicasets', 'web', (s) => s.replicas === 2);
  const owned = await podsOf(f, rs.metadata.uid);
  t.is(owned.length, 2);
  t.true(owned.some((p) => p.metadata.name === 'stray'));
  await f.store.update(pods, 'default', 'stray', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, labels: { app: 'debug' } } }), adminCtx);
  await until('stray released and replaced', async () => {
    const mine = await podsOf(f, rs.metadata.uid);
    const stray = await f.store.get(pods, 'default', 'stray');
    return mine.length === 2 && !mine.some((p) => p.metadata.name === 'stray') && stray.metadata.ownerReferences === undefined ? true : undefined;
  });
  t.is((await f.store.get(pods, 'default', 'stray')).metadata.ownerReferences, undefined);
  const mine = await podsOf(f, rs.metadata.uid);
  t.is(mine.length, 2);
  t.false(mine.some((p) => p.metadata.name === 'stray'));
});

test('a pod being deleted no longer counts: its replacement is created at once', async (t) => {
  const { f } = await setup(t);
  const pods = f.type('', 'v1', 'pods');
  const rs = await f.store.create(rsType(f), 'default', replicaSet('web', 2), adminCtx);
  await waitStatus(f, 'apps', 'replicasets', 'web', (s) => s.replicas === 2);
  const [victim] = await podsOf(f, rs.metadata.uid);
  await setPodState(f, victim, { node: 'n1' });
  // A graceful delete: the pod stays (terminating) until its node agent confirms.
  await f.store.delete(pods, 'default', victim.metadata.name!, {}, adminCtx);
  const all = await until('a replacement beside the terminating pod', async () => {
    const mine = await podsOf(f, rs.metadata.uid);
    return mine.length === 3 ? mine : undefined;
  });
  t.is(all.filter((p) => p.metadata.deletionTimestamp).length, 1);
});

test('availableReplicas waits minReadySeconds after readiness', async (t) => {
  const { f, advance } = await setup(t);
  const rs = await f.store.create(rsType(f), 'default', replicaSet('web', 1, { minReadySeconds: 30 }), adminCtx);
  await waitStatus(f, 'apps', 'replicasets', 'web', (s) => s.replicas === 1);
  const [p] = await podsOf(f, rs.metadata.uid);
  await setPodState(f, p, { node: 'n1' });
  const ready = await waitStatus(f, 'apps', 'replicasets', 'web', (s) => s.readyReplicas === 1);
  t.is((ready!.status as any).availableReplicas, undefined);
  advance(31_000);
  const available = await waitStatus(f, 'apps', 'replicasets', 'web', (s) => s.availableReplicas === 1);
  t.is((available!.status as any).availableReplicas, 1);
});

test('failed creates: slow start stops after the first failing batch, FailedCreate events and a ReplicaFailure condition, cleared once creates succeed', async (t) => {
  const { f, recorder, advance } = await setup(t);
  let refuse = true;
  let attempts = 0;
  const create = f.store.create.bind(f.store);
  f.store.create = async (type, ns, obj, ctx) => {
    if (type.resource === 'pods' && refuse) {
      attempts++;
      throw new ApiError('Forbidden', `pods "${obj.metadata.generateName}x" is forbidden: exceeded quota: q`);
    }
    return create(type, ns, obj, ctx);
  };
  await f.store.create(rsType(f), 'default', replicaSet('web', 10), adminCtx);
  const failed = await waitStatus(f, 'apps', 'replicasets', 'web', (s) => (s.conditions ?? []).some((c: any) => c.type === 'ReplicaFailure'));
  // A sync's first batch is one pod: one refused create and nothing after it. The sync its own
  // status write triggers tries once more (upstream enqueues on every ReplicaSet update too);
  // without slow start this would be 10 or 20.
  t.true(attempts >= 1 && attempts <= 2, `attempts ${attempts}`);
  t.like((failed!.status as any).conditions[0], { type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: 'pods "web-x" is forbidden: exceeded quota: q' });
  const failures = recorder.about('web');
  refuse = false;
  t.deepEqual(failures, Array<string>(attempts).fill('FailedCreate: Error creating: pods "web-x" is forbidden: exceeded quota: q'));
  // The failed key is retried with back-off on the fake clock.
  const ok = await until('retried', async () => {
    advance(60_000);
    const rs = await f.store.get(rsType(f), 'default', 'web');
    return (rs.status as any)?.replicas === 10 && !(rs.status as any).conditions ? rs : undefined;
  });
  t.is((await podsOf(f)).length, 10);
  t.true(ok.metadata.generation === (ok.status as any).observedGeneration);
});
