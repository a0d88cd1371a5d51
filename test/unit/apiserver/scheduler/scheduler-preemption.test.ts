import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import { Scheduler } from '../../../../apiserver/scheduler/scheduler';
import { RecordingRecorder } from '../../../helpers/recording-recorder';
import { adminCtx, openFixture, waitFor, type Fixture } from '../controllers/store-fixture';
import { FakeTimers } from './fake-timers';
import { node } from './objects';

// Preemption in the running scheduler over a real store (fake clock and back-off timers).

async function setup(t: { teardown(fn: () => Promise<void>): void }) {
  const f = await openFixture();
  const recorder = new RecordingRecorder();
  const s = new Scheduler(f.store, f.cache, f.registry, { now: f.clock.now, log: f.log, timers: new FakeTimers(f.clock), recorder });
  const ac = new AbortController();
  const running = s.run(ac.signal);
  t.teardown(async () => {
    ac.abort();
    await running;
    await f.close();
  });
  return { f, recorder };
}

const pods = (f: Fixture) => f.type('', 'v1', 'pods');
const spec = (p: KObject | null) => (p?.spec ?? {}) as Record<string, unknown>;
const status = (p: KObject | null) => (p?.status ?? {}) as { nominatedNodeName?: string; conditions?: Array<Record<string, string>> };

async function addPod(f: Fixture, name: string, priority: number, cpu: string, extra: Record<string, unknown> = {}): Promise<void> {
  await f.store.create(pods(f), 'ns', { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { priority, containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu } } }], ...extra } }, adminCtx);
}

test('a pod that fits nowhere preempts a lower-priority pod, is nominated, and is bound once the victim is gone', async (t) => {
  const { f, recorder } = await setup(t);
  await f.store.create(f.type('', 'v1', 'nodes'), '', node('n1', { allocatable: { cpu: '1', memory: '2Gi', pods: '10' } }), adminCtx);
  await addPod(f, 'low', 1, '800m');
  await waitFor(f, pods(f), 'ns', 'low', (p) => spec(p).nodeName === 'n1');
  await addPod(f, 'high', 1000, '800m');
  const nominated = await waitFor(f, pods(f), 'ns', 'high', (p) => status(p).nominatedNodeName === 'n1');
  t.falsy(spec(nominated).nodeName);
  const victim = await waitFor(f, pods(f), 'ns', 'low', (p) => !!p?.metadata.deletionTimestamp);
  t.like(status(victim).conditions?.find((c) => c.type === 'DisruptionTarget'), { status: 'True', reason: 'PreemptionByScheduler', message: 'default-scheduler: preempting to accommodate a higher priority pod' });
  const preempted = recorder.events.find((e) => e.reason === 'Preempted');
  t.like(preempted, { type: 'Normal', action: 'Preempting', message: `Preempted by pod ${nominated!.metadata.uid} on node n1`, regarding: { name: 'low' } });
  // A pod of lower priority than the nominated one cannot take the room being made.
  await addPod(f, 'mid', 10, '800m');
  // The node agent finishes the graceful delete.
  await f.store.delete(pods(f), 'ns', 'low', { gracePeriodSeconds: 0 }, adminCtx);
  const bound = await waitFor(f, pods(f), 'ns', 'high', (p) => spec(p).nodeName === 'n1');
  t.is(spec(bound).nodeName, 'n1');
  const mid = await waitFor(f, pods(f), 'ns', 'mid', (p) => status(p).conditions?.some((c) => c.reason === 'Unschedulable') ?? false);
  t.falsy(spec(mid).nodeName);
  // mid (10) cannot preempt high (1000): it stays pending, high stays.
  t.is(recorder.events.filter((e) => e.reason === 'Preempted').length, 1);
});

test('preemptionPolicy Never and equal priorities preempt nothing', async (t) => {
  const { f, recorder } = await setup(t);
  await f.store.create(f.type('', 'v1', 'nodes'), '', node('n1', { allocatable: { cpu: '1', memory: '2Gi', pods: '10' } }), adminCtx);
  await addPod(f, 'low', 1, '800m');
  await waitFor(f, pods(f), 'ns', 'low', (p) => spec(p).nodeName === 'n1');
  await addPod(f, 'polite', 1000, '800m', { preemptionPolicy: 'Never' });
  await addPod(f, 'peer', 1, '800m');
  for (const name of ['polite', 'peer']) await waitFor(f, pods(f), 'ns', name, (p) => status(p).conditions?.some((c) => c.reason === 'Unschedulable') ?? false);
  const low = await f.store.get(pods(f), 'ns', 'low');
  t.falsy(low.metadata.deletionTimestamp);
  t.false(recorder.reasons().includes('Preempted'));
});

test('a higher-priority preemptor takes over the room: the lower nomination on that node is cleared', async (t) => {
  const { f } = await setup(t);
  await f.store.create(f.type('', 'v1', 'nodes'), '', node('n1', { allocatable: { cpu: '1', memory: '2Gi', pods: '10' } }), adminCtx);
  await addPod(f, 'low', 1, '800m');
  await waitFor(f, pods(f), 'ns', 'low', (p) => spec(p).nodeName === 'n1');
  await addPod(f, 'mid', 10, '800m');
  await waitFor(f, pods(f), 'ns', 'mid', (p) => status(p).nominatedNodeName === 'n1');
  await addPod(f, 'high', 1000, '800m');
  await waitFor(f, pods(f), 'ns', 'high', (p) => status(p).nominatedNodeName === 'n1');
  const mid = await waitFor(f, pods(f), 'ns', 'mid', (p) => !status(p).nominatedNodeName);
  t.falsy(status(mid).nominatedNodeName);
  await f.store.delete(pods(f), 'ns', 'low', { gracePeriodSeconds: 0 }, adminCtx);
  t.is(spec(await waitFor(f, pods(f), 'ns', 'high', (p) => !!spec(p).nodeName)).nodeName, 'n1');
  t.falsy(spec(await f.store.get(pods(f), 'ns', 'mid')).nodeName);
});
