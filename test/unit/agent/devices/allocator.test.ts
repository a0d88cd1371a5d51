/** The allocation side on its own, over a scripted plugin side: what it asks the plugins, what it persists and announces. */
import test from 'ava';
import { Allocator, DeviceAdmissionError, type AllocatorPlugins } from '../../../../agent/devices/allocator';
import type { PluginView } from '../../../../agent/devices/plugin-endpoints';
import type { RuntimeService } from '../../../../agent/cri';
import type { Container, Pod } from '../../../../agent/api/core-v1';
import { MemLog } from '../node/fakes/mem-log';
import { FakePlugin } from './fake-plugin';

const RES = 'example.com/foo';

class ScriptedPlugins implements AllocatorPlugins {
  closed = false;
  readonly views = new Map<string, PluginView>();
  readonly waits: { resources: string[]; waitMs: number }[] = [];
  has(resource: string): boolean {
    return this.views.has(resource);
  }
  get(resource: string): PluginView | undefined {
    return this.views.get(resource);
  }
  waitForPlugins(resources: string[], waitMs: number): Promise<void> {
    this.waits.push({ resources, waitMs });
    return Promise.resolve();
  }
  add(resource: string, ids: { id: string; healthy?: boolean; numa?: number }[], connected = true): FakePlugin {
    const client = new FakePlugin(`/plugins/${resource}.sock`, resource);
    const devices = new Map(ids.map((d) => [d.id, { id: d.id, healthy: d.healthy !== false, numaNodes: d.numa === undefined ? [] : [d.numa] }]));
    this.views.set(resource, { resource, client: connected ? client : undefined, options: client.options, devices });
    return client;
  }
}

function ctr(name: string, n: number): Container {
  return { name, image: 'busybox', resources: { limits: { [RES]: String(n) } } };
}

function pod(uid: string, containers: Container[]): Pod {
  return { metadata: { name: uid, namespace: 'default', uid }, spec: { containers } };
}

function setup() {
  const plugins = new ScriptedPlugins();
  const counts = { persists: 0, changes: 0 };
  const alloc = new Allocator({
    log: new MemLog(),
    endpoints: plugins,
    admissionWaitMs: 5000,
    callTimeoutMs: 1000,
    preStartTimeoutMs: 1000,
    persist: () => {
      counts.persists++;
      return Promise.resolve();
    },
    onChange: () => counts.changes++,
  });
  return { plugins, counts, alloc };
}

test('admission waits (admissionWaitMs) only for resources not yet held, allocates healthy free devices, persists once', async (t) => {
  const s = setup();
  const p = s.plugins.add(RES, [{ id: 'a', healthy: false }, { id: 'b' }, { id: 'c' }]);
  await s.alloc.admitPod(pod('p1', [ctr('app', 2)]));
  t.deepEqual(s.plugins.waits, [{ resources: [RES], waitMs: 5000 }]);
  t.deepEqual(p.allocateCalls, [['b', 'c']]);
  t.deepEqual(s.counts, { persists: 1, changes: 0 });
  t.true(s.alloc.hasPod('p1'));
  t.deepEqual(s.alloc.devicesFor('p1', 'app'), [{ resourceName: RES, deviceIds: ['b', 'c'], numaNodes: [] }]);
  t.deepEqual(s.alloc.toCheckpoint().map((e) => e.DeviceIDs), [{ '-1': ['b', 'c'] }]);
  await s.alloc.admitPod(pod('p1', [ctr('app', 2)]));
  t.deepEqual(s.plugins.waits[1], { resources: [], waitMs: 5000 }, 'held devices need no plugin');
  t.is(p.allocateCalls.length, 1);
  t.is(s.counts.persists, 1);
});

test('a failed admission frees what the pod got, persists and announces it; shutting down is no verdict', async (t) => {
  const s = setup();
  s.plugins.add(RES, [{ id: 'a' }]);
  const err = await t.throwsAsync(s.alloc.admitPod(pod('p1', [ctr('one', 1), ctr('two', 1)])), { instanceOf: DeviceAdmissionError });
  t.regex(err.message, /Requested: 1, Available: 0/);
  t.false(s.alloc.hasPod('p1'));
  t.deepEqual(s.counts, { persists: 1, changes: 1 });
  s.plugins.closed = true;
  await t.throwsAsync(s.alloc.admitPod(pod('p2', [ctr('one', 1)])), { message: 'the device manager is shutting down' });
});

test('a disconnected plugin fails admission naming the resource; isDeviceResource counts plugins and held devices', async (t) => {
  const s = setup();
  s.plugins.add(RES, [{ id: 'a' }], false);
  t.true(s.alloc.isDeviceResource(RES));
  t.false(s.alloc.isDeviceResource('example.com/other'));
  const err = await t.throwsAsync(s.alloc.admitPod(pod('p1', [ctr('app', 1)])), { instanceOf: DeviceAdmissionError });
  t.regex(err.message, /the device plugin for example\.com\/foo is not registered \(waited 5s for it\)/);
});

test('after markLost, recoverFromRuntime rebuilds from container labels (once) and release/retain free devices', async (t) => {
  const s = setup();
  s.plugins.add(RES, [{ id: 'a', numa: 1 }]);
  const runtime = {
    listContainers: () =>
      Promise.resolve([
        { id: 'c1', labels: { 'svc.io/device-ids': JSON.stringify({ [RES]: ['a'] }), 'io.kubernetes.pod.uid': 'p1', 'io.kubernetes.container.name': 'app' } },
        { id: 'c2', labels: { 'svc.io/device-ids': 'not json', 'io.kubernetes.pod.uid': 'p2', 'io.kubernetes.container.name': 'app' } },
      ]),
  } as unknown as RuntimeService;
  t.is(await s.alloc.recoverFromRuntime(runtime), 0, 'nothing to do while the checkpoint was fine');
  s.alloc.markLost();
  t.true(s.alloc.checkpointLost);
  t.is(await s.alloc.recoverFromRuntime(runtime), 1);
  t.false(s.alloc.checkpointLost);
  t.deepEqual(s.alloc.devicesFor('p1', 'app'), [{ resourceName: RES, deviceIds: ['a'], numaNodes: [1] }]);
  t.deepEqual(s.counts, { persists: 1, changes: 1 });
  await s.alloc.retainPods(new Set(['p1']));
  t.deepEqual(s.counts, { persists: 1, changes: 1 }, 'nothing freed, nothing written');
  await s.alloc.retainPods(new Set());
  t.false(s.alloc.hasPod('p1'));
  t.deepEqual(s.counts, { persists: 2, changes: 2 });
  await s.alloc.releasePod('p1');
  t.deepEqual(s.counts, { persists: 2, changes: 2 }, 'releasing a pod without devices changes nothing');
});
