/**
 * The node's own usage, read from the kernel's files as cAdvisor reads them for the kubelet's root
 * container: CPU time from /proc/stat, memory from /proc/meminfo and /proc/vmstat, interfaces from
 * /proc/net/dev, the root dir's filesystem with statfs. Rooted at an injectable directory so tests
 * read fixture trees.
 */
import { hostPath, parseMeminfo, readOptional, type StatFs } from '../platform/host-fs';
import type { FsStats, InterfaceStats } from './types';

/** USER_HZ: /proc/stat counts in clock ticks of 1/100 s on every Linux architecture svc runs on. */
const TICK_NS = 10_000_000;

export interface NodeReading {
  /** Cumulative busy CPU time of all cores (everything but idle and iowait), in core-nanoseconds. */
  cpuUsageNs?: number;
  memory?: { totalBytes: number; usageBytes: number; workingSetBytes: number; rssBytes?: number; pageFaults?: number; majorPageFaults?: number };
  interfaces: InterfaceStats[];
}

/** Busy time of the aggregate "cpu" line: user nice system idle iowait irq softirq steal (guest is inside user). */
export function parseProcStatCpu(text: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith('cpu '));
  if (!line) return undefined;
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  if (f.length < 4 || f.some((x) => !Number.isFinite(x))) return undefined;
  const [user, nice, system, , , irq = 0, softirq = 0, steal = 0] = f;
  return (user + nice + system + irq + softirq + steal) * TICK_NS;
}

/**
 * Memory as cAdvisor reports the root container: usage is what is not free, the working set is
 * usage less inactive file pages (what the kernel reclaims first; the eviction manager's signal).
 */
export function memoryFromMeminfo(meminfo: string, vmstat: string | undefined): NodeReading['memory'] {
  const m = parseMeminfo(meminfo);
  const total = m.get('MemTotal');
  const free = m.get('MemFree');
  if (total === undefined || free === undefined) return undefined;
  const usage = total - free;
  const inactiveFile = m.get('Inactive(file)') ?? 0;
  const vm = new Map((vmstat ?? '').split('\n').map((l) => l.trim().split(/\s+/) as [string, string]).filter((p) => p.length === 2).map(([k, v]) => [k, Number(v)]));
  return {
    totalBytes: total,
    usageBytes: usage,
    workingSetBytes: Math.max(0, usage - inactiveFile),
    ...(m.has('AnonPages') ? { rssBytes: m.get('AnonPages') } : {}),
    ...(vm.has('pgfault') ? { pageFaults: vm.get('pgfault') } : {}),
    ...(vm.has('pgmajfault') ? { majorPageFaults: vm.get('pgmajfault') } : {}),
  };
}

/** Interfaces of /proc/net/dev except loopback, in file order. */
export function parseNetDev(text: string): InterfaceStats[] {
  const out: InterfaceStats[] = [];
  for (const line of text.split('\n').slice(2)) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim();
    const f = line.slice(colon + 1).trim().split(/\s+/).map(Number);
    if (name === 'lo' || f.length < 11) continue;
    out.push({ name, rxBytes: f[0], rxErrors: f[2], txBytes: f[8], txErrors: f[10] });
  }
  return out;
}

/** Reads the node's CPU, memory and interfaces; a file that cannot be read leaves its part out. */
export async function readNode(hostRoot: string): Promise<NodeReading> {
  const [stat, meminfo, vmstat, netdev] = await Promise.all(
    ['/proc/stat', '/proc/meminfo', '/proc/vmstat', '/proc/net/dev'].map((p) => readOptional(hostPath(hostRoot, p))),
  );
  const cpu = stat === undefined ? undefined : parseProcStatCpu(stat);
  const memory = meminfo === undefined ? undefined : memoryFromMeminfo(meminfo, vmstat);
  return { ...(cpu !== undefined ? { cpuUsageNs: cpu } : {}), ...(memory ? { memory } : {}), interfaces: netdev === undefined ? [] : parseNetDev(netdev) };
}

/** The filesystem holding `path` as a Summary FsStats; undefined when statfs fails. */
export async function fsStatsOf(statfs: StatFs, path: string, time: string): Promise<FsStats | undefined> {
  try {
    const s = await statfs(path);
    return {
      time,
      availableBytes: s.bavail * s.bsize,
      capacityBytes: s.blocks * s.bsize,
      usedBytes: (s.blocks - s.bavail) * s.bsize,
      inodesFree: s.ffree,
      inodes: s.files,
      inodesUsed: s.files - s.ffree,
    };
  } catch {
    return undefined;
  }
}
