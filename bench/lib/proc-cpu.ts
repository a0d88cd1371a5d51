import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { procMemMb, procName } from './proc-stats';

let ticks: number | undefined;

/** Kernel clock ticks per second (the unit of utime/stime in /proc/<pid>/stat); `getconf CLK_TCK`, else the usual 100. */
export function clockTicksPerSecond(): number {
  if (ticks === undefined) {
    try {
      ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
}

/** The fields of /proc/<pid>/stat from field 3 (state) on: rest[11..14] are fields 14-17, utime, stime, cutime, cstime. */
function statFields(pid: number): string[] {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces or parentheses: fields are counted after the last ')'.
  return text.slice(text.lastIndexOf(')') + 2).split(' ');
}

/** CPU seconds a process has used so far, user + system (utime + stime of /proc/<pid>/stat), its own threads only. */
export function procCpuSeconds(pid: number): number {
  const rest = statFields(pid);
  return (Number(rest[11]) + Number(rest[12])) / clockTicksPerSecond();
}

/**
 * CPU seconds a process and its children that have exited and were waited for have used (utime,
 * stime, cutime and cstime of /proc/<pid>/stat; clock-tick precision): for a runtime whose work
 * runs in short-lived children, as runc's under containerd's shim.
 */
export function procWithChildrenCpuSeconds(pid: number): number {
  const rest = statFields(pid);
  return (Number(rest[11]) + Number(rest[12]) + Number(rest[13]) + Number(rest[14])) / clockTicksPerSecond();
}

/**
 * CPU seconds a process has used so far, to the nanosecond where the kernel tells it: the sum of
 * sum_exec_runtime (the first field of /proc/<pid>/task/<tid>/schedstat) over its live threads.
 * /proc/<pid>/stat counts in clock ticks (10 ms at 100 Hz), which is a few percent of a part of a
 * few hundred milliseconds; this is not. Threads that exited meanwhile are not counted (a server's
 * threads live as long as it does). Falls back to procCpuSeconds where schedstat is missing.
 */
export function procCpuPrecise(pid: number): number {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return procCpuSeconds(pid);
  }
  let ns = 0;
  for (const tid of tids) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // the thread exited between the listing and the read
    }
  }
  return Number.isFinite(ns) && ns > 0 ? ns / 1e9 : procCpuSeconds(pid);
}

/**
 * The node process behind pid: pid itself when it is node, else its first child that is node
 * (a `sh` launcher that did not exec). Throws when there is none.
 */
export function nodePidBehind(pid: number): number {
  if (procName(pid) === 'node') return pid;
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  const child = children.find((c) => procName(c) === 'node');
  if (child === undefined) throw new Error(`pid ${pid} (${procName(pid)}) is not node and has no node child`);
  return child;
}

/** One process's figures over a sampling window. */
export interface ProcWindow {
  pid: number;
  seconds: number;
  /** CPU used in the window as a percentage of one core. */
  cpu_percent_of_core: number;
  cpu_seconds: number;
  rss_mb: { min: number; mean: number; max: number; last: number };
  /** VmHWM at the end of the window: the highest RSS since the process started. */
  peak_rss_mb: number;
}

/** Tracks CPU and RSS of several processes over the same window; `sample()` once per tick, `finish()` at the end. */
export class ProcSampler {
  private readonly start = new Map<number, number>();
  private readonly rss = new Map<number, number[]>();
  private readonly t0 = performance.now();

  constructor(private readonly pids: readonly number[]) {
    for (const p of pids) {
      this.start.set(p, procCpuSeconds(p));
      this.rss.set(p, [procMemMb(p, 'VmRSS')]);
    }
  }

  /** Records every process's VmRSS now. */
  sample(): void {
    for (const p of this.pids) this.rss.get(p)!.push(procMemMb(p, 'VmRSS'));
  }

  /** Ends the window: CPU over its whole length, RSS statistics over the samples. */
  finish(): Map<number, ProcWindow> {
    this.sample();
    const seconds = (performance.now() - this.t0) / 1000;
    const out = new Map<number, ProcWindow>();
    for (const p of this.pids) {
      const cpu = procCpuSeconds(p) - this.start.get(p)!;
      const r = this.rss.get(p)!;
      const r2 = (x: number) => Math.round(x * 10) / 10;
      out.set(p, {
        pid: p,
        seconds: Math.round(seconds * 10) / 10,
        cpu_percent_of_core: Math.round((cpu / seconds) * 100 * 1000) / 1000,
        cpu_seconds: Math.round(cpu * 100) / 100,
        rss_mb: { min: r2(Math.min(...r)), mean: r2(r.reduce((a, b) => a + b, 0) / r.length), max: r2(Math.max(...r)), last: r2(r[r.length - 1]) },
        peak_rss_mb: r2(procMemMb(p, 'VmHWM')),
      });
    }
    return out;
  }
}
