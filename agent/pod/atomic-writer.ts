/**
 * Writes a set of files into a directory so that a reader sees either the old set or the new one,
 * never a mix, as upstream's AtomicWriter does for configMap and secret volumes: the files live
 * in a hidden timestamped directory, `..data` is a symlink to it, and each visible top-level
 * entry is a symlink through `..data`. Swapping the `..data` link (rename over it) switches every
 * file at once, and running containers see it because they bind-mount the stable directory.
 */
import { createHash } from 'node:crypto';
import { chmod, chown, mkdir, readdir, readFile, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';

export interface FileToWrite {
  /** Relative path; may contain subdirectories, never `..` or an absolute path. */
  path: string;
  data: Buffer;
  mode: number;
  /** Owner and group to give the file (we run as root); absent: left as created (root). */
  uid?: number;
  gid?: number;
}

const DATA_LINK = '..data';
const HASH_FILE = '..hash';

/** Throws Error when a relative path could leave the directory or collide with the writer's own names. */
export function checkRelativePath(p: string): void {
  if (p === '' || path.isAbsolute(p)) throw new Error(`invalid path ${JSON.stringify(p)}: must be a relative path`);
  const parts = p.split('/');
  if (parts.some((x) => x === '..' || x === '' || x === '.')) throw new Error(`invalid path ${JSON.stringify(p)}: must not contain '..' or empty elements`);
  if (parts[0]?.startsWith('..')) throw new Error(`invalid path ${JSON.stringify(p)}: must not start with '..'`);
}

function digest(files: FileToWrite[]): string {
  const h = createHash('sha256');
  for (const f of [...files].sort((a, b) => (a.path < b.path ? -1 : 1))) h.update(`${f.path}\0${f.mode}\0${f.uid ?? ''}\0${f.gid ?? ''}\0`).update(f.data).update('\0');
  return h.digest('hex');
}

/**
 * Makes `dir` hold exactly `files`. Resolves true when something changed. Idempotent; rejects
 * with the fs error on failure (the previous set stays visible).
 */
export async function writeAtomically(dir: string, files: FileToWrite[], now: () => number = Date.now): Promise<boolean> {
  for (const f of files) checkRelativePath(f.path);
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const want = digest(files);
  const have = await readFile(path.join(dir, HASH_FILE), 'utf8').catch(() => '');
  if (have === want) return false;

  let old: string | undefined;
  try {
    old = await readlink(path.join(dir, DATA_LINK));
  } catch {
    old = undefined;
  }
  const stamp = `..${new Date(now()).toISOString().replace(/[:.]/g, '_')}_${want.slice(0, 8)}`;
  const dataDir = path.join(dir, stamp);
  await rm(dataDir, { recursive: true, force: true });
  await mkdir(dataDir, { mode: 0o755 });
  for (const f of files) {
    const target = path.join(dataDir, f.path);
    await mkdir(path.dirname(target), { recursive: true, mode: 0o755 });
    await writeFile(target, f.data, { mode: f.mode });
    // writeFile's mode is filtered by the umask; the volume's mode must be exact.
    await chmod(target, f.mode);
    if (f.uid !== undefined || f.gid !== undefined) await chown(target, f.uid ?? -1, f.gid ?? -1);
  }
  const tmpLink = path.join(dir, '..data_tmp');
  await rm(tmpLink, { force: true });
  await symlink(stamp, tmpLink);
  await rename(tmpLink, path.join(dir, DATA_LINK));

  // Visible names: one symlink per top-level element, through ..data.
  const top = new Set(files.map((f) => f.path.split('/')[0] ?? ''));
  for (const name of top) {
    const link = path.join(dir, name);
    const target = path.join(DATA_LINK, name);
    const current = await readlink(link).catch(() => undefined);
    if (current !== target) {
      await rm(link, { recursive: true, force: true });
      await symlink(target, link);
    }
  }
  for (const entry of await readdir(dir)) {
    if (entry.startsWith('..') || top.has(entry)) continue;
    await rm(path.join(dir, entry), { recursive: true, force: true });
  }
  if (old && old !== stamp) await rm(path.join(dir, old), { recursive: true, force: true });
  await writeFile(path.join(dir, HASH_FILE), want, { mode: 0o600 });
  return true;
}
