import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import { matchingTolerations, minTolerationSeconds, TaintEvictionController } from '../../../../apiserver/controllers/taint-eviction';
import type { Toleration } from '../../../../apiserver/scheduler/taints';
import { RecordingRecorder } from '../../../helpers/recording-recorder';
import { FakeTimers } from '../scheduler/fake-timers';
import { adminCtx, openFixture, waitFor, type Fixture } from './store-fixture';

const tol = (t: Partial<Toleration>): Toleration => ({ key: '', operator: 'Exists', value: '', effect: '', ...t });

test('matchingTolerations: all taints tolerated, first toleration per taint', (t) => {
  const taints = [
    { key: 'a', value: '', effect: 'NoExecute' },
    { key: 'b', value: '', effect: 'NoExecute' },
  ];
  const ta = tol({ key: 'a', tolerationSeconds: 10 });
  const tb = tol({ key: 'b' });
  const any = tol({ tolerationSeconds: 5 });
  t.deepEqual(matchingTolerations(taints, [ta, tb]), { all: true, used: [ta, tb] });
  t.deepEqual(matchingTolerations(taints, [ta]), { all: false, used: [] });
  t.deepEqual(matchingTolerations(taints, [any, ta]), { all: true, used: [any, any] });
  t.deepEqual(matchingTolerations([], []), { all: true, used: [] });
});

const mins: Array<[string, Toleration[], number]> = [
  ['none in use: evict at once', [], 0],
  ['no tolerationSeconds: forever', [tol({})], -1],
  ['the smallest wins', [tol({ tolerationSeconds: 300 }), tol({ tolerationSeconds: 60 }), tol({})], 60],
  ['zero means now', [tol({ tolerationSeconds: 0 }), tol({ tolerationSeconds: 60 })], 0],
  ['negative means now', [tol({ tolerationSeconds: -5 })], 0],
];
for (const [name, used, want] of mins) {
  test(`minTolerationSeconds: ${name}`, (t) => {
    t.is(minTolerationSeconds(used), want);
  });
}

interface Ctx {
  f: Fixture;
  timers: FakeTimers;
  recorder: RecordingRecorder;
}

async function setup(t: { teardown(fn: () => Promise<void>): void }): Promise<Ctx> {
  const f = await openFixture();
  const timers = new FakeTimers(f.clock);
  const recorder = new RecordingRecorder();
  const c = new TaintEvictionController(f.store, f.cache, f.registry, { now: f.clock.now, log: f.log, timers, recorder });
  const ac = new AbortController();
  const running = c.run(ac.signal);
  t.teardown(async () => {
    ac.abort();
    await running;
    await f.close();
  });
  await f.store.create(f.type('', 'v1', 'nodes'), '', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' }, spec: {} }, adminCtx);
  return { f, timers, recorder };
}

const pods = (f: Fixture) => f.type('', 'v1', 'pods');

async function boundPod(f: Fixture, name: string, tolerations: unknown[] = []): Promise<void> {
  await f.store.create(
    pods(f),
    'ns',
    { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { nodeName: 'n1', tolerations, containers: [{ name: 'c', image: 'busybox:1.36' }] } },
    adminCtx,
  );
}

async function taint(f: Fixture, taints: unknown[]): Promise<void> {
  await f.store.update(f.type('', 'v1', 'nodes'), '', 'n1', (cur) => ({ ...cur!, spec: { taints } }), adminCtx);
}

const evicted = (p: KObject | null) => !!p?.metadata.deletionTimestamp;
const disruption = (p: KObject | null) => ((p?.status as { conditions?: Array<Record<string, string>> } | undefined)?.conditions ?? []).find((c) => c.type === 'DisruptionTarget');

test('a NoExecute taint evicts pods without a matching toleration at once, and only them', async (t) => {
  const { f } = await setup(t);
  await boundPod(f, 'tolerates-forever', [{ key: 'maintenance', operator: 'Exists', effect: 'NoExecute' }]);
  await boundPod(f, 'tolerates-noschedule-only', [{ key: 'maintenance', operator: 'Exists', effect: 'NoSchedule' }]);
  await boundPod(f, 'plain');
  await taint(f, [{ key: 'maintenance', value: 'now', effect: 'NoExecute' }]);
  const p = await waitFor(f, pods(f), 'ns', 'plain', evicted);
  t.like(disruption(p), { status: 'True', reason: 'DeletionByTaintManager', message: 'Taint manager: deleting due to NoExecute taint' });
  t.true(evicted(await waitFor(f, pods(f), 'ns', 'tolerates-noschedule-only', evicted)));
  // Both evictions followed the same node event that left the tolerating pod alone.
  const kept = await f.store.get(pods(f), 'ns', 'tolerates-forever');
  t.false(evicted(kept));
  t.is(disruption(kept), undefined);
});

test('an evicted pod with terminationGracePeriodSeconds 0 is removed outright', async (t) => {
  const { f } = await setup(t);
  await f.store.create(
    pods(f),
    'ns',
    { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'quick' }, spec: { nodeName: 'n1', terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'busybox:1.36' }] } },
    adminCtx,
  );
  await taint(f, [{ key: 'soft', effect: 'NoSchedule' }]);
  await taint(f, [{ key: 'soft', effect: 'NoSchedule' }, { key: 'hard', effect: 'NoExecute' }]);
  t.is(await waitFor(f, pods(f), 'ns', 'quick', (p) => p === null), null);
});

