/**
 * Node pressure from real kernel signals, evaluated against the eviction thresholds
 * (evictionHard and evictionSoft) as the kubelet's eviction manager does for the
 * MemoryPressure, DiskPressure and PIDPressure conditions.
 *
 * Deliberate differences from upstream: memory.available is MemAvailable from /proc/meminfo
 * (upstream: capacity minus the root cgroup's working set), and imagefs/containerfs signals are
 * only evaluated when the caller names the image filesystem's path.
 */
import { isEvictionSignal, parseThresholdValue, thresholdAmount, type EvictionSignal } from '../config/eviction';
import { hostPath, parseIntFile, parseMeminfo, readOptional, readRequired, realStatFs, type StatFs } from './host-fs';

export interface FsObservation {
  availableBytes: number;
  capacityBytes: number;
  inodesFree: number;
  inodes: number;
}

export interface PressureObservation {
  memory: { availableBytes: number; capacityBytes: number };
  nodefs: FsObservation;
  imagefs?: FsObservation;
  pid: { available: number; max: number; running: number };
}

export interface PressureSources {
  hostRoot?: string;
  /** The agent's root dir; its filesystem is nodefs. */
  rootDir: string;
  /** The container runtime's image directory (e.g. /var/lib/containerd); imagefs signals need it. */
  imageFsPath?: string;
  statfs?: StatFs;
}

/** Parses the running-entities count ("1/87" -> 87) from /proc/loadavg, as the kubelet's pid stats do. */
export function parseLoadavgTasks(text: string): number {
  const f = text.trim().split(/\s+/)[3];
  const total = f?.split('/')[1];
  const n = total === undefined ? NaN : Number.parseInt(total, 10);
  if (!Number.isFinite(n)) throw new Error(`malformed loadavg ${JSON.stringify(text.trim())}`);
  return n;
}

async function observeFs(statfs: StatFs, path: string): Promise<FsObservation> {
  const s = await statfs(path);
  return { availableBytes: s.bavail * s.bsize, capacityBytes: s.blocks * s.bsize, inodesFree: s.ffree, inodes: s.files };
}

/** Takes one reading of every pressure signal. Rejects naming the file when a source is unreadable. */
export async function observePressure(src: PressureSources): Promise<PressureObservation> {
  const root = src.hostRoot ?? '/';
  const p = (rel: string) => hostPath(root, rel);
  const statfs = src.statfs ?? realStatFs;

  const mem = parseMeminfo(await readRequired(p('/proc/meminfo')));
  const capacity = mem.get('MemTotal') ?? 0;
  // Kernels before 3.14 lack MemAvailable; free + reclaimable page cache is the classic estimate.
  const available = mem.get('MemAvailable') ?? (mem.get('MemFree') ?? 0) + (mem.get('Buffers') ?? 0) + (mem.get('Cached') ?? 0);

  const pidMaxPath = p('/proc/sys/kernel/pid_max');
  let max = parseIntFile(pidMaxPath, await readRequired(pidMaxPath));
  const threadsMaxPath = p('/proc/sys/kernel/threads-max');
  const threadsMax = await readOptional(threadsMaxPath);
  if (threadsMax !== undefined) max = Math.min(max, parseIntFile(threadsMaxPath, threadsMax));
  const running = parseLoadavgTasks(await readRequired(p('/proc/loadavg')));

  return {
    memory: { availableBytes: available, capacityBytes: capacity },
    nodefs: await observeFs(statfs, src.rootDir),
    imagefs: src.imageFsPath ? await observeFs(statfs, src.imageFsPath) : undefined,
    pid: { available: Math.max(0, max - running), max, running },
  };
}

export interface PressureSignals {
  memory: boolean;
  disk: boolean;
  pid: boolean;
}

export interface CrossedThreshold {
  signal: EvictionSignal;
  /** The threshold as configured ("100Mi", "10%"). */
  threshold: string;
  observed: number;
  limit: number;
  hard: boolean;
}

export interface PressureEvaluation extends PressureSignals {
  crossed: CrossedThreshold[];
}

