import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import { Scheduler } from '../../../../apiserver/scheduler/scheduler';
import { RecordingRecorder } from '../../../helpers/recording-recorder';
import { adminCtx, openFixture, waitFor, type Fixture } from '../controllers/store-fixture';
import { FakeTimers } from './fake-timers';
import { node, type NodeOpts } from './objects';

interface Ctx {
  f: Fixture;
  timers: FakeTimers;
  recorder: RecordingRecorder;
}

async function setup(t: { teardown(fn: () => Promise<void>): void }): Promise<Ctx> {
  const f = await openFixture();
  const timers = new FakeTimers(f.clock);
  const recorder = new RecordingRecorder();
  const s = new Scheduler(f.store, f.cache, f.registry, { now: f.clock.now, log: f.log, timers, recorder });
  const ac = new AbortController();
  const running = s.run(ac.signal);
  t.teardown(async () => {
    ac.abort();
    await running;
    await f.close();
  });
  return { f, timers, recorder };
}

const pods = (f: Fixture) => f.type('', 'v1', 'pods');
const nodes = (f: Fixture) => f.type('', 'v1', 'nodes');

async function addNode(f: Fixture, name: string, o: NodeOpts = {}): Promise<void> {
  await f.store.create(nodes(f), '', node(name, o), adminCtx);
}

async function addPod(f: Fixture, name: string, spec: Record<string, unknown> = {}, requests?: Record<string, string>): Promise<void> {
  await f.store.create(
    pods(f),
    'ns',
    { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox:1.36', ...(requests ? { resources: { requests } } : {}) }], ...spec } },
    adminCtx,
  );
}

const nodeName = (p: KObject | null) => (p?.spec as { nodeName?: string } | undefined)?.nodeName;
const scheduledCond = (p: KObject | null) => ((p?.status as { conditions?: Array<Record<string, string>> } | undefined)?.conditions ?? []).find((c) => c.type === 'PodScheduled');

function bound(f: Fixture, name: string): Promise<KObject | null> {
  return waitFor(f, pods(f), 'ns', name, (p) => !!nodeName(p));
}

function unschedulable(f: Fixture, name: string, message?: string): Promise<KObject | null> {
  return waitFor(f, pods(f), 'ns', name, (p) => {
    const c = scheduledCond(p);
    return c?.reason === 'Unschedulable' && (message === undefined || c.message === message);
  });
}

test('pods are bound to the node that passes every filter', async (t) => {
  const { f } = await setup(t);
  await addNode(f, 'cordoned', { unschedulable: true, labels: { zone: 'b' } });
  await addNode(f, 'not-ready', { ready: 'False', labels: { zone: 'b' } });
  await addNode(f, 'tainted', { taints: [{ key: 'dedicated', value: 'infra', effect: 'NoSchedule' }], labels: { zone: 'b' } });
  await addNode(f, 'zone-a', { labels: { zone: 'a' } });
  await addNode(f, 'zone-b', { labels: { zone: 'b' }, allocatable: { cpu: '8', memory: '16Gi', pods: '110', 'vendor.example/gpu': '2' } });
  await addPod(f, 'selector', { nodeSelector: { zone: 'b' } });
  await addPod(f, 'affinity', {
    affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['b'] }] }] } } },
  });
  await addPod(f, 'gpu', {}, { 'vendor.example/gpu': '1' });
  await addPod(f, 'tolerating', { nodeSelector: { 'svc.io/hostname': 'tainted' }, tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'infra', effect: 'NoSchedule' }] });
  await addPod(f, 'by-name', {
    affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['zone-a'] }] }] } } },
  });
  t.is(nodeName(await bound(f, 'selector')), 'zone-b');
  t.is(nodeName(await bound(f, 'affinity')), 'zone-a');
  t.is(nodeName(await bound(f, 'gpu')), 'zone-b');
  t.is(nodeName(await bound(f, 'tolerating')), 'tainted');
  const p = await bound(f, 'by-name');
  t.is(nodeName(p), 'zone-a');
  t.is(scheduledCond(p)?.status, 'True');
});

