/**
 * The device manager inside the pod machinery (PodManager on the CRI simulator, fake time): the
 * plugin's answer reaches CreateContainer, a pod that cannot get devices fails with
 * UnexpectedAdmissionError, and a deleted pod's devices go back to the pool.
 */
import path from 'node:path';
import test from 'ava';
import { DeviceManager } from '../../../../agent/devices/device-manager';
import type { Container } from '../../../../agent/api/core-v1';
import { BUSYBOX, isRunningReady, startHarness } from '../pod/harness';
import { FakePlugin } from './fake-plugin';

const RES = 'example.com/foo';
const ctr = (name: string, n: number): Container => ({ name, image: BUSYBOX, resources: { limits: { [RES]: String(n) } } });

test('devices in container configs, admission failure in pod status, release on deletion', async (t) => {
  let dm: DeviceManager | undefined;
  const plugins: FakePlugin[] = [];
  const h = await startHarness({
    manager: (root) => {
      const dir = path.join(root, 'device-plugins');
      dm = new DeviceManager({
        dir,
        clock: { now: () => Date.now(), sleep: (ms, s) => new Promise((r) => (s?.aborted ? r(false) : setTimeout(() => r(true), Math.min(ms, 10)))) },
        log: { debug() {}, info() {}, warn() {}, error() {} },
        dial: (sock, res) => {
          const p = new FakePlugin(sock, res);
          plugins.push(p);
          return p;
        },
      });
      return { devices: dm };
    },
    prepare: async (root) => {
      const { mkdir } = await import('node:fs/promises');
      await mkdir(path.join(root, 'device-plugins'), { recursive: true });
    },
  });
  try {
    await dm!.start();
    await dm!.registerPlugin(RES, path.join(h.root, 'device-plugins', 'p.sock'));
    plugins[0].send([{ id: 'a' }, { id: 'b' }, { id: 'c' }]);

    const p1 = h.createPod('with-devices', { containers: [ctr('app', 2), { name: 'plain', image: BUSYBOX }] });
    t.true(await h.until(() => isRunningReady(h.status('with-devices'))));
    const cfg = h.sim.lastConfig('app')!;
    const ids = dm!.devicesFor(p1.metadata.uid!, 'app')[0].deviceIds;
    t.is(ids.length, 2);
    t.is(cfg.envs?.find((e) => e.key === 'FAKE_DEVICES')?.value, ids.join(','));
    t.deepEqual(cfg.devices?.map((d) => d.containerPath), ids.map((id) => `/dev/${id}`));
    t.is(h.sim.lastConfig('plain')?.devices, undefined);
    t.deepEqual(JSON.parse(cfg.labels?.['svc.io/device-ids'] ?? '{}'), { [RES]: ids });

    h.createPod('too-many', { containers: [ctr('app', 2)] });
    t.true(await h.until(() => h.status('too-many')?.phase === 'Failed'));
    t.is(h.status('too-many')?.reason, 'UnexpectedAdmissionError');
    t.is(h.status('too-many')?.message, `Allocate failed due to requested number of devices unavailable for ${RES}. Requested: 2, Available: 1, which is unexpected`);

    h.deletePod('with-devices', 0);
    t.true(await h.until(() => !dm!.hasPod(p1.metadata.uid!), 60_000));
    h.createPod('after', { containers: [ctr('app', 3)] });
    t.true(await h.until(() => isRunningReady(h.status('after'))));
  } finally {
    await dm?.stop();
    await h.stop();
  }
});