/** [available, capacity] of a signal, or undefined when it is not observed. */
function signalValue(obs: PressureObservation, signal: EvictionSignal): [number, number] | undefined {
  const fsValue = (fs: FsObservation | undefined, inodes: boolean): [number, number] | undefined =>
    fs && (inodes ? [fs.inodesFree, fs.inodes] : [fs.availableBytes, fs.capacityBytes]);
  switch (signal) {
    case 'memory.available':
      return [obs.memory.availableBytes, obs.memory.capacityBytes];
    case 'nodefs.available':
      return fsValue(obs.nodefs, false);
    case 'nodefs.inodesFree':
      return fsValue(obs.nodefs, true);
    case 'imagefs.available':
    case 'containerfs.available':
      return fsValue(obs.imagefs, false);
    case 'imagefs.inodesFree':
    case 'containerfs.inodesFree':
      return fsValue(obs.imagefs, true);
    case 'pid.available':
      return [obs.pid.available, obs.pid.max];
  }
}

const conditionOf: Record<EvictionSignal, keyof PressureSignals> = {
  'memory.available': 'memory',
  'nodefs.available': 'disk',
  'nodefs.inodesFree': 'disk',
  'imagefs.available': 'disk',
  'imagefs.inodesFree': 'disk',
  'containerfs.available': 'disk',
  'containerfs.inodesFree': 'disk',
  'pid.available': 'pid',
};

/**
 * Which pressures the observation shows. A threshold is met when the available amount is below it;
 * soft thresholds count for conditions before their grace period ends, as upstream. Thresholds must
 * already be validated (they come from a loaded config).
 */
export function evaluatePressure(obs: PressureObservation, thresholds: { evictionHard: Record<string, string>; evictionSoft?: Record<string, string> }): PressureEvaluation {
  const out: PressureEvaluation = { memory: false, disk: false, pid: false, crossed: [] };
  const check = (map: Record<string, string>, hard: boolean) => {
    for (const [signal, text] of Object.entries(map)) {
      if (!isEvictionSignal(signal)) continue;
      const v = signalValue(obs, signal);
      if (!v) continue;
      const limit = thresholdAmount(parseThresholdValue(text), v[1]);
      if (v[0] < limit) {
        out[conditionOf[signal]] = true;
        out.crossed.push({ signal, threshold: text, observed: v[0], limit, hard });
      }
    }
  };
  check(thresholds.evictionHard, true);
  check(thresholds.evictionSoft ?? {}, false);
  return out;
}

/**
 * Keeps a pressure condition reported until evictionPressureTransitionPeriod has passed since the
 * signal was last seen, so conditions do not flap (upstream: nodeConditionsObservedSince).
 */
export class PressureTracker {
  private readonly lastSeen: Partial<Record<keyof PressureSignals, number>> = {};
  constructor(private readonly opts: { now: () => number; transitionPeriodMs: number }) {}

  /** Records one evaluation and returns the pressures to report now. */
  update(signals: PressureSignals): PressureSignals {
    const now = this.opts.now();
    const out: PressureSignals = { memory: false, disk: false, pid: false };
    for (const k of ['memory', 'disk', 'pid'] as const) {
      if (signals[k]) this.lastSeen[k] = now;
      const seen = this.lastSeen[k];
      out[k] = seen !== undefined && now - seen < this.opts.transitionPeriodMs ? true : signals[k];
    }
    return out;
  }
}

export interface PressureCondition {
  type: 'MemoryPressure' | 'DiskPressure' | 'PIDPressure';
  status: 'True' | 'False';
  reason: string;
  message: string;
}

/** Node conditions for the reported pressures; reasons keep upstream's strings, which tools match on. */
export function pressureConditions(s: PressureSignals): PressureCondition[] {
  return [
    s.memory
      ? { type: 'MemoryPressure', status: 'True', reason: 'KubeletHasInsufficientMemory', message: 'svc-node has insufficient memory available' }
      : { type: 'MemoryPressure', status: 'False', reason: 'KubeletHasSufficientMemory', message: 'svc-node has sufficient memory available' },
    s.disk
      ? { type: 'DiskPressure', status: 'True', reason: 'KubeletHasDiskPressure', message: 'svc-node has disk pressure' }
      : { type: 'DiskPressure', status: 'False', reason: 'KubeletHasNoDiskPressure', message: 'svc-node has no disk pressure' },
    s.pid
      ? { type: 'PIDPressure', status: 'True', reason: 'KubeletHasInsufficientPID', message: 'svc-node has insufficient PID available' }
      : { type: 'PIDPressure', status: 'False', reason: 'KubeletHasSufficientPID', message: 'svc-node has sufficient PID available' },
  ];
}
