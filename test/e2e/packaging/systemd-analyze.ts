/**
 * Runs `systemd-analyze verify` on unit files the way it can run on a machine where systemd is
 * not PID 1: against a scratch root holding this machine's own units (so the targets our units
 * name resolve) plus ours, and the files our ExecStart= lines name. verify checks that those
 * exist and are executable inside the root, so nothing has to be faked in /usr/bin.
 */
import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';

export interface VerifyInput {
  /** Unit files to install into the root's /lib/systemd/system and verify. */
  units: string[];
  /** Path inside the root (e.g. /usr/bin/svc-node) -> file to copy there (mode 0755). */
  executables: Record<string, string>;
  /** MANPATH for the man: checks of Documentation=; without it those checks are turned off (--man=no). */
  manPath?: string;
}

export interface VerifyResult {
  code: number;
  /** stdout and stderr together: systemd-analyze prints problems on either. */
  output: string;
}

/** Fails with an install hint when systemd-analyze is missing. */
export function requireSystemdAnalyze(): string {
  for (const p of ['/usr/bin/systemd-analyze', '/bin/systemd-analyze']) if (existsSync(p)) return p;
  throw new Error('systemd-analyze is not installed: apt-get install -y systemd (.ci/run installs it)');
}

/** Copies a directory tree, keeping symlinks as they are (masked units point at /dev/null). */
function copyTree(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const name of readdirSync(from)) {
    const src = join(from, name);
    const dst = join(to, name);
    const st = lstatSync(src);
    if (lstatExists(dst)) continue;
    if (st.isSymbolicLink()) symlinkSync(readlinkSync(src), dst);
    else if (st.isDirectory()) copyTree(src, dst);
    else if (st.isFile()) copyFileSync(src, dst);
  }
}

function lstatExists(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/** Runs systemd-analyze verify on `input.units`; resolves with its exit code and output. */
export async function verifyUnits(input: VerifyInput): Promise<VerifyResult> {
  const bin = requireSystemdAnalyze();
  const root = mkdtempSync(join(tmpdir(), 'svc-verify-'));
  try {
    const unitDir = join(root, 'lib', 'systemd', 'system');
    mkdirSync(unitDir, { recursive: true });
    // The host's units, so network-online.target, multi-user.target, sysinit.target... exist.
    const seen = new Set<string>();
    for (const dir of ['/lib/systemd/system', '/usr/lib/systemd/system']) {
      if (!existsSync(dir) || seen.has(realpathSync(dir))) continue;
      seen.add(realpathSync(dir));
      copyTree(dir, unitDir);
    }
    for (const u of input.units) copyFileSync(u, join(unitDir, basename(u)));
    for (const [inRoot, from] of Object.entries(input.executables)) {
      const to = join(root, inRoot);
      mkdirSync(dirname(to), { recursive: true });
      copyFileSync(from, to);
      chmodSync(to, 0o755);
    }
    const args = ['verify', `--root=${root}`, ...(input.manPath ? [] : ['--man=no']), ...input.units.map((u) => basename(u))];
    const env = { ...process.env, ...(input.manPath ? { MANPATH: input.manPath } : {}) };
    return await new Promise<VerifyResult>((resolve) => {
      execFile(bin, args, { env, encoding: 'utf8' }, (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, output: (stdout + stderr).trim() });
      });
    });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
