/**
 * The names of a container log's rotated files, as upstream's kubelet gives them: the runtime
 * writes the live file <log>; rotation renames it to <log>.<YYYYMMDD-HHMMSS>, and compression
 * later turns that into <log>.<YYYYMMDD-HHMMSS>.gz. The stamp is fixed-width, so sorting the
 * names sorts the files oldest first. Upstream formats the stamp in the node's local zone; here it
 * is always UTC, so the order holds across time-zone and daylight-saving changes.
 *
 * Two kinds of leftovers come from a rotation cut short: <name>.tmp (compression output not yet
 * renamed into place) and an uncompressed <name> next to its finished <name>.gz (the original not
 * yet removed). Neither is a log anyone needs.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';

export const COMPRESSED_SUFFIX = '.gz';
export const TMP_SUFFIX = '.tmp';

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** YYYYMMDD-HHMMSS of the instant (ms since the epoch), in UTC. */
export function rotationStamp(ms: number): string {
  const d = new Date(ms);
  return `${pad(d.getUTCFullYear(), 4)}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}-${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}`;
}

/** The name the live log gets when it is rotated at `ms`. */
export function rotatedName(log: string, ms: number): string {
  return `${log}.${rotationStamp(ms)}`;
}

/** Every file named <log>.* (rotated, compressed or left over), full paths, sorted by name. */
export async function listRotatedFiles(log: string): Promise<string[]> {
  const dir = path.dirname(log);
  const prefix = `${path.basename(log)}.`;
  const names = await readdir(dir);
  // Plain code-unit order, as upstream's byte-wise sort (never locale order).
  return names
    .filter((n) => n.startsWith(prefix) && n.length > prefix.length)
    .map((n) => path.join(dir, n))
    .sort();
}

/** Splits files into those in use and the leftovers of an interrupted rotation; order is kept. */
export function splitLeftovers(files: readonly string[]): { inUse: string[]; leftovers: string[] } {
  const all = new Set(files);
  const inUse: string[] = [];
  const leftovers: string[] = [];
  for (const f of files) {
    const leftover = f.endsWith(TMP_SUFFIX) || (!f.endsWith(COMPRESSED_SUFFIX) && all.has(f + COMPRESSED_SUFFIX));
    (leftover ? leftovers : inUse).push(f);
  }
  return { inUse, leftovers };
}

/**
 * The oldest rotated files to remove before the next rotation. The live file and the one about to
 * be rotated count toward maxFiles, so at most maxFiles - 2 older rotated files may stay.
 */
export function excessFiles(rotated: readonly string[], maxFiles: number): string[] {
  const keep = Math.max(0, maxFiles - 2);
  return [...rotated].sort().slice(0, Math.max(0, rotated.length - keep));
}
