/**
 * A pod's volume usage for the Summary API, as the kubelet's volume stats (its `du` and statfs
 * calculators): for each volume directory under <root-dir>/pods/<uid>/volumes/<plugin>/<name>,
 * the bytes and inodes used below it (allocated blocks, as du) with the capacity, free bytes and
 * inodes of the filesystem holding it. Volumes that live elsewhere (hostPath, a claim's local
 * path) have no directory there and are not reported (upstream reports no hostPath stats either).
 * Ephemeral volumes (emptyDir, configMap, secret, downwardAPI, projected: the plugin names
 * agent/pod/volumes.ts writes) count in the pod's ephemeral storage, as upstream's.
 */
import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { StatFs } from '../platform/host-fs';
import { fsStatsOf } from './node-reader';
import type { FsStats } from './types';

/** Plugin directory names of ephemeral volumes (agent/pod/volumes.ts PLUGIN_*). */
const EPHEMERAL_PLUGINS = new Set(['svc.io~empty-dir', 'svc.io~configmap', 'svc.io~secret', 'svc.io~downward-api', 'svc.io~projected']);

/** Entries a walk visits at most per volume: a bound on one summary's work (the rest is not counted). */
export const MAX_WALK_ENTRIES = 100_000;

export type VolumeStats = FsStats & { name: string };

/** Bytes (allocated blocks, as du) and inodes under dir, itself included; at most `budget.left` entries. */
async function usage(dir: string, budget: { left: number }): Promise<{ bytes: number; inodes: number }> {
  const st = await lstat(dir);
  let bytes = st.blocks * 512;
  let inodes = 1;
  budget.left--;
  if (!st.isDirectory()) return { bytes, inodes };
  const queue = [dir];
  while (queue.length > 0 && budget.left > 0) {
    const d = queue.pop()!;
    let names: string[];
    try {
      names = await readdir(d);
    } catch {
      continue;
    }
    for (const n of names) {
      if (budget.left-- <= 0) break;
      try {
        const s = await lstat(path.join(d, n));
        bytes += s.blocks * 512;
        inodes++;
        if (s.isDirectory()) queue.push(path.join(d, n));
      } catch {
        // removed while we walked
      }
    }
  }
  return { bytes, inodes };
}

/** The pod's volumes (by name, sorted) and the part of them that is ephemeral storage. */
export async function podVolumeStats(podsDir: string, uid: string, statfs: StatFs, time: string): Promise<{ volumes: VolumeStats[]; ephemeral: { usedBytes: number; inodesUsed: number } }> {
  const root = path.join(podsDir, uid, 'volumes');
  const volumes: VolumeStats[] = [];
  const ephemeral = { usedBytes: 0, inodesUsed: 0 };
  let plugins: string[];
  try {
    plugins = await readdir(root);
  } catch {
    return { volumes, ephemeral };
  }
  for (const plugin of plugins.sort()) {
    let names: string[];
    try {
      names = await readdir(path.join(root, plugin));
    } catch {
      continue;
    }
    for (const name of names.sort()) {
      const dir = path.join(root, plugin, name);
      try {
        const u = await usage(dir, { left: MAX_WALK_ENTRIES });
        const fs = await fsStatsOf(statfs, dir, time);
        const { usedBytes: _u, inodesUsed: _i, ...capacity } = fs ?? { time };
        volumes.push({ ...capacity, time, usedBytes: u.bytes, inodesUsed: u.inodes, name });
        if (EPHEMERAL_PLUGINS.has(plugin)) {
          ephemeral.usedBytes += u.bytes;
          ephemeral.inodesUsed += u.inodes;
        }
      } catch {
        // the volume went away (the pod is being torn down)
      }
    }
  }
  volumes.sort((a, b) => a.name.localeCompare(b.name));
  return { volumes, ephemeral };
}