test('tolerationSeconds delays the eviction by that long on the controller clock', async (t) => {
  const { f, timers } = await setup(t);
  await boundPod(f, 'p', [{ key: 'maintenance', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 }]);
  const armed = timers.nextTimer();
  await taint(f, [{ key: 'maintenance', effect: 'NoExecute' }]);
  await armed;
  t.deepEqual(timers.delays(), [60_000]);
  timers.advance(59_999);
  t.deepEqual(timers.delays(), [60_000], 'not yet due');
  t.false(evicted(await f.store.get(pods(f), 'ns', 'p')));
  timers.advance(1);
  const p = await waitFor(f, pods(f), 'ns', 'p', evicted);
  t.is(disruption(p)?.reason, 'DeletionByTaintManager');
});

test('removing the taint before tolerationSeconds cancels the eviction', async (t) => {
  const { f, timers } = await setup(t);
  await boundPod(f, 'p', [{ key: 'maintenance', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 }]);
  const armed = timers.nextTimer();
  await taint(f, [{ key: 'maintenance', effect: 'NoExecute' }]);
  await armed;
  t.deepEqual(timers.delays(), [30_000]);
  const cancelled = timers.nextCancel();
  await taint(f, []);
  await cancelled;
  t.deepEqual(timers.delays(), []);
  timers.advance(30_000);
  t.false(evicted(await f.store.get(pods(f), 'ns', 'p')));
});

test('tolerationSeconds 0 evicts at once; a shorter toleration added later brings the eviction forward', async (t) => {
  const { f, timers } = await setup(t);
  await boundPod(f, 'zero', [{ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 0 }]);
  await boundPod(f, 'long', [{ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 600 }]);
  const armed = timers.nextTimer();
  await taint(f, [{ key: 'k', effect: 'NoExecute' }]);
  t.true(evicted(await waitFor(f, pods(f), 'ns', 'zero', evicted)));
  await armed;
  t.deepEqual(timers.delays(), [600_000]);
  timers.advance(100_000);
  // Added tolerations are allowed on a pod; a broader one with 120 s now bounds the wait: 120 s from when the taint was first seen.
  const rearmed = timers.nextTimer();
  await f.store.update(pods(f), 'ns', 'long', (cur) => {
    const spec = cur!.spec as { tolerations: unknown[] };
    return { ...cur!, spec: { ...spec, tolerations: [{ operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 120 }, ...spec.tolerations] } };
  }, adminCtx);
  await rearmed;
  t.deepEqual(timers.delays(), [20_000]);
  timers.advance(20_000);
  t.true(evicted(await waitFor(f, pods(f), 'ns', 'long', evicted)));
});

test('events: TaintManagerEviction "Marking for deletion Pod ns/name" on eviction, "Cancelling deletion of Pod ns/name" when a pending one is called off', async (t) => {
  const { f, timers, recorder } = await setup(t);
  await boundPod(f, 'waits', [{ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 }]);
  await boundPod(f, 'plain');
  const armed = timers.nextTimer();
  await taint(f, [{ key: 'k', effect: 'NoExecute' }]);
  await waitFor(f, pods(f), 'ns', 'plain', evicted);
  await armed;
  const cancelled = timers.nextCancel();
  await taint(f, []);
  await cancelled;
  t.deepEqual(recorder.lines(), ['TaintManagerEviction: Marking for deletion Pod ns/plain', 'TaintManagerEviction: Cancelling deletion of Pod ns/waits']);
  t.deepEqual(recorder.events[0].regarding, { apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'plain' });
  t.true(recorder.events.every((e) => e.type === 'Normal'));
});