test('a pod that fits nowhere gets PodScheduled=False Unschedulable with upstream\'s message, and is bound once a node fits', async (t) => {
  const { f } = await setup(t);
  await addNode(f, 'n1', { allocatable: { cpu: '1', memory: '1Gi', pods: '10' } });
  await addNode(f, 'n2', { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] });
  await addNode(f, 'n3', { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoExecute' }] });
  await addPod(f, 'big', {}, { cpu: '2' });
  const p = await unschedulable(f, 'big');
  t.is(scheduledCond(p)?.status, 'False');
  t.is(scheduledCond(p)?.message, '0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint {dedicated: gpu}.');
  t.is(nodeName(p), undefined);
  await addNode(f, 'n4');
  const b = await bound(f, 'big');
  t.is(nodeName(b), 'n4');
  t.is(scheduledCond(b)?.status, 'True');
  t.is(scheduledCond(b)?.reason, undefined);
});

test('requests of pods already on a node count; freeing them lets a waiting pod in', async (t) => {
  const { f } = await setup(t);
  await addNode(f, 'small', { allocatable: { cpu: '1', memory: '2Gi', pods: '10' } });
  await addPod(f, 'first', {}, { cpu: '600m' });
  t.is(nodeName(await bound(f, 'first')), 'small');
  await addPod(f, 'second', {}, { cpu: '600m' });
  await unschedulable(f, 'second', '0/1 nodes are available: 1 Insufficient cpu.');
  await f.store.delete(pods(f), 'ns', 'first', { gracePeriodSeconds: 0 }, adminCtx);
  t.is(nodeName(await bound(f, 'second')), 'small');
  await addPod(f, 'third', {}, { memory: '3Gi' });
  await unschedulable(f, 'third', '0/1 nodes are available: 1 Insufficient memory.');
});

test('pods spread over equal nodes by least allocation', async (t) => {
  const { f } = await setup(t);
  await addNode(f, 'a');
  await addNode(f, 'b');
  for (const n of ['p1', 'p2', 'p3', 'p4']) await addPod(f, n, {}, { cpu: '1', memory: '1Gi' });
  const placed: string[] = [];
  for (const n of ['p1', 'p2', 'p3', 'p4']) placed.push(nodeName(await bound(f, n))!);
  t.deepEqual(placed.filter((x) => x === 'a').length, 2);
  t.deepEqual(placed.filter((x) => x === 'b').length, 2);
});

test('a pod bound by someone else counts: a node at allocatable pods takes no more', async (t) => {
  const { f } = await setup(t);
  await addNode(f, 'tiny', { allocatable: { cpu: '4', memory: '4Gi', pods: '1' } });
  await f.store.create(pods(f), 'ns', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'static' }, spec: { nodeName: 'tiny', containers: [{ name: 'c', image: 'busybox:1.36' }] } }, adminCtx);
  await addPod(f, 'late');
  await unschedulable(f, 'late', '0/1 nodes are available: 1 Too many pods.');
  t.is(nodeName(await f.store.get(pods(f), 'ns', 'late')), undefined);
});

test('unschedulable pods retry with doubling back-off', async (t) => {
  const { f, timers } = await setup(t);
  await addNode(f, 'n1', { ready: 'False' });
  const armed = timers.nextTimer();
  await addPod(f, 'p');
  await unschedulable(f, 'p', '0/1 nodes are available: 1 node(s) were not ready.');
  await armed;
  t.deepEqual(timers.delays(), [1000]);
  for (const want of [2000, 4000, 8000, 10000, 10000]) {
    const next = timers.nextTimer();
    timers.advance(timers.delays()[0]);
    await next;
    t.deepEqual(timers.delays(), [want]);
  }
});

test('pods of other schedulers are left alone; gated pods wait for their gates', async (t) => {
  const { f } = await setup(t);
  await addNode(f, 'n1');
  await addPod(f, 'other', { schedulerName: 'my-scheduler' });
  await addPod(f, 'gated', { schedulingGates: [{ name: 'example.com/hold' }] });
  await addPod(f, 'mine');
  t.is(nodeName(await bound(f, 'mine')), 'n1');
  const g = await waitFor(f, pods(f), 'ns', 'gated', (p) => scheduledCond(p)?.reason === 'SchedulingGated');
  t.is(scheduledCond(g)?.message, 'Scheduling is blocked due to non-empty scheduling gates');
  t.is(nodeName(await f.store.get(pods(f), 'ns', 'other')), undefined);
  t.is(scheduledCond(await f.store.get(pods(f), 'ns', 'other')), undefined);
  await f.store.update(pods(f), 'ns', 'gated', (cur) => ({ ...cur!, spec: { ...(cur!.spec as object), schedulingGates: [] } }), adminCtx);
  t.is(nodeName(await bound(f, 'gated')), 'n1');
});

test('events: FailedScheduling with the per-node reasons on each failed attempt, then Scheduled with upstream\'s message', async (t) => {
  const { f, recorder } = await setup(t);
  await addNode(f, 'n1', { allocatable: { cpu: '1', memory: '1Gi', pods: '10' } });
  await addNode(f, 'n2', { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] });
  await addPod(f, 'big', {}, { cpu: '2' });
  const p = await unschedulable(f, 'big');
  const failed = recorder.events.find((e) => e.reason === 'FailedScheduling');
  t.like(failed, {
    type: 'Warning',
    action: 'Scheduling',
    message: '0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {dedicated: gpu}.',
    regarding: { apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'big', uid: p!.metadata.uid },
  });
  await addNode(f, 'n3');
  await bound(f, 'big');
  const scheduled = recorder.events.filter((e) => e.reason === 'Scheduled');
  t.is(scheduled.length, 1);
  t.like(scheduled[0], { type: 'Normal', action: 'Binding', message: 'Successfully assigned ns/big to n3', regarding: { kind: 'Pod', name: 'big' } });
  t.is(recorder.reasons().at(-1), 'Scheduled');
});
