/**
 * The Summary API's pod entries from CRI ListPodSandboxStats (network, CPU, memory of the pod), the
 * fallback to ListContainerStats on a runtime without it (containerd 1.6: Unimplemented), and the
 * volume and ephemeral-storage stats from the pod's volume directories.
 */
import test from 'ava';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { RuntimeService } from '../../../../agent/cri';
import { RuntimeError } from '../../../../agent/cri/errors';
import { Simulator } from '../../../../agent/cri/simulator';
import type { NodeReading } from '../../../../agent/stats/node-reader';
import { SummaryProvider } from '../../../../agent/stats/summary-provider';
import { FakeClock } from '../../../helpers/fake-clock';
import { containerConfig, sandboxConfig } from '../cri/configs';

const BUSYBOX = 'docker.io/library/busybox:latest';
const statfs = () => Promise.resolve({ bsize: 4096, blocks: 1000, bavail: 250, files: 100, ffree: 40 });
const reading = (): Promise<NodeReading> => Promise.resolve({ interfaces: [] });

async function podWithTraffic(sim: Simulator): Promise<string> {
  const sb = sandboxConfig('web');
  sb.annotations = { ...sb.annotations, 'sim.svc.io/cpu-millicores': 'app=250,side=5', 'sim.svc.io/memory-bytes': '64Mi' };
  const sandboxId = await sim.runPodSandbox(sb);
  for (const name of ['app', 'side']) await sim.startContainer(await sim.createContainer(sandboxId, containerConfig(name, BUSYBOX), sb));
  // 3000 bytes through a port-forward: the pod's eth0 receives them and sends them back.
  const target = sim.localStream(await sim.portForward({ podSandboxId: sandboxId, ports: [80] }));
  if (target?.kind !== 'portforward') throw new Error('no port-forward target');
  const conn = await target.dial(80, new AbortController().signal);
  conn.write(Buffer.alloc(3000, 1));
  let got = 0;
  await new Promise<void>((resolve) => conn.on('data', (d: Buffer) => (got += d.length) >= 3000 && resolve()));
  conn.destroy();
  return sandboxId;
}

/** The runtime with its calls counted by method. */
function counting(sim: Simulator): { runtime: RuntimeService; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const runtime = new Proxy(sim, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        calls.set(String(prop), (calls.get(String(prop)) ?? 0) + 1);
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { runtime, calls };
}

test('ListPodSandboxStats: the pod network (eth0 rx/tx), CPU and memory come from the sandbox stats; containers from its entries', async (t) => {
  const clock = new FakeClock();
  const sim = new Simulator({ clock });
  await podWithTraffic(sim);
  const { runtime, calls } = counting(sim);
  const p = new SummaryProvider({ runtime, clock, nodeName: 'n1', rootDir: '/var/lib/svc-node', statfs, bootTimeMs: 0, readNode: reading });
  await clock.advance(10_000);
  const pod = (await p.summary()).pods[0];
  t.like(pod.network, { name: 'eth0', rxBytes: 3000, txBytes: 3000, rxErrors: 0, txErrors: 0 });
  t.deepEqual(pod.network?.interfaces, [{ name: 'eth0', rxBytes: 3000, rxErrors: 0, txBytes: 3000, txErrors: 0 }]);
  t.is(pod.cpu?.usageNanoCores, 255_000_000);
  t.is(pod.cpu?.usageCoreNanoSeconds, 2_550_000_000);
  t.is(pod.memory?.workingSetBytes, 128 * 1024 * 1024);
  t.deepEqual(pod.containers.map((c) => c.name).sort(), ['app', 'side']);
  t.is(calls.get('listPodSandboxStats'), 1);
  t.is(calls.get('listContainerStats'), undefined);
});

test('a runtime without ListPodSandboxStats (Unimplemented): container sums, no pod network, and it is not asked again', async (t) => {
  const clock = new FakeClock();
  const sim = new Simulator({ clock, podSandboxStats: false });
  await podWithTraffic(sim);
  const { runtime, calls } = counting(sim);
  const p = new SummaryProvider({ runtime, clock, nodeName: 'n1', rootDir: '/var/lib/svc-node', statfs, bootTimeMs: 0, readNode: reading });
  await clock.advance(10_000);
  await p.summary();
  const pod = (await p.summary()).pods[0];
  t.is(pod.network, undefined);
  t.is(pod.cpu?.usageNanoCores, 255_000_000);
  t.is(pod.memory?.workingSetBytes, 128 * 1024 * 1024);
  t.is(calls.get('listPodSandboxStats'), 1);
  t.is(calls.get('listContainerStats'), 2);
});

test('another ListPodSandboxStats failure fails the summary (no silent fallback)', async (t) => {
  const clock = new FakeClock();
  const sim = new Simulator({ clock });
  sim.injectFault('ListPodSandboxStats', new RuntimeError('Unavailable', 'connection refused', 'ListPodSandboxStats'));
  const p = new SummaryProvider({ runtime: sim, clock, nodeName: 'n1', rootDir: '/var/lib/svc-node', statfs, bootTimeMs: 0, readNode: reading });
  await t.throwsAsync(p.summary(), { message: /connection refused/ });
  t.is((await p.summary()).pods.length, 0, 'asked again next time');
});

test('volume stats from the pod directory; ephemeral storage is writable layers plus emptyDir, configMap ... volumes', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-volstats-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const clock = new FakeClock();
  const sim = new Simulator({ clock });
  await podWithTraffic(sim);
  const volumes = path.join(dir, 'uid-default-web', 'volumes');
  await mkdir(path.join(volumes, 'svc.io~empty-dir', 'cache', 'sub'), { recursive: true });
  await writeFile(path.join(volumes, 'svc.io~empty-dir', 'cache', 'sub', 'blob'), Buffer.alloc(64 * 1024, 7));
  await mkdir(path.join(volumes, 'svc.io~configmap', 'cfg'), { recursive: true });
  await writeFile(path.join(volumes, 'svc.io~configmap', 'cfg', 'key'), 'value');
  // A plugin that is not ephemeral storage (a claim's volume would be elsewhere; any other name counts as a volume only).
  await mkdir(path.join(volumes, 'svc.io~other', 'data'), { recursive: true });
  const p = new SummaryProvider({ runtime: sim, clock, nodeName: 'n1', rootDir: dir, podsDir: dir, statfs, bootTimeMs: 0, readNode: reading });
  const pod = (await p.summary()).pods[0];
  t.deepEqual(pod.volume?.map((v) => v.name), ['cache', 'cfg', 'data']);
  const cache = pod.volume!.find((v) => v.name === 'cache')!;
  t.true(cache.usedBytes! >= 64 * 1024, `used ${cache.usedBytes}`);
  t.is(cache.inodesUsed, 3, 'cache, sub, blob');
  t.is(cache.capacityBytes, 1000 * 4096);
  t.is(cache.availableBytes, 250 * 4096);
  const cfg = pod.volume!.find((v) => v.name === 'cfg')!;
  const data = pod.volume!.find((v) => v.name === 'data')!;
  const rootfs = pod.containers.reduce((n, c) => n + (c.rootfs?.usedBytes ?? 0), 0);
  t.true(data.usedBytes! > 0);
  t.is(pod['ephemeral-storage']?.usedBytes, rootfs + cache.usedBytes! + cfg.usedBytes!);
  t.is(pod['ephemeral-storage']?.inodesUsed, pod.containers.reduce((n, c) => n + (c.rootfs?.inodesUsed ?? 0), 0) + 3 + 2);
});
