import test from 'ava';
import { Simulator } from '../../../../agent/cri/simulator';
import { CpuRates } from '../../../../agent/stats/cpu-rate';
import { memoryFromMeminfo, parseNetDev, parseProcStatCpu, type NodeReading } from '../../../../agent/stats/node-reader';
import { goFloat, renderResourceMetrics } from '../../../../agent/stats/resource-metrics';
import { SummaryProvider } from '../../../../agent/stats/summary-provider';
import { FakeClock } from '../../../helpers/fake-clock';
import { containerConfig, sandboxConfig } from '../cri/configs';

const BUSYBOX = 'docker.io/library/busybox:latest';

test('CpuRates: nanocores from two samples; the first and a counter going back give none; a short window keeps the older base', (t) => {
  const r = new CpuRates(1000);
  t.is(r.observe('c', 0, 0), undefined);
  // 0.5 s of CPU over 2 s: a quarter core.
  t.is(r.observe('c', 2000, 500_000_000), 250_000_000);
  // 100 ms later: the base stays at 2000 ms (window too short to keep), the rate is over 100 ms.
  t.is(r.observe('c', 2100, 600_000_000), 1_000_000_000);
  t.is(r.observe('c', 3000, 600_000_000), 100_000_000);
  t.is(r.observe('c', 4000, 1), undefined, 'restarted counter');
  r.retain(new Set());
  t.is(r.observe('c', 5000, 10), undefined, 'forgotten');
});

test('node readings: /proc/stat busy time, meminfo working set, net/dev without loopback', (t) => {
  t.is(parseProcStatCpu('cpu  100 5 50 1000 20 1 2 3 0 0\ncpu0 1 1 1 1\n'), (100 + 5 + 50 + 1 + 2 + 3) * 10_000_000);
  t.is(parseProcStatCpu('intr 1 2\n'), undefined);
  const mem = memoryFromMeminfo('MemTotal: 1000 kB\nMemFree: 400 kB\nInactive(file): 100 kB\nAnonPages: 200 kB\n', 'pgfault 7\npgmajfault 2\n');
  t.deepEqual(mem, { totalBytes: 1000 * 1024, usageBytes: 600 * 1024, workingSetBytes: 500 * 1024, rssBytes: 200 * 1024, pageFaults: 7, majorPageFaults: 2 });
  const dev = 'Inter-|   Receive |  Transmit\n face |bytes packets errs drop fifo frame compressed multicast|bytes packets errs drop fifo colls carrier compressed\n    lo: 10 1 0 0 0 0 0 0 10 1 0 0 0 0 0 0\n  eth0: 500 5 1 0 0 0 0 0 700 7 2 0 0 0 0 0\n';
  t.deepEqual(parseNetDev(dev), [{ name: 'eth0', rxBytes: 500, rxErrors: 1, txBytes: 700, txErrors: 2 }]);
});

async function simWithPod(clock: FakeClock) {
  const sim = new Simulator({ clock });
  const sb = sandboxConfig('web');
  sb.annotations = { ...sb.annotations, 'sim.svc.io/cpu-millicores': 'app=250,side=5', 'sim.svc.io/memory-bytes': '64Mi' };
  const sandboxId = await sim.runPodSandbox(sb);
  for (const name of ['app', 'side']) {
    const id = await sim.createContainer(sandboxId, containerConfig(name, BUSYBOX), sb);
    await sim.startContainer(id);
  }
  return sim;
}

