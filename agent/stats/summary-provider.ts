/**
 * Builds the Summary API answer (GET /stats/summary) from the runtime and the node. Pods and their
 * containers come from CRI: ListPodSandbox (pod reference and start time), ListContainers (start
 * times) and ListContainerStats (CPU, memory, writable layer); the node from its kernel files.
 * usageNanoCores is the runtime's when it reports one (containerd and the simulator do), else
 * computed here from two samples (CpuRates), as for the node itself; `run` samples the node every
 * 10 s (cAdvisor's housekeeping) so a first reader already gets a rate.
 * Differs from upstream: a pod's CPU and memory are the sums of its running containers' (upstream
 * reads the pod cgroup through cAdvisor or ListPodSandboxStats, which adds the sandbox's few
 * pages); pod network and volume stats are not reported.
 */
import type { ContainerStats as CriStats, PodSandbox, RuntimeService } from '../cri';
import type { Clock } from '../platform/clock';
import type { StatFs } from '../platform/host-fs';
import { CpuRates } from './cpu-rate';
import { fsStatsOf, readNode, type NodeReading } from './node-reader';
import type { ContainerStats, CpuStats, FsStats, NodeStats, PodStats, Summary } from './types';

/** How often `run` samples the node's CPU (cAdvisor's default housekeeping interval). */
export const SAMPLE_INTERVAL_MS = 10_000;

export interface SummaryDeps {
  runtime: Pick<RuntimeService, 'listPodSandbox' | 'listContainers' | 'listContainerStats' | 'imageFsInfo'>;
  clock: Clock;
  nodeName: string;
  /** The agent's root dir: its filesystem is the node's `fs` (nodefs). */
  rootDir: string;
  statfs: StatFs;
  /** When the node started (ms since the epoch): the node's startTime. */
  bootTimeMs: number;
  /** The node's readings (default: its kernel files under "/"). */
  readNode?: () => Promise<NodeReading>;
}

const NODE_KEY = '/';

const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

export class SummaryProvider {
  private readonly rates = new CpuRates();
  private readonly read: () => Promise<NodeReading>;

  constructor(private readonly d: SummaryDeps) {
    this.read = d.readNode ?? (() => readNode('/'));
  }

  /** Samples the node's CPU every 10 s until the signal aborts, so its rate is always ready. */
  async run(signal: AbortSignal): Promise<void> {
    do {
      try {
        const r = await this.read();
        if (r.cpuUsageNs !== undefined) this.rates.observe(NODE_KEY, this.d.clock.now(), r.cpuUsageNs);
      } catch {
        // the next sample or request tries again
      }
    } while (await this.d.clock.sleep(SAMPLE_INTERVAL_MS, signal));
  }

  /** The summary now. Rejects when the runtime cannot be asked (the handler answers 500). */
  async summary(): Promise<Summary> {
    const [sandboxes, containers, stats, imageFs, reading] = await Promise.all([
      this.d.runtime.listPodSandbox({ state: 'SANDBOX_READY' }),
      this.d.runtime.listContainers({ state: 'CONTAINER_RUNNING' }),
      this.d.runtime.listContainerStats(),
      this.d.runtime.imageFsInfo().catch(() => undefined),
      this.read().catch((): NodeReading => ({ interfaces: [] })),
    ]);
    const now = this.d.clock.now();
    const time = iso(now);
    const created = new Map(containers.map((c) => [c.id, c.createdAt]));
    const sandboxOf = new Map(containers.map((c) => [c.id, c.podSandboxId]));
    const bySandbox = new Map<string, CriStats[]>();
    const live = new Set<string>([NODE_KEY]);
    for (const s of stats) {
      const sb = sandboxOf.get(s.id);
      if (sb === undefined) continue;
      live.add(s.id);
      bySandbox.set(sb, [...(bySandbox.get(sb) ?? []), s]);
    }
    const pods = sandboxes.map((sb) => this.podStats(sb, bySandbox.get(sb.id) ?? [], created, now));
    const node = await this.nodeStats(reading, now, time, imageFs?.imageFilesystems[0]);
    this.rates.retain(live);
    return { node, pods };
  }

