/**
 * `npm run bench -- devices`: Allocate round trips through svc-node's device manager for 1,000
 * containers (one device each: pick, plugin Allocate over gRPC, checkpoint write, run options),
 * against direct gRPC Allocate calls to the same plugin in the same run. The plugin is the sample
 * device plugin in its own process advertising 1,000 devices; the manager and its Registration
 * server run in this process on a temp device-plugins directory.
 *
 * Figures: sequential (one container at a time, as a single pod worker would) and concurrent
 * (all 1,000 admitted at once, as many pod workers would; checkpoint writes are shared).
 * Options: --containers N (default 1000).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { DeviceManager } from '../agent/devices/device-manager';
import { GrpcPluginClient } from '../agent/devices/plugin-client';
import { RegistrationServer } from '../agent/devices/registration-server';
import { realClock } from '../agent/platform/clock';
import type { Log } from '../agent/platform/logger';
import type { Pod } from '../agent/api/core-v1';
import type { Cleanup } from './lib/cleanup';
import { progress } from './lib/progress';
import { percentile, round } from './lib/stats';

const RES = 'example.com/bench';

/** Goals set before measuring: the manager's extra work (bookkeeping, a durable checkpoint per admission) may cost at most this share of the plugin's raw rate. */
const GOALS = {
  sequential_rate_vs_direct: { target: '>= 0.25', ok: (v: number) => v >= 0.25 },
  concurrent_rate_vs_direct: { target: '>= 0.5', ok: (v: number) => v >= 0.5 },
  distinct_devices: { target: '== containers', ok: (v: number, n: number) => v === n },
};

const quiet: Log = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

interface Figures {
  calls: number;
  seconds: number;
  per_second: number;
  latency_ms: { p50: number; p99: number; max: number };
}

function figures(lat: number[], seconds: number): Figures {
  return {
    calls: lat.length,
    seconds: round(seconds, 3),
    per_second: round(lat.length / seconds, 1),
    latency_ms: { p50: round(percentile(lat, 0.5), 3), p99: round(percentile(lat, 0.99), 3), max: round(Math.max(...lat), 3) },
  };
}

async function timed(n: number, concurrent: boolean, one: (i: number) => Promise<void>): Promise<Figures> {
  const lat: number[] = [];
  const t0 = performance.now();
  const run = async (i: number) => {
    const s = performance.now();
    await one(i);
    lat.push(performance.now() - s);
  };
  if (concurrent) await Promise.all(Array.from({ length: n }, (_, i) => run(i)));
  else for (let i = 0; i < n; i++) await run(i);
  return figures(lat, (performance.now() - t0) / 1000);
}

function pod(uid: string): Pod {
  return { metadata: { uid, name: uid, namespace: 'bench' }, spec: { containers: [{ name: 'app', image: 'x', resources: { limits: { [RES]: '1' } } }] } };
}

export async function runDevicesBench(args: readonly string[], cleanup: Cleanup): Promise<object> {
  const i = args.indexOf('--containers');
  const n = i >= 0 ? Number(args[i + 1]) : 1000;
  if (!Number.isInteger(n) || n < 1) throw new Error('--containers wants a positive integer');
  const loadBefore = round(loadavg()[0], 2);
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-devices-bench-'));
  cleanup.dir(dir);
  const dm = new DeviceManager({ dir, clock: realClock, log: quiet, callTimeoutMs: 30_000 });
  await dm.start();
  const server = new RegistrationServer({ dir, registrar: dm, log: quiet });
  await server.start();
  cleanup.add('device manager', async () => {
    await dm.stop();
    await server.stop();
  });

  const cfg = path.join(dir, 'plugin.json');
  writeFileSync(cfg, JSON.stringify({ resourceName: RES, devices: n, pluginDir: dir, socketName: 'bench.sock' }));
  const script = path.join(__dirname, '..', 'test', 'fixtures', 'device-plugin', 'sample-plugin.js');
  const plugin = spawn(process.execPath, [script, '--config', cfg], { stdio: ['ignore', 'ignore', 'inherit'] });
  cleanup.child(plugin);
  progress(`sample plugin started (pid ${plugin.pid}) with ${n} devices`);
  const deadline = Date.now() + 30_000;
  while (dm.extendedResources().allocatable[RES] !== String(n)) {
    if (Date.now() > deadline) throw new Error('the sample plugin did not register within 30 s');
    await new Promise((r) => setTimeout(r, 50));
  }

  // Baseline: the same plugin, Allocate called directly over gRPC (what the manager does per container, without the manager).
  const direct = new GrpcPluginClient(path.join(dir, 'bench.sock'), RES);
  await direct.connect(10_000);
  cleanup.add('direct client', () => direct.close());
  for (let k = 0; k < 50; k++) await direct.allocate([`dev-${k % n}`], 10_000); // warm-up
  progress('direct Allocate, sequential');
  const directSeq = await timed(n, false, async (k) => {
    await direct.allocate([`dev-${k}`], 10_000);
  });
  progress('direct Allocate, concurrent');
  const directConc = await timed(n, true, async (k) => {
    await direct.allocate([`dev-${k}`], 10_000);
  });

  const admitAll = async (tag: string, concurrent: boolean) => {
    const f = await timed(n, concurrent, async (k) => {
      const uid = `${tag}-${k}`;
      await dm.admitPod(pod(uid));
      await dm.runOptions(uid, 'app');
    });
    const held = new Set(dm.containersWithDevices().flatMap((c) => c.devices.flatMap((d) => d.deviceIds)));
    await dm.retainPods(new Set());
    return { f, distinct: held.size };
  };
  progress('through the device manager, sequential');
  const seq = await admitAll('seq', false);
  progress('through the device manager, concurrent');
  const conc = await admitAll('conc', true);

  const seqRatio = round(seq.f.per_second / directSeq.per_second, 3);
  const concRatio = round(conc.f.per_second / directConc.per_second, 3);
  return {
    benchmark: 'devices',
    containers: n,
    plugin: 'sample device plugin, separate process, unix socket',
    // Well above the core count means other work shared the machine and every figure is noisier.
    machine: { load_average_1m: { before: loadBefore, after: round(loadavg()[0], 2) } },
    baseline_direct_grpc_allocate: { sequential: directSeq, concurrent: directConc },
    device_manager_admit_and_run_options: { sequential: seq.f, concurrent: conc.f },
    goals: {
      sequential_rate_vs_direct: { target: GOALS.sequential_rate_vs_direct.target, value: seqRatio, met: GOALS.sequential_rate_vs_direct.ok(seqRatio) },
      concurrent_rate_vs_direct: { target: GOALS.concurrent_rate_vs_direct.target, value: concRatio, met: GOALS.concurrent_rate_vs_direct.ok(concRatio) },
      distinct_devices_sequential: { target: `${n}`, value: seq.distinct, met: GOALS.distinct_devices.ok(seq.distinct, n) },
      distinct_devices_concurrent: { target: `${n}`, value: conc.distinct, met: GOALS.distinct_devices.ok(conc.distinct, n) },
    },
    notes: 'each admission writes the checkpoint durably (temp file, fsync, rename, directory fsync) before it resolves; concurrent admissions share writes',
  };
}
