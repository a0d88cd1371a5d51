/**
 * Paths and readers for the host's kernel and OS files, rooted at an injectable directory so the
 * same code reads /proc on a node and fixture trees in tests.
 */
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';

/** The subset of statfs(2) the agent uses (fs.promises.statfs shape). */
export interface FsStats {
  bsize: number;
  blocks: number;
  bavail: number;
  files: number;
  ffree: number;
}

export type StatFs = (path: string) => Promise<FsStats>;

export const realStatFs: StatFs = async (p) => {
  const s = await fsp.statfs(p);
  return { bsize: s.bsize, blocks: s.blocks, bavail: s.bavail, files: s.files, ffree: s.ffree };
};

/** A host file path under `hostRoot` ("/" on a real node). */
export function hostPath(hostRoot: string, path: string): string {
  return join(hostRoot, path);
}

/** Reads a text file, or undefined when it does not exist or is not readable. */
export async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await fsp.readFile(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EACCES' || code === 'EPERM' || code === 'ENOTDIR') return undefined;
    throw e;
  }
}

/** Reads a text file that must exist; the error names the path. */
export async function readRequired(path: string): Promise<string> {
  try {
    return await fsp.readFile(path, 'utf8');
  } catch (e) {
    throw new Error(`cannot read ${path}: ${(e as Error).message}`, { cause: e });
  }
}

/** Parses /proc/meminfo into bytes per key ("MemTotal" -> bytes). */
export function parseMeminfo(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^([^:]+):\s+(\d+)(?:\s+kB)?\s*$/.exec(line);
    if (m) out.set(m[1], Number(m[2]) * (line.trimEnd().endsWith('kB') ? 1024 : 1));
  }
  return out;
}

/** Parses an integer file such as /proc/sys/kernel/pid_max; throws naming the path when malformed. */
export function parseIntFile(path: string, text: string): number {
  const n = Number.parseInt(text.trim(), 10);
  if (!Number.isFinite(n)) throw new Error(`malformed ${path}: expected an integer, got ${JSON.stringify(text.trim())}`);
  return n;
}
