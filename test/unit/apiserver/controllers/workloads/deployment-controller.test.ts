import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { controllerRefOf } from '../../../../../apiserver/controllers/workloads/controller-ref';
import { DeploymentController } from '../../../../../apiserver/controllers/workloads/deployment-controller';
import { computeHash } from '../../../../../apiserver/controllers/workloads/deployment-util';
import { ReplicaSetController } from '../../../../../apiserver/controllers/workloads/replicaset-controller';
import { StoreInformers } from '../../../../../apiserver/store/list-watch';
import { adminCtx, openFixture, type Fixture } from '../store-fixture';
import { fakeClock, podsOf, podTemplate, RecordingRecorder, setPodState, until, waitStatus } from './deployment-harness';

interface Ctx {
  f: Fixture;
  recorder: RecordingRecorder;
  advance: (ms: number) => void;
  deployments: DeploymentController;
}

async function setup(t: { teardown(fn: () => Promise<void>): void }): Promise<Ctx> {
  const f = await openFixture();
  const recorder = new RecordingRecorder();
  const { clock, timers } = fakeClock(f);
  const informers = new StoreInformers(f.store, f.cache, { log: f.log });
  const ac = new AbortController();
  const deployments = new DeploymentController(f.store, f.cache, f.registry, { log: f.log, recorder, clock, informers });
  const runs = [new ReplicaSetController(f.store, f.cache, f.registry, { log: f.log, recorder, clock, informers }).run(ac.signal), deployments.run(ac.signal)];
  t.teardown(async () => {
    ac.abort();
    await Promise.all(runs);
    await f.close();
  });
  return { f, recorder, advance: (ms) => timers.advance(ms), deployments };
}

const dType = (f: Fixture) => f.type('apps', 'v1', 'deployments');
const rsType = (f: Fixture) => f.type('apps', 'v1', 'replicasets');
const podType = (f: Fixture) => f.type('', 'v1', 'pods');

function deployment(name: string, replicas: number, spec: Record<string, unknown> = {}): KObject {
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name }, spec: { replicas, selector: { matchLabels: { app: name } }, template: podTemplate({ app: name }, 'img:v1'), ...spec } };
}

async function patchSpec(f: Fixture, name: string, change: (spec: Record<string, any>) => void): Promise<KObject> {
  const { object } = await f.store.update(
    dType(f),
    'default',
    name,
    (cur) => {
      change(cur!.spec as Record<string, any>);
      return cur!;
    },
    adminCtx,
  );
  return object;
}

const setImage = (f: Fixture, name: string, image: string) => patchSpec(f, name, (s) => (s.template.spec.containers[0].image = image));

async function replicaSets(f: Fixture, d: KObject): Promise<KObject[]> {
  const list = await f.store.list(rsType(f), 'default', { labelSelector: [], fieldSelector: [] });
  return list.items.filter((rs) => controllerRefOf(rs)?.uid === d.metadata.uid);
}

const image = (o: KObject) => (o.spec as any).template.spec.containers[0].image as string;
const cond = (o: KObject | null, type: string) => ((o?.status as any)?.conditions ?? []).find((c: any) => c.type === type);

/**
 * Plays every node agent until done() holds: new pods are bound and become ready at once,
 * terminating pods are removed; check() runs on each round's pods (invariants).
 */
async function agent(f: Fixture, done: () => Promise<boolean>, check: (pods: KObject[]) => void = () => {}, rounds = 500): Promise<void> {
  await until(
    'the rollout settles',
    async () => {
      const pods = await podsOf(f);
      check(pods);
      for (const p of pods) {
        if (p.metadata.deletionTimestamp) await f.store.delete(podType(f), 'default', p.metadata.name!, { gracePeriodSeconds: 0 }, adminCtx).catch(() => undefined);
        else if (!(p.spec as any).nodeName) await setPodState(f, p, { node: `n${p.metadata.name!.length % 3}` });
      }
      return (await done()) ? true : undefined;
    },
    rounds,
  );
}

