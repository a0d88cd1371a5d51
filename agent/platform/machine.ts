/**
 * What the node is: capacity (CPU, memory, ephemeral storage, pids) and identity (kernel,
 * OS image, boot and machine ids, architecture), read as cAdvisor does for the kubelet's
 * Node.status.capacity and nodeInfo.
 */
import { availableParallelism, endianness } from 'node:os';
import { hostPath, parseIntFile, parseMeminfo, readOptional, readRequired, realStatFs, type StatFs } from './host-fs';

export interface MachineInfo {
  /** Online logical CPUs. */
  cpuCores: number;
  memoryBytes: number;
  /** Size of the filesystem holding the agent root dir. */
  ephemeralStorageBytes: number;
  /** /proc/sys/kernel/pid_max. */
  pidMax: number;
  kernelVersion: string;
  /** PRETTY_NAME of os-release, "Linux" when unknown (as cAdvisor). */
  osImage: string;
  bootID: string;
  machineID: string;
  /** DMI product UUID; '' when not readable (it is root-only on most machines). */
  systemUUID: string;
  /** Go's GOARCH name (amd64, arm64, ...). */
  architecture: string;
  /** Go's GOOS name. */
  operatingSystem: string;
}

export interface MachineSources {
  /** Directory standing for "/" (fixture trees in tests). */
  hostRoot?: string;
  /** The agent's --root-dir, whose filesystem is the node's ephemeral storage. */
  rootDir: string;
  statfs?: StatFs;
  /** Node's process.arch value; injectable for tests. */
  arch?: string;
  /** Used when /sys/devices/system/cpu/online is missing. */
  cpuFallback?: () => number;
}

/** Node's process.arch in Go's GOARCH spelling, which Node objects and labels (svc.io/arch) use. */
export function goArch(arch: string, endian: 'BE' | 'LE' = endianness()): string {
  switch (arch) {
    case 'x64':
      return 'amd64';
    case 'ia32':
      return '386';
    case 'ppc64':
      return endian === 'LE' ? 'ppc64le' : 'ppc64';
    case 'mipsel':
      return 'mipsle';
    default:
      return arch; // arm64, arm, s390x, riscv64, loong64, mips are spelled the same
  }
}

/** Counts CPUs in a kernel cpu list such as "0-3,6,8-9". */
export function countCpuList(text: string): number {
  let n = 0;
  for (const part of text.trim().split(',')) {
    if (part === '') continue;
    const [a, b] = part.split('-').map((x) => Number.parseInt(x, 10));
    if (!Number.isInteger(a)) throw new Error(`malformed cpu list ${JSON.stringify(text.trim())}`);
    n += b === undefined ? 1 : b - a + 1;
  }
  return n;
}

/** Reads a value from os-release text (shell-style KEY=value, optionally quoted). */
export function osReleaseValue(text: string, key: string): string | undefined {
  for (const line of text.split('\n')) {
    const m = /^\s*([A-Z0-9_]+)=(.*)$/.exec(line);
    if (!m || m[1] !== key) continue;
    let v = m[2].trim();
    if ((v.startsWith('"') && v.endsWith('"')) || (v.startsWith("'") && v.endsWith("'"))) {
      v = v.slice(1, -1);
      v = v.replace(/\\(["\\$`])/g, '$1');
    }
    return v;
  }
  return undefined;
}

/** Reads the machine's capacity and identity. Rejects naming the file when a required source is unreadable. */
export async function readMachineInfo(src: MachineSources): Promise<MachineInfo> {
  const root = src.hostRoot ?? '/';
  const p = (rel: string) => hostPath(root, rel);
  const statfs = src.statfs ?? realStatFs;

  const meminfoPath = p('/proc/meminfo');
  const memTotal = parseMeminfo(await readRequired(meminfoPath)).get('MemTotal');
  if (memTotal === undefined) throw new Error(`malformed ${meminfoPath}: no MemTotal`);

  const online = await readOptional(p('/sys/devices/system/cpu/online'));
  const cpuCores = online !== undefined ? countCpuList(online) : (src.cpuFallback ?? availableParallelism)();

  const pidMaxPath = p('/proc/sys/kernel/pid_max');
  const pidMax = parseIntFile(pidMaxPath, await readRequired(pidMaxPath));

  const fs = await statfs(src.rootDir);

  const osRelease = (await readOptional(p('/etc/os-release'))) ?? (await readOptional(p('/usr/lib/os-release')));
  const machineID = (await readOptional(p('/etc/machine-id'))) ?? (await readOptional(p('/var/lib/dbus/machine-id'))) ?? '';

  return {
    cpuCores,
    memoryBytes: memTotal,
    ephemeralStorageBytes: fs.blocks * fs.bsize,
    pidMax,
    kernelVersion: ((await readOptional(p('/proc/sys/kernel/osrelease'))) ?? '').trim(),
    osImage: (osRelease && osReleaseValue(osRelease, 'PRETTY_NAME')) || 'Linux',
    bootID: ((await readOptional(p('/proc/sys/kernel/random/boot_id'))) ?? '').trim(),
    machineID: machineID.trim(),
    systemUUID: ((await readOptional(p('/sys/class/dmi/id/product_uuid'))) ?? '').trim(),
    architecture: goArch(src.arch ?? process.arch),
    operatingSystem: 'linux',
  };
}
