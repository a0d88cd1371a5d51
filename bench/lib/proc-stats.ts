import { readFileSync } from 'node:fs';

/** One field of /proc/<pid>/status in MiB (VmRSS: resident now; VmHWM: peak resident). */
export function procMemMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
  if (!m) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(m[1]) / 1024;
}

/** The executable name of a process (/proc/<pid>/comm), to check that a launcher exec'd the real server. */
export function procName(pid: number): string {
  return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
}

/** This process's soft limit on open files (children inherit it), or null when unlimited or unknown. */
export function openFilesLimit(): number | null {
  try {
    const m = /^Max open files\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return m && m[1] !== 'unlimited' ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** The filesystem type holding path (from /proc/mounts, longest matching mount point), e.g. "ext4" or "tmpfs". */
export function filesystemOf(path: string): string {
  try {
    let best = { mount: '', type: 'unknown' };
    for (const line of readFileSync('/proc/mounts', 'utf8').split('\n')) {
      const [, mount, type] = line.split(' ');
      if (!mount || !type) continue;
      const inside = path === mount || path.startsWith(mount.endsWith('/') ? mount : `${mount}/`);
      if (inside && mount.length >= best.mount.length) best = { mount, type };
    }
    return best.type;
  } catch {
    return 'unknown';
  }
}
