/**
 * The agent's root-dir layout (spec Appendix D), created with safe modes. Modes follow the
 * kubelet's setupDataDirs (root, pods, plugins, plugins_registry, pod-resources 0750;
 * checkpoints 0700 because archives hold process memory, spec 4.11). pki and image_manager are
 * 0700 here as they hold private keys and credential-derived pull records. Existing directories
 * that are more open than their mode are tightened (never loosened) and the change is logged.
 */
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import type { Log } from './logger';

export interface LayoutEntry {
  /** Relative to the root dir ('' is the root dir itself). */
  path: string;
  mode: number;
}

export const rootDirLayout: readonly LayoutEntry[] = [
  { path: '', mode: 0o750 },
  { path: 'pods', mode: 0o750 },
  { path: 'plugins', mode: 0o750 },
  { path: 'plugins_registry', mode: 0o750 },
  { path: 'pod-resources', mode: 0o750 },
  { path: 'device-plugins', mode: 0o750 },
  { path: 'checkpoints', mode: 0o700 },
  { path: 'seccomp', mode: 0o750 },
  { path: 'image_manager', mode: 0o700 },
  { path: 'image_manager/pulling', mode: 0o700 },
  { path: 'image_manager/pulled', mode: 0o700 },
];

export const certDirMode = 0o700;

export interface LayoutResult {
  created: string[];
  tightened: { path: string; from: number; to: number }[];
}

const octal = (m: number) => '0' + m.toString(8).padStart(3, '0');

/** Ensures one directory exists with no more permission than `mode`; idempotent. */
async function ensureDir(path: string, mode: number, result: LayoutResult, log?: Log): Promise<void> {
  let st;
  try {
    st = await fsp.stat(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  if (!st) {
    await fsp.mkdir(path, { recursive: true, mode });
    // mkdir's mode is filtered by the umask; set it exactly.
    await fsp.chmod(path, mode);
    result.created.push(path);
    return;
  }
  if (!st.isDirectory()) throw new Error(`${path} exists and is not a directory`);
  const current = st.mode & 0o7777;
  const extra = current & ~mode;
  if (extra !== 0) {
    const to = current & mode;
    await fsp.chmod(path, to);
    result.tightened.push({ path, from: current, to });
    log?.warn({ path, from: octal(current), to: octal(to) }, 'tightened permissions of an agent directory that was too open');
  }
}

/** Creates the root-dir layout and the cert dir; rejects with the fs error (naming the path) on failure. */
export async function ensureRootDirLayout(opts: { rootDir: string; certDir: string; log?: Log }): Promise<LayoutResult> {
  const result: LayoutResult = { created: [], tightened: [] };
  for (const e of rootDirLayout) await ensureDir(join(opts.rootDir, e.path), e.mode, result, opts.log);
  await ensureDir(opts.certDir, certDirMode, result, opts.log);
  if (result.created.length > 0) opts.log?.info({ created: result.created }, 'created agent directories');
  return result;
}
