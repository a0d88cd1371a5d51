/**
 * Builds the Summary API answer (GET /stats/summary) from the runtime and the node. Pods and their
 * containers come from CRI: ListPodSandbox (pod reference and start time), ListContainers (start
 * times) and ListPodSandboxStats (the pod's CPU, memory and network, its containers' CPU, memory
 * and writable layer), as upstream's kubelet with its CRI stats provider; the node from its
 * kernel files; volumes from the pod's volume directories (./volume-stats). A pod's
 * ephemeral storage is its containers' writable layers and its ephemeral volumes (upstream adds
 * the containers' logs, not reported here).
 * usageNanoCores is the runtime's when it reports one (containerd and the simulator do), else
 * computed here from two samples (CpuRates), as for the node itself; `run` samples the node every
 * 10 s (cAdvisor's housekeeping) so a first reader already gets a rate.
 * A runtime without ListPodSandboxStats (Unimplemented: containerd 1.6) is asked for
 * ListContainerStats instead, from then on: a pod's CPU and memory are then its running containers'
 * sums, as upstream's kubelet reports them without cAdvisor (it would read the pod cgroup, which adds
 * the sandbox's few pages), and the pod's network is not reported.
 */
import { isUnimplemented, type ContainerStats as CriStats, type PodSandbox, type PodSandboxStats, type RuntimeService } from '../cri';
import type { Clock } from '../platform/clock';
import type { StatFs } from '../platform/host-fs';
import { CpuRates } from './cpu-rate';
import { fsStatsOf, readNode, type NodeReading } from './node-reader';
import { podVolumeStats } from './volume-stats';
import type { ContainerStats, CpuStats, FsStats, NodeStats, PodStats, Summary } from './types';

/** How often `run` samples the node's CPU (cAdvisor's default housekeeping interval). */
export const SAMPLE_INTERVAL_MS = 10_000;

export interface SummaryDeps {
  runtime: Pick<RuntimeService, 'listPodSandbox' | 'listContainers' | 'listPodSandboxStats' | 'listContainerStats' | 'imageFsInfo'>;
  clock: Clock;
  nodeName: string;
  /** The agent's root dir: its filesystem is the node's `fs` (nodefs). */
  rootDir: string;
  statfs: StatFs;
  /** When the node started (ms since the epoch): the node's startTime. */
  bootTimeMs: number;
  /** Where pod directories live (<root-dir>/pods): their volumes' usage; unset, no volume stats. */
  podsDir?: string;
  /** The node's readings (default: its kernel files under "/"). */
  readNode?: () => Promise<NodeReading>;
}

const NODE_KEY = '/';

const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

export class SummaryProvider {
  private readonly rates = new CpuRates();
  private readonly read: () => Promise<NodeReading>;
  /** false once the runtime answered ListPodSandboxStats Unimplemented (it does not gain the RPC while it runs). */
  private sandboxStats = true;

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
      this.runtimeStats(),
      this.d.runtime.imageFsInfo().catch(() => undefined),
      this.read().catch((): NodeReading => ({ interfaces: [] })),
    ]);
    const now = this.d.clock.now();
    const time = iso(now);
    const created = new Map(containers.map((c) => [c.id, c.createdAt]));
    const sandboxOf = new Map(containers.map((c) => [c.id, c.podSandboxId]));
    const bySandbox = new Map<string, CriStats[]>();
    const live = new Set<string>([NODE_KEY]);
    for (const s of stats.containers) {
      const sb = sandboxOf.get(s.id);
      if (sb === undefined) continue;
      live.add(s.id);
      bySandbox.set(sb, [...(bySandbox.get(sb) ?? []), s]);
    }
    for (const id of stats.pods?.keys() ?? []) live.add(id);
    const pods = await Promise.all(sandboxes.map((sb) => this.podStats(sb, bySandbox.get(sb.id) ?? [], created, now, stats.pods?.get(sb.id))));
    const node = await this.nodeStats(reading, now, time, imageFs?.imageFilesystems[0]);
    this.rates.retain(live);
    return { node, pods };
  }

  /** ListPodSandboxStats (its containers' stats too), or ListContainerStats from a runtime without it. */
  private async runtimeStats(): Promise<{ pods?: Map<string, PodSandboxStats>; containers: CriStats[] }> {
    if (this.sandboxStats) {
      try {
        const pods = await this.d.runtime.listPodSandboxStats();
        return { pods: new Map(pods.map((p) => [p.id, p])), containers: pods.flatMap((p) => p.containers) };
      } catch (e) {
        if (!isUnimplemented(e)) throw e;
        this.sandboxStats = false;
      }
    }
    return { containers: await this.d.runtime.listContainerStats() };
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

  private async podStats(sb: PodSandbox, stats: CriStats[], created: ReadonlyMap<string, number>, now: number, cri: PodSandboxStats | undefined): Promise<PodStats> {
    const containers = stats.map((s) => this.containerStats(s, created.get(s.id) ?? sb.createdAt, now));
    const pod: PodStats = { podRef: { name: sb.metadata.name, namespace: sb.metadata.namespace, uid: sb.metadata.uid }, startTime: iso(sb.createdAt), containers };
    const time = iso(now);
    if (cri?.cpu) pod.cpu = this.cpuStats(cri.id, cri.cpu, now);
    else {
      const cpu = sum(containers.map((c) => c.cpu), ['usageNanoCores', 'usageCoreNanoSeconds']);
      if (cpu) pod.cpu = { time, ...cpu };
    }
    if (cri?.memory) {
      const { timestamp, ...m } = cri.memory;
      pod.memory = { time: iso(timestamp || now), ...m };
    } else {
      const memory = sum(containers.map((c) => c.memory), ['usageBytes', 'workingSetBytes', 'rssBytes', 'pageFaults', 'majorPageFaults']);
      if (memory) pod.memory = { time, ...memory };
    }
    const net = cri?.network;
    if (net) pod.network = { time: iso(net.timestamp || now), ...(net.defaultInterface ?? {}), interfaces: net.interfaces.map((i) => ({ ...i })) };
    const volumes = this.d.podsDir ? await podVolumeStats(this.d.podsDir, sb.metadata.uid, this.d.statfs, time) : undefined;
    if (volumes && volumes.volumes.length > 0) pod.volume = volumes.volumes;
    const disk = sum([...containers.map((c) => c.rootfs), ...(volumes && volumes.volumes.length > 0 ? [volumes.ephemeral] : [])], ['usedBytes', 'inodesUsed']);
    if (disk) pod['ephemeral-storage'] = { time, ...disk };
    return pod;
  }

  /** CPU stats of a container or pod: the runtime's rate, else one computed from its cumulative time. */
  private cpuStats(key: string, u: { timestamp: number; usageCoreNanoSeconds?: number; usageNanoCores?: number }, now: number): CpuStats {
    const t = u.timestamp || now;
    const cpu: CpuStats = { time: iso(t) };
    if (u.usageCoreNanoSeconds !== undefined) cpu.usageCoreNanoSeconds = u.usageCoreNanoSeconds;
    const computed = u.usageCoreNanoSeconds !== undefined ? this.rates.observe(key, t, u.usageCoreNanoSeconds) : undefined;
    const rate = u.usageNanoCores ?? computed;
    if (rate !== undefined) cpu.usageNanoCores = rate;
    return cpu;
  }

  private containerStats(s: CriStats, createdAt: number, now: number): ContainerStats {
    const c: ContainerStats = { name: s.metadata.name, startTime: iso(createdAt) };
    if (s.cpu) c.cpu = this.cpuStats(s.id, s.cpu, now);
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
