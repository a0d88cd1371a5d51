/**
 * The cgroup parent of each pod and its removal. Runtimes create the parent when the first
 * container of a pod starts and remove only their containers' own cgroups, so the pod's
 * directory stays behind; the agent removes it once the pod is gone (upstream's pod container
 * manager does the same), and removes pod directories of pods it no longer knows at housekeeping.
 *
 * cgroupfs: <root>/pod<uid> in every mounted hierarchy (v1) or the unified tree (v2). systemd:
 * the slice svc_node-pod<uid with '_' for '-'>.slice, which systemd removes itself once empty.
 * Only empty directories are removed (rmdir), so a pod cgroup still holding a process is never
 * touched, whoever owns it.
 */
import { existsSync } from 'node:fs';
import { readdir, rmdir } from 'node:fs/promises';
import path from 'node:path';

export interface PodCgroupsOptions {
  driver: 'cgroupfs' | 'systemd';
  /** Parent of all pod cgroups for cgroupfs ("/svc-node"). */
  root: string;
  /** Where cgroup filesystems are mounted (default /sys/fs/cgroup). */
  fsRoot?: string;
  /** false: never touch the host's cgroups (the simulated runtime creates none). Default true. */
  clean?: boolean;
}

const PREFIX = 'pod';

export class PodCgroups {
  private readonly fsRoot: string;

  constructor(private readonly o: PodCgroupsOptions) {
    this.fsRoot = o.fsRoot ?? '/sys/fs/cgroup';
  }

  /** The CRI cgroup_parent for the pod's sandbox. */
  parentFor(uid: string): string {
    if (this.o.driver === 'systemd') return `svc_node-pod${uid.replace(/-/g, '_')}.slice`;
    return path.posix.join(this.o.root, `${PREFIX}${uid}`);
  }

  /** Directories holding the pod roots: one per v1 hierarchy, or the unified tree. */
  private async hierarchies(): Promise<string[]> {
    if (existsSync(path.join(this.fsRoot, 'cgroup.controllers'))) return [this.fsRoot];
    let entries: import('node:fs').Dirent[];
    try {
      entries = await readdir(this.fsRoot, { withFileTypes: true });
    } catch {
      return [];
    }
    return entries.filter((e) => e.isDirectory() || e.isSymbolicLink()).map((e) => path.join(this.fsRoot, e.name));
  }

  /** Removes the pod's (empty) cgroup directories, deepest first. Resolves the directories it could not remove. Never rejects. */
  async remove(uid: string): Promise<string[]> {
    if (this.o.driver !== 'cgroupfs' || this.o.clean === false) return [];
    const left: string[] = [];
    for (const h of await this.hierarchies()) {
      const dir = path.join(h, this.parentFor(uid));
      if (!existsSync(dir)) continue;
      for (const d of await subtree(dir)) {
        try {
          await rmdir(d);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'ENOENT') left.push(d);
        }
      }
    }
    return left;
  }

  /** UIDs that have a pod cgroup directory under the root in any hierarchy. */
  async podUids(): Promise<string[]> {
    if (this.o.driver !== 'cgroupfs' || this.o.clean === false) return [];
    const out = new Set<string>();
    for (const h of await this.hierarchies()) {
      let names: string[];
      try {
        names = await readdir(path.join(h, this.o.root));
      } catch {
        continue;
      }
      for (const n of names) if (n.startsWith(PREFIX) && n.length > PREFIX.length) out.add(n.slice(PREFIX.length));
    }
    return [...out];
  }
}

/** dir and every directory below it, deepest first. */
async function subtree(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) if (e.isDirectory()) await walk(path.join(d, e.name));
    out.push(d);
  };
  await walk(dir);
  return out;
}