async function complete(f: Fixture, name: string, img: string): Promise<boolean> {
  const d = await f.store.get(dType(f), 'default', name);
  const s = (d.status ?? {}) as Record<string, any>;
  const r = (d.spec as any).replicas;
  return image(d) === img && s.observedGeneration === d.metadata.generation && s.updatedReplicas === r && s.replicas === r && s.availableReplicas === r && cond(d, 'Progressing')?.reason === 'NewReplicaSetAvailable';
}

test('a new Deployment gets ReplicaSet <name>-<hash> with the hash label, revision 1, replicas annotations, and rolls out to Available', async (t) => {
  const { f, recorder } = await setup(t);
  const d = await f.store.create(dType(f), 'default', deployment('web', 3), adminCtx);
  await agent(f, () => complete(f, 'web', 'img:v1'));
  const [rs] = await replicaSets(f, d);
  const hash = rs.metadata.labels!['pod-template-hash'];
  t.regex(hash, /^[bcdfghjklmnpqrstvwxz2456789]{1,10}$/);
  t.is(rs.metadata.name, `web-${hash}`);
  t.deepEqual((rs.spec as any).selector, { matchLabels: { app: 'web', 'pod-template-hash': hash } });
  t.like(rs.metadata.annotations, { 'deployment.kubernetes.io/revision': '1', 'deployment.kubernetes.io/desired-replicas': '3', 'deployment.kubernetes.io/max-replicas': '4' });
  for (const p of await podsOf(f, rs.metadata.uid)) t.is(p.metadata.labels!['pod-template-hash'], hash);
  const done = await f.store.get(dType(f), 'default', 'web');
  t.is(done.metadata.annotations!['deployment.kubernetes.io/revision'], '1');
  t.like(cond(done, 'Available'), { status: 'True', reason: 'MinimumReplicasAvailable', message: 'Deployment has minimum availability.' });
  t.like(cond(done, 'Progressing'), { status: 'True', reason: 'NewReplicaSetAvailable', message: `ReplicaSet "web-${hash}" has successfully progressed.` });
  t.like(done.status, { replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3 });
  t.true(recorder.about('web').includes(`ScalingReplicaSet: Scaled up replica set web-${hash} from 0 to 3`));
});

test('RollingUpdate keeps within maxSurge and maxUnavailable, scales the old ReplicaSet down and records both revisions', async (t) => {
  const { f, recorder } = await setup(t);
  const strategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } };
  const d = await f.store.create(dType(f), 'default', deployment('web', 4, { strategy }), adminCtx);
  await agent(f, () => complete(f, 'web', 'img:v1'));
  await setImage(f, 'web', 'img:v2');
  let most = 0;
  let fewestReady = Infinity;
  await agent(
    f,
    () => complete(f, 'web', 'img:v2'),
    (pods) => {
      const live = pods.filter((p) => !p.metadata.deletionTimestamp);
      most = Math.max(most, live.length);
      fewestReady = Math.min(fewestReady, live.filter((p) => (p.status as any)?.conditions?.[0]?.status === 'True').length);
    },
  );
  t.true(most <= 5, `at most replicas + maxSurge pods: ${most}`);
  t.true(fewestReady >= 3, `at least replicas - maxUnavailable ready: ${fewestReady}`);
  const rss = await replicaSets(f, d);
  const fresh = rss.find((rs) => image(rs) === 'img:v2')!;
  const old = rss.find((rs) => image(rs) === 'img:v1')!;
  t.deepEqual([(fresh.spec as any).replicas, (old.spec as any).replicas], [4, 0]);
  t.deepEqual([fresh.metadata.annotations!['deployment.kubernetes.io/revision'], old.metadata.annotations!['deployment.kubernetes.io/revision']], ['2', '1']);
  t.is((await f.store.get(dType(f), 'default', 'web')).metadata.annotations!['deployment.kubernetes.io/revision'], '2');
  const events = recorder.about('web');
  t.true(events.some((e) => e.startsWith(`ScalingReplicaSet: Scaled up replica set ${fresh.metadata.name} from 0 to `)));
  t.true(events.some((e) => e.startsWith(`ScalingReplicaSet: Scaled down replica set ${old.metadata.name} from 4 to `)));
  t.true(events.some((e) => e.startsWith(`ScalingReplicaSet: Scaled down replica set ${old.metadata.name} from `) && e.endsWith(' to 0')));
});

