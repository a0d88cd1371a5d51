/** The plugin side on its own: what it tells through onChange/persist, restored resources, waiting for plugins, stop. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { PluginEndpoints } from '../../../../agent/devices/plugin-endpoints';
import { FakeClock } from '../../../helpers/fake-clock';
import { MemLog } from '../node/fakes/mem-log';
import { FakePlugin } from './fake-plugin';

const RES = 'example.com/foo';

function setup(t: { teardown(fn: () => void): void }) {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-endpoints-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const clock = new FakeClock();
  const log = new MemLog();
  const plugins: FakePlugin[] = [];
  const counts = { changes: 0, persists: 0 };
  const eps = new PluginEndpoints({
    dir,
    clock,
    log,
    gracePeriodMs: 60_000,
    dialTimeoutMs: 1000,
    dial: (socket, resource) => {
      const p = new FakePlugin(socket, resource);
      plugins.push(p);
      return p;
    },
    onChange: () => counts.changes++,
    persist: () => counts.persists++,
  });
  return { dir, clock, log, plugins, counts, eps };
}

test('registration and device updates are told through onChange; device lists also ask for a checkpoint write', async (t) => {
  const s = setup(t);
  await s.eps.registerPlugin(RES, path.join(s.dir, 'foo.sock'));
  t.deepEqual(s.counts, { changes: 1, persists: 0 });
  s.plugins[0].send([{ id: 'd1', numa: 0 }, { id: 'd0', healthy: false }]);
  t.deepEqual(s.counts, { changes: 2, persists: 1 });
  t.true(s.eps.has(RES));
  t.is(s.eps.get(RES)!.client, s.plugins[0]);
  t.deepEqual(s.eps.registeredDevices(), { [RES]: ['d0', 'd1'] });
  t.deepEqual(s.eps.extendedResources(), { capacity: { [RES]: '2' }, allocatable: { [RES]: '1' } });
  t.is(s.eps.currentEndpoint(RES), path.join(s.dir, 'foo.sock'));
});

test('a restored resource starts unhealthy with its grace period running, and is dropped (with a checkpoint write) when it ends', async (t) => {
  const s = setup(t);
  s.eps.restore(RES, ['a', 'b']);
  t.is(s.counts.changes, 1);
  t.deepEqual(s.eps.extendedResources(), { capacity: { [RES]: '2' }, allocatable: { [RES]: '0' } });
  t.is(s.eps.get(RES)!.client, undefined);
  await s.clock.advance(60_000);
  t.false(s.eps.has(RES));
  t.deepEqual(s.counts, { changes: 2, persists: 1 });
  t.deepEqual(s.eps.registeredDevices(), {});
});

test('waitForPlugins resolves when the plugin registers, or after waitMs; stop wakes waiters and refuses registrations', async (t) => {
  const s = setup(t);
  let done = false;
  const waiting = s.eps.waitForPlugins([RES], 10_000).then(() => (done = true));
  await s.clock.advance(5_000);
  t.false(done);
  await s.eps.registerPlugin(RES, path.join(s.dir, 'foo.sock'));
  await waiting;
  t.true(done);
  t.is(s.log.find('waiting for device plugins to register').length, 1);

  const other = 'example.com/bar';
  done = false;
  const timedOut = s.eps.waitForPlugins([other], 10_000).then(() => (done = true));
  await s.clock.advance(9_999);
  t.false(done);
  await s.clock.advance(1);
  await timedOut;
  t.true(done);

  done = false;
  const stopped = s.eps.waitForPlugins([other], 10_000).then(() => (done = true));
  await s.clock.advance(0);
  s.eps.stop();
  await stopped;
  t.true(done);
  t.true(s.eps.closed);
  t.true(s.plugins[0].closed, 'connections closed at stop');
  await t.throwsAsync(s.eps.registerPlugin(other, path.join(s.dir, 'bar.sock')), { message: 'the device manager is shutting down' });
  t.is(s.clock.pending, 0, 'no grace timer or wait left behind');
});