test('summary: pods from the runtime with their containers summed; node CPU rate from two samples; the usage annotations of the simulator', async (t) => {
  const clock = new FakeClock();
  const sim = await simWithPod(clock);
  let cpuNs = 1_000_000_000;
  const reading = (): Promise<NodeReading> => Promise.resolve({ cpuUsageNs: cpuNs, memory: { totalBytes: 8e9, usageBytes: 3e9, workingSetBytes: 2e9 }, interfaces: [{ name: 'eth0', rxBytes: 1, rxErrors: 0, txBytes: 2, txErrors: 0 }] });
  const statfs = () => Promise.resolve({ bsize: 4096, blocks: 1000, bavail: 250, files: 100, ffree: 40 });
  const p = new SummaryProvider({ runtime: sim, clock, nodeName: 'n1', rootDir: '/var/lib/svc-node', statfs, bootTimeMs: clock.now() - 60_000, readNode: reading });
  const first = await p.summary();
  t.is(first.node.nodeName, 'n1');
  t.is(first.node.cpu?.usageNanoCores, undefined, 'no rate from one sample');
  t.deepEqual(first.node.memory, { time: first.node.memory!.time, availableBytes: 6e9, usageBytes: 3e9, workingSetBytes: 2e9 });
  t.deepEqual(first.node.fs, { time: first.node.fs!.time, availableBytes: 250 * 4096, capacityBytes: 1000 * 4096, usedBytes: 750 * 4096, inodesFree: 40, inodes: 100, inodesUsed: 60 });
  t.is(first.node.network?.name, 'eth0');
  t.truthy(first.node.runtime?.imageFs?.usedBytes);

  await clock.advance(10_000);
  cpuNs += 5_000_000_000; // half a core for 10 s
  const s = await p.summary();
  t.is(s.node.cpu?.usageNanoCores, 500_000_000);
  t.is(s.node.cpu?.usageCoreNanoSeconds, 6_000_000_000);
  t.is(s.pods.length, 1);
  const pod = s.pods[0];
  t.deepEqual(pod.podRef, { name: 'web', namespace: 'default', uid: 'uid-default-web' });
  t.deepEqual(pod.containers.map((c) => [c.name, c.cpu?.usageNanoCores, c.memory?.workingSetBytes]).sort(), [
    ['app', 250_000_000, 64 * 1024 * 1024],
    ['side', 5_000_000, 64 * 1024 * 1024],
  ]);
  t.is(pod.cpu?.usageNanoCores, 255_000_000);
  t.is(pod.memory?.workingSetBytes, 128 * 1024 * 1024);
  // 10 s at 250m: 2.5 core-seconds.
  t.is(pod.containers.find((c) => c.name === 'app')?.cpu?.usageCoreNanoSeconds, 2_500_000_000);
});

test('simulator usage annotation: a malformed value fails the container with the annotation named', async (t) => {
  const clock = new FakeClock();
  const sim = new Simulator({ clock });
  const sb = sandboxConfig('bad');
  sb.annotations = { 'sim.svc.io/cpu-millicores': 'lots' };
  const id = await sim.runPodSandbox(sb);
  const e = await t.throwsAsync(sim.createContainer(id, containerConfig('c', BUSYBOX), sb));
  t.regex(e.message, /annotation sim\.svc\.io\/cpu-millicores="lots": must be a number of millicores/);
});

test('resource metrics: upstream names, labels, Go float format and sample times; a failed read is a scrape error', (t) => {
  t.is(goFloat(4194304), '4.194304e+06');
  t.is(goFloat(2.5), '2.5');
  t.is(goFloat(123456), '123456');
  t.is(goFloat(0.00001), '1e-05');
  const time = '2025-01-01T00:00:10Z';
  const text = renderResourceMetrics({
    node: { nodeName: 'n1', startTime: time, cpu: { time, usageCoreNanoSeconds: 6e9 }, memory: { time, workingSetBytes: 2e9 } },
    pods: [{ podRef: { name: 'web', namespace: 'default', uid: 'u' }, startTime: time, cpu: { time, usageCoreNanoSeconds: 2.5e9 }, memory: { time, workingSetBytes: 1024 }, containers: [{ name: 'app', startTime: time, cpu: { time, usageCoreNanoSeconds: 2.5e9 }, memory: { time, workingSetBytes: 1024 } }] }],
  });
  const at = Date.parse(time);
  t.true(text.includes(`# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in core-seconds\n# TYPE node_cpu_usage_seconds_total counter\nnode_cpu_usage_seconds_total 6 ${at}\n`));
  t.true(text.includes(`node_memory_working_set_bytes 2e+09 ${at}\n`));
  t.true(text.includes(`container_cpu_usage_seconds_total{container="app",namespace="default",pod="web"} 2.5 ${at}\n`));
  t.true(text.includes(`container_memory_working_set_bytes{container="app",namespace="default",pod="web"} 1024 ${at}\n`));
  t.true(text.includes(`container_start_time_seconds{container="app",namespace="default",pod="web"} 1.73568961e+09 ${at}\n`));
  t.true(text.includes(`pod_cpu_usage_seconds_total{namespace="default",pod="web"} 2.5 ${at}\n`));
  t.true(text.includes(`pod_memory_working_set_bytes{namespace="default",pod="web"} 1024 ${at}\n`));
  t.true(text.includes('resource_scrape_error 0\n'));
  t.true(text.includes('scrape_error 0\n'));
  const failed = renderResourceMetrics(undefined);
  t.true(failed.includes('resource_scrape_error 1\n'));
  t.false(/^node_cpu_usage_seconds_total /m.test(failed));
});