test('Recreate scales every old pod away, and waits until none runs, before the new ReplicaSet gets any', async (t) => {
  const { f, deployments } = await setup(t);
  const d = await f.store.create(dType(f), 'default', deployment('db', 2, { strategy: { type: 'Recreate' } }), adminCtx);
  await agent(f, () => complete(f, 'db', 'img:v1'));
  await setImage(f, 'db', 'img:v2');
  // The old pods terminate but their agent has not finished them: they still run.
  await until('old ReplicaSet at zero, its pods terminating', async () => {
    const [old] = await replicaSets(f, d);
    const pods = await podsOf(f, old.metadata.uid);
    return (old.spec as any).replicas === 0 && (old.status as any)?.replicas === 0 && pods.length === 2 && pods.every((p) => p.metadata.deletionTimestamp) ? true : undefined;
  });
  await deployments.sync('default/db');
  t.is((await replicaSets(f, d)).length, 1, 'no new ReplicaSet while old pods run');
  let mixed = false;
  await agent(
    f,
    () => complete(f, 'db', 'img:v2'),
    (pods) => {
      const live = pods.filter((p) => !p.metadata.deletionTimestamp);
      const images = new Set(pods.map((p) => (p.spec as any).containers[0].image));
      if (images.size > 1 && live.length > 0) mixed = true;
    },
  );
  t.false(mixed, 'old and new pods never ran together');
  t.is((await replicaSets(f, d)).length, 2);
});

test('rolling back to an older template reuses its ReplicaSet, moving it to the newest revision with the old one in revision-history', async (t) => {
  const { f } = await setup(t);
  const d = await f.store.create(dType(f), 'default', deployment('web', 2), adminCtx);
  await agent(f, () => complete(f, 'web', 'img:v1'));
  await setImage(f, 'web', 'img:v2');
  await agent(f, () => complete(f, 'web', 'img:v2'));
  const first = (await replicaSets(f, d)).find((rs) => image(rs) === 'img:v1')!;
  // What kubectl rollout undo sends: the old ReplicaSet's template without its hash label, as Go
  // encodes it (with metadata.creationTimestamp: null).
  const tpl = structuredClone((first.spec as any).template);
  delete tpl.metadata.labels['pod-template-hash'];
  tpl.metadata.creationTimestamp = null;
  await patchSpec(f, 'web', (s) => (s.template = tpl));
  await agent(f, () => complete(f, 'web', 'img:v1'));
  const rss = await replicaSets(f, d);
  t.is(rss.length, 2);
  const back = rss.find((rs) => rs.metadata.uid === first.metadata.uid)!;
  t.like(back.metadata.annotations, { 'deployment.kubernetes.io/revision': '3', 'deployment.kubernetes.io/revision-history': '1' });
  t.is((back.spec as any).replicas, 2);
});

test('revisionHistoryLimit: old ReplicaSets beyond it are deleted once scaled down', async (t) => {
  const { f } = await setup(t);
  const d = await f.store.create(dType(f), 'default', deployment('web', 1, { revisionHistoryLimit: 1 }), adminCtx);
  for (const v of ['img:v1', 'img:v2', 'img:v3']) {
    if (v !== 'img:v1') await setImage(f, 'web', v);
    await agent(f, () => complete(f, 'web', v));
  }
  const left = await until('cleanup', async () => {
    const rss = (await replicaSets(f, d)).filter((rs) => !rs.metadata.deletionTimestamp);
    return rss.length === 2 ? rss : undefined;
  });
  t.deepEqual(left.map(image).sort(), ['img:v2', 'img:v3']);
});

