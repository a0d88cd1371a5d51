import test from 'ava';
import { RuntimeHealth, type RuntimeHealthSnapshot } from '../../../../agent/cri/runtime-health';
import { Simulator } from '../../../../agent/cri/simulator';
import { FakeClock, flush } from '../../../helpers/fake-clock';

function setup() {
  const clock = new FakeClock();
  const sim = new Simulator({ clock, runtimeName: 'containerd', runtimeVersion: '1.6.20' });
  const health = new RuntimeHealth(sim, { clock, intervalMs: 5000, downAfterMs: 30_000 });
  return { clock, sim, health };
}

test('before the first probe the node is not ready and the version is unknown, as the kubelet reports', async (t) => {
  const { health } = setup();
  t.is(await health.check(), 'container runtime status check may not have completed yet');
  t.is(await health.runtimeVersion(), 'unknown://');
});

test('a healthy runtime: ready, version for nodeInfo', async (t) => {
  const { health } = setup();
  const snap = await health.probe();
  t.deepEqual(snap.problems, []);
  t.true(snap.runtimeReady && snap.networkReady);
  t.is(await health.check(), undefined);
  t.is(await health.runtimeVersion(), 'containerd://1.6.20');
  t.is(health.name, 'container runtime');
});

test('NetworkReady=false and RuntimeReady=false give upstream messages', async (t) => {
  const { health, sim } = setup();
  sim.setCondition('NetworkReady', false, 'NetworkPluginNotReady', 'Network plugin returns error: cni plugin not initialized');
  await health.probe();
  t.is(
    await health.check(),
    'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized',
  );
  sim.setCondition('RuntimeReady', false, 'ContainerdNotReady', 'boom');
  await health.probe();
  t.deepEqual(health.snapshot().problems, [
    'container runtime not ready: RuntimeReady=false reason:ContainerdNotReady message:boom',
    'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized',
  ]);
});

test('a runtime that stops answering is "down" only after downAfterMs; recovery clears it and re-reads the version', async (t) => {
  const { health, sim, clock } = setup();
  await health.probe();
  sim.setAvailable(false);
  await clock.advance(20_000);
  const during = await health.probe();
  t.deepEqual(during.problems, []);
  t.regex(during.lastError ?? '', /connection refused/);
  await clock.advance(10_000);
  t.deepEqual((await health.probe()).problems, ['container runtime is down']);
  sim.setAvailable(true);
  const after = await health.probe();
  t.deepEqual(after.problems, []);
  t.is(after.lastError, undefined);
  t.is(after.version?.runtimeVersion, '1.6.20');
});

test('run() probes every interval until aborted and notifies on changes only', async (t) => {
  const { health, sim, clock } = setup();
  const seen: RuntimeHealthSnapshot[] = [];
  const off = health.onChange((s) => seen.push(s));
  const ac = new AbortController();
  const running = health.run(ac.signal);
  await flush();
  t.is(seen.length, 1);
  t.deepEqual(seen[0]?.problems, []);
  await clock.advance(5000);
  t.is(seen.length, 1, 'no change, no notification');
  sim.setCondition('NetworkReady', false, 'NetworkPluginNotReady', 'cni config uninitialized');
  await clock.advance(5000);
  t.is(seen.length, 2);
  t.false(seen[1]?.networkReady);
  ac.abort();
  await running;
  off();
});
