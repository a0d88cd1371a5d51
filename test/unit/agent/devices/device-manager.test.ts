import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, statSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { CHECKPOINT_FILE, readCheckpoint } from '../../../../agent/devices/checkpoint';
import { DeviceAdmissionError, DeviceManager, RegistrationError } from '../../../../agent/devices/device-manager';
import type { Container, Pod } from '../../../../agent/api/core-v1';
import { FakeClock, flush } from '../../../helpers/fake-clock';
import { MemLog } from '../node/fakes/mem-log';
import { FakePlugin } from './fake-plugin';

const RES = 'example.com/foo';

interface Env {
  dir: string;
  clock: FakeClock;
  log: MemLog;
  plugins: FakePlugin[];
  dm: DeviceManager;
  /** Makes the next dialled plugin unreachable. */
  unreachable: { next: boolean };
  /** Options every newly dialled plugin answers. */
  options: { preStartRequired: boolean; getPreferredAllocationAvailable: boolean };
  make(): DeviceManager;
}

function env(t: { teardown(fn: () => void | Promise<void>): void }, opts: { gracePeriodMs?: number; admissionWaitMs?: number } = {}): Env {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-devices-'));
  const clock = new FakeClock();
  const log = new MemLog();
  const plugins: FakePlugin[] = [];
  const unreachable = { next: false };
  const options = { preStartRequired: false, getPreferredAllocationAvailable: false };
  const managers: DeviceManager[] = [];
  const make = () => {
    const dm = new DeviceManager({
      dir,
      clock,
      log,
      gracePeriodMs: opts.gracePeriodMs ?? 60_000,
      admissionWaitMs: opts.admissionWaitMs ?? 10_000,
      callTimeoutMs: 1000,
      dial: (socket, resource) => {
        const p = new FakePlugin(socket, resource);
        if (unreachable.next) p.reachable = false;
        p.options = { ...options };
        unreachable.next = false;
        plugins.push(p);
        return p;
      },
    });
    managers.push(dm);
    return dm;
  };
  const e: Env = { dir, clock, log, plugins, dm: make(), unreachable, options, make };
  t.teardown(async () => {
    for (const m of managers) await m.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return e;
}

function ctr(name: string, n: number, extra: Partial<Container> = {}, res = RES): Container {
  return { name, image: 'busybox', resources: { limits: { [res]: String(n) }, requests: { [res]: String(n) } }, ...extra };
}

function pod(uid: string, containers: Container[], initContainers: Container[] = []): Pod {
  return { metadata: { name: uid, namespace: 'default', uid }, spec: { containers, ...(initContainers.length ? { initContainers } : {}) } };
}

async function registered(e: Env, n: number, res = RES): Promise<FakePlugin> {
  await e.dm.registerPlugin(res, path.join(e.dir, `${res.replace(/\W/g, '_')}.sock`));
  const p = e.plugins[e.plugins.length - 1];
  p.send(Array.from({ length: n }, (_, i) => ({ id: `d${i}` })));
  return p;
}

test('registration: invalid resource names and unreachable endpoints are refused with the reason', async (t) => {
  const e = env(t);
  for (const bad of ['foo', 'kubernetes.io/foo', 'svc.io/gpu', 'Example.com/foo', 'example.com/', 'requests.example.com/foo']) {
    const err = await t.throwsAsync(e.dm.registerPlugin(bad, path.join(e.dir, 'p.sock')), { instanceOf: RegistrationError });
    t.is(err.kind, 'invalid', bad);
  }
  e.unreachable.next = true;
  const err = await t.throwsAsync(e.dm.registerPlugin(RES, path.join(e.dir, 'p.sock')), { instanceOf: RegistrationError });
  t.is(err.kind, 'unavailable');
  t.regex(err.message, /cannot reach device plugin endpoint/);
  t.true(e.plugins[0].closed);
  t.deepEqual(e.dm.extendedResources(), { capacity: {}, allocatable: {} });
});

test('capacity counts every device, allocatable the healthy ones; the read API lists them with topology', async (t) => {
  const e = env(t);
  const p = await registered(e, 0);
  p.send([{ id: 'b', numa: 1 }, { id: 'a', healthy: false, numa: 0 }, { id: 'c' }]);
  t.deepEqual(e.dm.extendedResources(), { capacity: { [RES]: '3' }, allocatable: { [RES]: '2' } });
  t.deepEqual(e.dm.allocatable().get(RES), [
    { id: 'a', healthy: false, numaNodes: [0] },
    { id: 'b', healthy: true, numaNodes: [1] },
    { id: 'c', healthy: true, numaNodes: [] },
  ]);
});

test('a plugin that goes away: devices unhealthy at once, resource dropped after the grace period', async (t) => {
  const e = env(t, { gracePeriodMs: 60_000 });
  let changes = 0;
  e.dm.onChange(() => changes++);
  const p = await registered(e, 2);
  p.die();
  t.deepEqual(e.dm.extendedResources(), { capacity: { [RES]: '2' }, allocatable: { [RES]: '0' } });
  t.true(changes >= 3);
  await e.clock.advance(59_000);
  t.deepEqual(e.dm.extendedResources().capacity, { [RES]: '2' });
  await e.clock.advance(2_000);
  t.deepEqual(e.dm.extendedResources(), { capacity: {}, allocatable: {} });
  t.false(e.dm.isDeviceResource(RES));
});

test('a dropped resource whose devices are still held: new pods asking for it fail rather than run without devices', async (t) => {
  const e = env(t, { gracePeriodMs: 60_000, admissionWaitMs: 1000 });
  const p = await registered(e, 2);
  await e.dm.admitPod(pod('p1', [ctr('app', 1)]));
  p.die();
  await e.clock.advance(61_000);
  t.deepEqual(e.dm.extendedResources(), { capacity: {}, allocatable: {} });
  t.true(e.dm.isDeviceResource(RES));
  let failed: Error | undefined;
  const admitting = e.dm.admitPod(pod('p2', [ctr('app', 1)])).catch((err: Error) => (failed = err));
  await e.clock.advance(2_000);
  await admitting;
  t.true(failed instanceof DeviceAdmissionError);
  t.regex(failed!.message, /the device plugin for example\.com\/foo is not registered/);
});

test('a plugin coming back within the grace period keeps its resource; a re-registration replaces the old endpoint', async (t) => {
  const e = env(t, { gracePeriodMs: 60_000 });
  const p1 = await registered(e, 2);
  const p2 = await registered(e, 3);
  t.true(p1.closed, 'old connection closed');
  // The old stream ending late must not mark the new plugin's devices unhealthy.
  p1.die();
  t.deepEqual(e.dm.extendedResources(), { capacity: { [RES]: '3' }, allocatable: { [RES]: '3' } });
  p2.die();
  await e.clock.advance(30_000);
  await registered(e, 3);
  await e.clock.advance(60_000);
  t.deepEqual(e.dm.extendedResources(), { capacity: { [RES]: '3' }, allocatable: { [RES]: '3' } });
});

test('allocation: two pods never get the same device; fewer free devices than asked is a clear error', async (t) => {
  const e = env(t);
  const p = await registered(e, 4);
  await e.dm.admitPod(pod('p1', [ctr('app', 2)]));
  await e.dm.admitPod(pod('p2', [ctr('app', 2)]));
  const a = e.dm.devicesFor('p1', 'app')[0].deviceIds;
  const b = e.dm.devicesFor('p2', 'app')[0].deviceIds;
  t.is(a.length, 2);
  t.is(b.length, 2);
  t.deepEqual(a.filter((id) => b.includes(id)), []);
  t.deepEqual(p.allocateCalls.map((c) => c.length), [2, 2]);
  const err = await t.throwsAsync(e.dm.admitPod(pod('p3', [ctr('app', 1)])), { instanceOf: DeviceAdmissionError });
  t.is(err.reason, 'UnexpectedAdmissionError');
  t.is(err.message, `Allocate failed due to requested number of devices unavailable for ${RES}. Requested: 1, Available: 0, which is unexpected`);
  t.false(e.dm.hasPod('p3'));
  // Freed when the pod ends.
  await e.dm.releasePod('p1');
  await e.dm.admitPod(pod('p3', [ctr('app', 2)]));
  t.deepEqual(e.dm.devicesFor('p3', 'app')[0].deviceIds, a);
});

test('unhealthy devices are not handed out', async (t) => {
  const e = env(t);
  const p = await registered(e, 0);
  p.send([{ id: 'a', healthy: false }, { id: 'b' }]);
  await t.throwsAsync(e.dm.admitPod(pod('p1', [ctr('app', 2)])), { message: /Requested: 2, Available: 1/ });
  await e.dm.admitPod(pod('p1', [ctr('app', 1)]));
  t.deepEqual(e.dm.devicesFor('p1', 'app'), [{ resourceName: RES, deviceIds: ['b'], numaNodes: [] }]);
});

test('init containers hand their devices on to app containers; sidecars do not', async (t) => {
  const e = env(t);
  await registered(e, 3);
  await e.dm.admitPod(pod('p1', [ctr('app1', 2), ctr('app2', 1)], [ctr('init', 2)]));
  const init = e.dm.devicesFor('p1', 'init')[0].deviceIds;
  const app1 = e.dm.devicesFor('p1', 'app1')[0].deviceIds;
  const app2 = e.dm.devicesFor('p1', 'app2')[0].deviceIds;
  t.deepEqual(app1, init, 'app1 reuses the init container devices');
  t.false(app1.includes(app2[0]), 'app2 gets a device app1 does not hold');
  // A sidecar (restartPolicy Always) keeps its devices: the app container needs fresh ones.
  const e2 = env(t);
  await registered(e2, 3);
  await t.throwsAsync(e2.dm.admitPod(pod('p2', [ctr('app', 2)], [ctr('side', 2, { restartPolicy: 'Always' })])), { message: /Requested: 2, Available: 1/ });
});

test('topology: without a preference, devices come from one NUMA node when they can', async (t) => {
  const e = env(t);
  const p = await registered(e, 0);
  p.send([{ id: 'a', numa: 0 }, { id: 'b', numa: 1 }, { id: 'c', numa: 1 }, { id: 'd', numa: 0 }, { id: 'e', numa: 1 }]);
  await e.dm.admitPod(pod('p1', [ctr('app', 2)]));
  t.deepEqual(e.dm.devicesFor('p1', 'app'), [{ resourceName: RES, deviceIds: ['b', 'c'], numaNodes: [1] }]);
});

test('GetPreferredAllocation is asked when offered; an unusable answer falls back to our own pick', async (t) => {
  const e = env(t);
  const p = await registered(e, 2);
  await e.dm.admitPod(pod('p0', [ctr('app', 1)]));
  t.is(p.preferredCalls.length, 0, 'not asked when not offered');
  await e.dm.releasePod('p0');
  e.options.getPreferredAllocationAvailable = true;
  await e.dm.registerPlugin(RES, path.join(e.dir, 'p.sock'));
  const p2 = e.plugins[1];
  p2.send([{ id: 'd0' }, { id: 'd1' }, { id: 'd2' }, { id: 'd3' }]);
  await e.dm.admitPod(pod('p1', [ctr('app', 2)]));
  t.deepEqual(p2.preferredCalls, [{ available: ['d0', 'd1', 'd2', 'd3'], mustInclude: [], size: 2 }]);
  t.deepEqual(e.dm.devicesFor('p1', 'app')[0].deviceIds, ['d2', 'd3']);
  p2.preferAnswer = () => ['d0', 'nope'];
  await e.dm.admitPod(pod('p2', [ctr('app', 1)]));
  t.deepEqual(e.dm.devicesFor('p2', 'app')[0].deviceIds, ['d0']);
  t.is(e.log.find('preferred an unusable allocation').length, 1);
});

test('a plugin that hangs in Allocate: the pod fails with a reason naming the plugin, and holds nothing', async (t) => {
  const e = env(t);
  const p = await registered(e, 2);
  p.hang = true;
  const err = await t.throwsAsync(e.dm.admitPod(pod('p1', [ctr('app', 1)])), { instanceOf: DeviceAdmissionError });
  t.regex(err.message, new RegExp(`^Allocate failed due to device plugin ${RES.replace('.', '\\.')} \\(.*\\): Allocate did not answer within 1000 ms, which is unexpected$`));
  t.false(e.dm.hasPod('p1'));
  t.deepEqual(e.dm.containersWithDevices(), []);
});

test('runOptions merges the stored answer and calls PreStartContainer when the plugin requires it', async (t) => {
  const e = env(t);
  e.options.preStartRequired = true;
  await e.dm.registerPlugin(RES, path.join(e.dir, 'p.sock'));
  const p = e.plugins[0];
  p.send([{ id: 'x' }, { id: 'y' }]);
  await e.dm.admitPod(pod('p1', [ctr('app', 2), { name: 'plain', image: 'busybox' }]));
  const o = await e.dm.runOptions('p1', 'app');
  t.deepEqual(o?.allocation.envs, { FAKE_DEVICES: 'x,y' });
  t.deepEqual(o?.deviceIds, { [RES]: ['x', 'y'] });
  t.deepEqual(o?.allocation.devices.map((d) => d.containerPath), ['/dev/x', '/dev/y']);
  t.deepEqual(p.preStartCalls, [['x', 'y']]);
  t.is(await e.dm.runOptions('p1', 'plain'), undefined);
  t.is(p.allocateCalls.length, 1, 'admitting again does not allocate again');
  await e.dm.admitPod(pod('p1', [ctr('app', 2), { name: 'plain', image: 'busybox' }]));
  t.is(p.allocateCalls.length, 1);
});

test('extended resources no plugin advertises are ignored', async (t) => {
  const e = env(t);
  await registered(e, 1);
  await e.dm.admitPod(pod('p1', [ctr('app', 3, {}, 'example.com/other')]));
  t.false(e.dm.hasPod('p1'));
});

test('checkpoint: written atomically (0600) after each change; a new manager keeps running containers devices without calling Allocate', async (t) => {
  const e = env(t);
  await registered(e, 4);
  await e.dm.admitPod(pod('p1', [ctr('app', 2)]));
  const file = path.join(e.dir, CHECKPOINT_FILE);
  t.is(statSync(file).mode & 0o777, 0o600);
  const data = await readCheckpoint(e.dir);
  t.is(data!.PodDeviceEntries.length, 1);
  t.deepEqual(data!.RegisteredDevices, { [RES]: ['d0', 'd1', 'd2', 'd3'] });
  const held = e.dm.devicesFor('p1', 'app');
  await e.dm.stop();

  const dm2 = e.make();
  await dm2.start();
  t.deepEqual(dm2.devicesFor('p1', 'app'), held);
  // Known from the checkpoint, not connected: listed with every device unhealthy.
  t.deepEqual(dm2.extendedResources(), { capacity: { [RES]: '4' }, allocatable: { [RES]: '0' } });
  // The running pod is recognised: no wait, no Allocate.
  await dm2.admitPod(pod('p1', [ctr('app', 2)]));
  t.deepEqual(dm2.devicesFor('p1', 'app'), held);
  t.is((await dm2.runOptions('p1', 'app'))?.allocation.envs['FAKE_DEVICES'], held[0].deviceIds.join(','));
  // After the plugin registers again, a new pod gets the two other devices.
  await dm2.registerPlugin(RES, path.join(e.dir, 'p.sock'));
  const p = e.plugins[e.plugins.length - 1];
  p.send([{ id: 'd0' }, { id: 'd1' }, { id: 'd2' }, { id: 'd3' }]);
  await dm2.admitPod(pod('p2', [ctr('app', 2)]));
  const other = dm2.devicesFor('p2', 'app')[0].deviceIds;
  t.deepEqual(other.filter((id) => held[0].deviceIds.includes(id)), []);
  t.deepEqual(p.allocateCalls, [other]);
});

test('admission waits a bounded time for a known plugin to register again', async (t) => {
  const e = env(t, { admissionWaitMs: 10_000 });
  await registered(e, 2);
  await e.dm.persist();
  await e.dm.stop();
  const dm2 = e.make();
  await dm2.start();
  let done: unknown;
  const admitted = dm2.admitPod(pod('p1', [ctr('app', 1)])).then(
    () => (done = 'ok'),
    (err: Error) => (done = err),
  );
  await e.clock.advance(5_000);
  t.is(done, undefined, 'still waiting');
  await dm2.registerPlugin(RES, path.join(e.dir, 'p.sock'));
  e.plugins[e.plugins.length - 1].send([{ id: 'd0' }, { id: 'd1' }]);
  await admitted;
  t.is(done, 'ok');
  t.is(dm2.devicesFor('p1', 'app')[0].deviceIds.length, 1);

  // Never registering: fails after the wait with a reason naming the resource.
  const e2 = env(t, { admissionWaitMs: 10_000 });
  await registered(e2, 2);
  e2.plugins[0].die();
  let failed: Error | undefined;
  const p = e2.dm.admitPod(pod('p1', [ctr('app', 1)])).catch((err: Error) => (failed = err));
  await e2.clock.advance(9_000);
  t.is(failed, undefined);
  await e2.clock.advance(2_000);
  await p;
  t.true(failed instanceof DeviceAdmissionError);
  t.is(failed!.message, `Allocate failed due to the device plugin for ${RES} is not registered (waited 10s for it), which is unexpected`);
});

test('a corrupt or truncated checkpoint: the manager starts anyway, logs it and rewrites a valid one', async (t) => {
  for (const junk of ['{"Data":{"PodDeviceEntr', 'not json at all', JSON.stringify({ Data: { PodDeviceEntries: [], RegisteredDevices: {} }, Checksum: 'sha256:00' })]) {
    const e = env(t);
    writeFileSync(path.join(e.dir, CHECKPOINT_FILE), junk);
    await e.dm.start();
    t.is(e.log.find('device checkpoint is corrupt').length, 1, junk);
    t.deepEqual(e.dm.containersWithDevices(), []);
    t.deepEqual(await readCheckpoint(e.dir), { PodDeviceEntries: [], RegisteredDevices: {} });
  }
});

test('start removes stale sockets but keeps the checkpoint and other files', async (t) => {
  const e = env(t);
  await registered(e, 1);
  await e.dm.persist();
  const sock = path.join(e.dir, 'old-plugin.sock');
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(sock, r));
  writeFileSync(path.join(e.dir, 'notes.txt'), 'keep me');
  const dm2 = e.make();
  await dm2.start();
  server.close();
  t.false(existsSync(sock));
  t.true(existsSync(path.join(e.dir, CHECKPOINT_FILE)));
  t.is(readFileSync(path.join(e.dir, 'notes.txt'), 'utf8'), 'keep me');
});

test('retainPods frees the devices of pods that are gone; containersWithDevices lists holders', async (t) => {
  const e = env(t);
  await registered(e, 4);
  await e.dm.admitPod(pod('p1', [ctr('a', 1), ctr('b', 1)]));
  await e.dm.admitPod(pod('p2', [ctr('a', 1)]));
  t.deepEqual(
    e.dm.containersWithDevices().map((c) => `${c.podUid}/${c.containerName}`),
    ['p1/a', 'p1/b', 'p2/a'],
  );
  await e.dm.retainPods(new Set(['p2']));
  await flush();
  t.deepEqual(e.dm.containersWithDevices().map((c) => c.podUid), ['p2']);
  t.is((await readCheckpoint(e.dir))!.PodDeviceEntries.length, 1);
});

test('a lost checkpoint is rebuilt from the runtime container labels; Allocate is asked again at the next start', async (t) => {
  const e = env(t);
  writeFileSync(path.join(e.dir, CHECKPOINT_FILE), '{"Data":');
  await e.dm.start();
  t.true(e.dm.checkpointLost);
  const label = (uid: string, name: string, ids: Record<string, string[]> | string) => ({
    id: `${uid}-${name}`,
    labels: { 'io.kubernetes.pod.uid': uid, 'io.kubernetes.container.name': name, 'svc.io/device-ids': typeof ids === 'string' ? ids : JSON.stringify(ids) },
  });
  const runtime = {
    listContainers: () => Promise.resolve([label('p1', 'app', { [RES]: ['d1', 'd2'] }), label('p2', 'app', 'not json'), { id: 'x', labels: {} }]),
  } as unknown as import('../../../../agent/cri/runtime-service').RuntimeService;
  t.is(await e.dm.recoverFromRuntime(runtime), 1);
  t.false(e.dm.checkpointLost);
  t.deepEqual(e.dm.devicesFor('p1', 'app'), [{ resourceName: RES, deviceIds: ['d1', 'd2'], numaNodes: [] }]);
  t.is((await readCheckpoint(e.dir))!.PodDeviceEntries[0].AllocResp, null);
  // Until the plugin is back, the answer cannot be recreated.
  await t.throwsAsync(e.dm.runOptions('p1', 'app'), { message: /not registered; cannot ask it again/ });
  const p = await registered(e, 4);
  // Those devices are held: a new pod gets the others.
  await e.dm.admitPod(pod('p3', [ctr('app', 2)]));
  t.deepEqual(e.dm.devicesFor('p3', 'app')[0].deviceIds, ['d0', 'd3']);
  const o = await e.dm.runOptions('p1', 'app');
  t.deepEqual(o?.allocation.envs, { FAKE_DEVICES: 'd1,d2' });
  t.deepEqual(p.allocateCalls, [['d0', 'd3'], ['d1', 'd2']]);
  t.deepEqual((await readCheckpoint(e.dir))!.PodDeviceEntries.find((x) => x.PodUID === 'p1')!.AllocResp?.envs, { FAKE_DEVICES: 'd1,d2' });
  // With a good checkpoint there is nothing to rebuild.
  t.is(await e.dm.recoverFromRuntime(runtime), 0);
});

test('plugin registry entry points: validatePlugin says why, deregisterPlugin starts the grace period', async (t) => {
  const e = env(t, { gracePeriodMs: 60_000 });
  t.is(e.dm.validatePlugin(RES, ['v1beta1']), undefined);
  t.regex(e.dm.validatePlugin(RES, ['v1alpha1'])!, /none of which this agent speaks \(v1beta1\)/);
  t.regex(e.dm.validatePlugin('gpu', ['v1beta1'])!, /domain-prefixed/);
  const p = await registered(e, 2);
  e.dm.deregisterPlugin(RES);
  t.true(p.closed);
  t.deepEqual(e.dm.extendedResources(), { capacity: { [RES]: '2' }, allocatable: { [RES]: '0' } });
  e.dm.deregisterPlugin('example.com/unknown');
  await e.clock.advance(61_000);
  t.deepEqual(e.dm.extendedResources(), { capacity: {}, allocatable: {} });
});