test('paused: a template change makes no ReplicaSet, replicas still scale, Progressing is DeploymentPaused; resume rolls out', async (t) => {
  const { f } = await setup(t);
  const d = await f.store.create(dType(f), 'default', deployment('web', 2), adminCtx);
  await agent(f, () => complete(f, 'web', 'img:v1'));
  await patchSpec(f, 'web', (s) => {
    s.paused = true;
    s.template.spec.containers[0].image = 'img:v2';
    s.replicas = 3;
  });
  const paused = await waitStatus(f, 'apps', 'deployments', 'web', (s, o) => s.observedGeneration === o.metadata.generation && s.replicas === 3 && cond(o, 'Progressing')?.reason === 'DeploymentPaused');
  t.like(cond(paused, 'Progressing'), { status: 'Unknown', message: 'Deployment is paused' });
  const rss = await replicaSets(f, d);
  t.deepEqual(rss.map((rs) => [image(rs), (rs.spec as any).replicas]), [['img:v1', 3]]);
  await patchSpec(f, 'web', (s) => (s.paused = false));
  await agent(f, () => complete(f, 'web', 'img:v2'));
  t.is((await replicaSets(f, d)).length, 2);
});

test('progressDeadlineSeconds: a rollout that makes no progress is marked ProgressDeadlineExceeded', async (t) => {
  const { f, advance } = await setup(t);
  await f.store.create(dType(f), 'default', deployment('web', 1, { progressDeadlineSeconds: 30 }), adminCtx);
  // No agent: pods never become ready.
  await waitStatus(f, 'apps', 'deployments', 'web', (_s, o) => cond(o, 'Progressing')?.reason === 'NewReplicaSetCreated' || cond(o, 'Progressing')?.reason === 'ReplicaSetUpdated');
  const timedOut = await until('timed out', async () => {
    advance(10_000);
    const o = await f.store.get(dType(f), 'default', 'web');
    return cond(o, 'Progressing')?.reason === 'ProgressDeadlineExceeded' ? o : undefined;
  }, 200);
  t.like(cond(timedOut, 'Progressing'), { status: 'False' });
  t.regex(cond(timedOut, 'Progressing').message, /^ReplicaSet "web-\w+" has timed out progressing\.$/);
  t.like(cond(timedOut, 'Available'), { status: 'False', reason: 'MinimumReplicasUnavailable' });
});

test('scaling in the middle of a rollout adds to both ReplicaSets in proportion', async (t) => {
  const { f } = await setup(t);
  const strategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: 3, maxUnavailable: 0 } };
  const d = await f.store.create(dType(f), 'default', deployment('web', 6, { strategy }), adminCtx);
  await agent(f, () => complete(f, 'web', 'img:v1'));
  // A new template whose pods never get ready (no agent): the rollout stops at 6 old + 3 new.
  await setImage(f, 'web', 'img:v2');
  await until('surged', async () => {
    const rss = await replicaSets(f, d);
    return rss.map((rs) => (rs.spec as any).replicas).sort().join() === '3,6' ? true : undefined;
  });
  await patchSpec(f, 'web', (s) => (s.replicas = 12));
  const sizes = await until('scaled', async () => {
    const rss = await replicaSets(f, d);
    const total = rss.reduce((n, rs) => n + (rs.spec as any).replicas, 0);
    return total === 15 ? Object.fromEntries(rss.map((rs) => [image(rs), (rs.spec as any).replicas])) : undefined;
  });
  // 9 pods for 6+3 become 15 for 12+3: each keeps its share (6→10, 3→5).
  t.deepEqual(sizes, { 'img:v1': 10, 'img:v2': 5 });
});

test('a ReplicaSet name taken by another object is a hash collision: collisionCount goes up and the next hash names the ReplicaSet', async (t) => {
  const { f } = await setup(t);
  // The template as the server stores it (defaulted), hashed as the controller will.
  const dry = await f.store.create(dType(f), 'default', deployment('web', 1), { ...adminCtx, dryRun: true });
  const taken = `web-${computeHash((dry.spec as any).template)}`;
  await f.store.create(rsType(f), 'default', { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: taken }, spec: { replicas: 0, selector: { matchLabels: { app: 'other' } }, template: podTemplate({ app: 'other' }) } }, adminCtx);
  const d = await f.store.create(dType(f), 'default', deployment('web', 1), adminCtx);
  const done = await waitStatus(f, 'apps', 'deployments', 'web', (s) => s.collisionCount === 1 && s.updatedReplicas === 1);
  const [rs] = await replicaSets(f, d);
  t.is(rs.metadata.name, `web-${computeHash((dry.spec as any).template, 1)}`);
  t.not(rs.metadata.name, taken);
  t.is((done!.status as any).collisionCount, 1);
});