  private async nodeStats(r: NodeReading, now: number, time: string, imageFs: { usedBytes?: number; inodesUsed?: number; mountpoint: string } | undefined): Promise<NodeStats> {
    const node: NodeStats = { nodeName: this.d.nodeName, startTime: iso(this.d.bootTimeMs) };
    if (r.cpuUsageNs !== undefined) {
      const rate = this.rates.observe(NODE_KEY, now, r.cpuUsageNs);
      node.cpu = { time, usageCoreNanoSeconds: r.cpuUsageNs, ...(rate !== undefined ? { usageNanoCores: rate } : {}) };
    }
    if (r.memory) {
      const m = r.memory;
      node.memory = {
        time,
        availableBytes: Math.max(0, m.totalBytes - m.workingSetBytes),
        usageBytes: m.usageBytes,
        workingSetBytes: m.workingSetBytes,
        ...(m.rssBytes !== undefined ? { rssBytes: m.rssBytes } : {}),
        ...(m.pageFaults !== undefined ? { pageFaults: m.pageFaults } : {}),
        ...(m.majorPageFaults !== undefined ? { majorPageFaults: m.majorPageFaults } : {}),
      };
    }
    if (r.interfaces.length > 0) node.network = { time, ...r.interfaces[0], interfaces: r.interfaces };
    const fs = await fsStatsOf(this.d.statfs, this.d.rootDir, time);
    if (fs) node.fs = fs;
    if (imageFs) {
      const onDisk = await fsStatsOf(this.d.statfs, imageFs.mountpoint, time);
      const used: FsStats = { time, ...(imageFs.usedBytes !== undefined ? { usedBytes: imageFs.usedBytes } : {}), ...(imageFs.inodesUsed !== undefined ? { inodesUsed: imageFs.inodesUsed } : {}) };
      const { usedBytes: _u, inodesUsed: _i, ...capacity } = onDisk ?? { time };
      node.runtime = { imageFs: { ...capacity, ...used } };
    }
    return node;
  }

  private podStats(sb: PodSandbox, stats: CriStats[], created: ReadonlyMap<string, number>, now: number): PodStats {
    const containers = stats.map((s) => this.containerStats(s, created.get(s.id) ?? sb.createdAt, now));
    const pod: PodStats = { podRef: { name: sb.metadata.name, namespace: sb.metadata.namespace, uid: sb.metadata.uid }, startTime: iso(sb.createdAt), containers };
    const time = iso(now);
    const cpu = sum(containers.map((c) => c.cpu), ['usageNanoCores', 'usageCoreNanoSeconds']);
    if (cpu) pod.cpu = { time, ...cpu };
    const memory = sum(containers.map((c) => c.memory), ['usageBytes', 'workingSetBytes', 'rssBytes', 'pageFaults', 'majorPageFaults']);
    if (memory) pod.memory = { time, ...memory };
    const disk = sum(containers.map((c) => c.rootfs), ['usedBytes', 'inodesUsed']);
    if (disk) pod['ephemeral-storage'] = { time, ...disk };
    return pod;
  }

  private containerStats(s: CriStats, createdAt: number, now: number): ContainerStats {
    const c: ContainerStats = { name: s.metadata.name, startTime: iso(createdAt) };
    if (s.cpu) {
      const t = s.cpu.timestamp || now;
      const cpu: CpuStats = { time: iso(t) };
      if (s.cpu.usageCoreNanoSeconds !== undefined) cpu.usageCoreNanoSeconds = s.cpu.usageCoreNanoSeconds;
      const computed = s.cpu.usageCoreNanoSeconds !== undefined ? this.rates.observe(s.id, t, s.cpu.usageCoreNanoSeconds) : undefined;
      const rate = s.cpu.usageNanoCores ?? computed;
      if (rate !== undefined) cpu.usageNanoCores = rate;
      c.cpu = cpu;
    }
    if (s.memory) {
      const { timestamp, ...m } = s.memory;
      c.memory = { time: iso(timestamp || now), ...m };
    }
    if (s.writableLayer) {
      const w = s.writableLayer;
      c.rootfs = { time: iso(w.timestamp || now), ...(w.usedBytes !== undefined ? { usedBytes: w.usedBytes } : {}), ...(w.inodesUsed !== undefined ? { inodesUsed: w.inodesUsed } : {}) };
    }
    return c;
  }
}

/** Field-wise sums of the values present (undefined when no part has any of the fields). */
function sum<K extends string>(parts: ReadonlyArray<Partial<Record<K, unknown>> | undefined>, keys: readonly K[]): Partial<Record<K, number>> | undefined {
  const out: Partial<Record<K, number>> = {};
  let any = false;
  for (const p of parts) {
    for (const k of keys) {
      const v = p?.[k];
      if (typeof v !== 'number') continue;
      out[k] = (out[k] ?? 0) + v;
      any = true;
    }
  }
  return any ? out : undefined;
}
