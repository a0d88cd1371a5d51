import test from 'ava';
import { resolve } from 'node:path';
import {
  PressureTracker,
  evaluatePressure,
  observePressure,
  parseLoadavgTasks,
  pressureConditions,
} from '../../../../agent/platform/pressure';
import type { FsStats } from '../../../../agent/platform/host-fs';

const fixtures = resolve(__dirname, '../../../../../test/fixtures/agent');
const defaults = { 'memory.available': '100Mi', 'nodefs.available': '10%', 'nodefs.inodesFree': '5%', 'imagefs.available': '15%' };
const roomy: FsStats = { bsize: 4096, blocks: 1_000_000, bavail: 500_000, files: 100_000, ffree: 90_000 };

test('observes memory, filesystem and pid signals from /proc and statfs', async (t) => {
  const obs = await observePressure({ hostRoot: `${fixtures}/host-a`, rootDir: '/var/lib/svc-node', statfs: () => Promise.resolve(roomy) });
  t.deepEqual(obs, {
    memory: { availableBytes: 8000000 * 1024, capacityBytes: 16318252 * 1024 },
    nodefs: { availableBytes: 500_000 * 4096, capacityBytes: 1_000_000 * 4096, inodesFree: 90_000, inodes: 100_000 },
    imagefs: undefined,
    // max is min(pid_max, threads-max) and running comes from /proc/loadavg, as the kubelet computes it.
    pid: { available: 126965 - 1021, max: 126965, running: 1021 },
  });
  const e = evaluatePressure(obs, { evictionHard: defaults });
  t.deepEqual(e, { memory: false, disk: false, pid: false, crossed: [] });
});

test('a pressured host crosses memory and pid thresholds (MemAvailable estimated on old kernels)', async (t) => {
  const obs = await observePressure({ hostRoot: `${fixtures}/host-b`, rootDir: '/r', statfs: () => Promise.resolve(roomy) });
  t.is(obs.memory.availableBytes, (40000 + 5000 + 20000) * 1024);
  t.deepEqual(obs.pid, { available: 500, max: 31000, running: 30500 });
  const e = evaluatePressure(obs, { evictionHard: { ...defaults, 'pid.available': '5%' } });
  t.true(e.memory);
  t.true(e.pid);
  t.false(e.disk);
  t.deepEqual(
    e.crossed.map((c) => [c.signal, c.threshold, c.hard]),
    [
      ['memory.available', '100Mi', true],
      ['pid.available', '5%', true],
    ],
  );
  t.is(e.crossed[1].limit, 0.05 * 31000);
});

test('disk pressure from nodefs space or inodes; imagefs only when its path is given', async (t) => {
  const full: FsStats = { bsize: 4096, blocks: 1_000_000, bavail: 90_000, files: 100_000, ffree: 90_000 };
  const seen: string[] = [];
  const statfs = (p: string) => (seen.push(p), Promise.resolve(p === '/var/lib/containerd' ? { ...roomy, bavail: 140_000 } : full));
  const obs = await observePressure({ hostRoot: `${fixtures}/host-a`, rootDir: '/var/lib/svc-node', imageFsPath: '/var/lib/containerd', statfs });
  t.deepEqual(seen, ['/var/lib/svc-node', '/var/lib/containerd']);
  const e = evaluatePressure(obs, { evictionHard: defaults });
  t.true(e.disk);
  t.deepEqual(e.crossed.map((c) => c.signal), ['nodefs.available', 'imagefs.available']);

  const inodes = await observePressure({ hostRoot: `${fixtures}/host-a`, rootDir: '/r', statfs: () => Promise.resolve({ ...roomy, ffree: 4_000 }) });
  t.deepEqual(evaluatePressure(inodes, { evictionHard: defaults }).crossed.map((c) => c.signal), ['nodefs.inodesFree']);
});

test('soft thresholds set conditions too', async (t) => {
  const obs = await observePressure({ hostRoot: `${fixtures}/host-a`, rootDir: '/r', statfs: () => Promise.resolve(roomy) });
  const e = evaluatePressure(obs, { evictionHard: {}, evictionSoft: { 'memory.available': '10Gi' } });
  t.true(e.memory);
  t.false(e.crossed[0].hard);
});

test('a pressure stays reported for the transition period after it clears', (t) => {
  let now = 0;
  const tr = new PressureTracker({ now: () => now, transitionPeriodMs: 300_000 });
  t.deepEqual(tr.update({ memory: false, disk: false, pid: false }), { memory: false, disk: false, pid: false });
  now = 1000;
  t.deepEqual(tr.update({ memory: true, disk: false, pid: false }), { memory: true, disk: false, pid: false });
  now = 1000 + 299_999;
  t.true(tr.update({ memory: false, disk: false, pid: false }).memory);
  now = 1000 + 300_000;
  t.false(tr.update({ memory: false, disk: false, pid: false }).memory);
});

test('conditions carry the upstream reasons', (t) => {
  t.deepEqual(
    pressureConditions({ memory: true, disk: false, pid: false }).map((c) => [c.type, c.status, c.reason]),
    [
      ['MemoryPressure', 'True', 'KubeletHasInsufficientMemory'],
      ['DiskPressure', 'False', 'KubeletHasNoDiskPressure'],
      ['PIDPressure', 'False', 'KubeletHasSufficientPID'],
    ],
  );
});

test('loadavg parsing', (t) => {
  t.is(parseLoadavgTasks('0.52 0.48 0.40 3/1021 45877\n'), 1021);
  t.throws(() => parseLoadavgTasks('garbage'), { message: /malformed loadavg/ });
});

test('observes this machine for real', async (t) => {
  const obs = await observePressure({ rootDir: '/' });
  t.true(obs.memory.availableBytes > 0 && obs.memory.availableBytes <= obs.memory.capacityBytes);
  t.true(obs.pid.running > 0 && obs.pid.running < obs.pid.max);
  t.true(obs.nodefs.capacityBytes > 0);
});
