/**
 * Installs packages into a scratch root instead of the machine: dpkg --root=DIR with
 * --force-script-chrootless runs the maintainer scripts as they are, with DPKG_ROOT=DIR, which
 * they honour (every path under DIR, systemd left alone). The machine running the tests is never
 * changed, so the same test runs on a developer's machine and in CI. dpkg needs root for this
 * (it chowns what it unpacks). --force-depends: the scratch root's dpkg database knows none of
 * the machine's packages (nodejs, libc6...), which the programs still use from the host.
 */
import { execFile } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a program; resolves with its exit code and output (never rejects for a non-zero exit). */
export function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') {
        const e: Error = err; // an ExecFileException is an Error
        return reject(e);
      }
      resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
    });
  });
}

/** Runs a program and rejects, with its output, unless it exits 0. */
export async function runOk(cmd: string, args: string[], env?: NodeJS.ProcessEnv): Promise<RunResult> {
  const r = await run(cmd, args, env);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.code}:\n${r.stdout}${r.stderr}`);
  return r;
}

/** An empty root with a dpkg database. */
export function makeScratchRoot(parent: string = tmpdir()): string {
  const root = mkdtempSync(join(parent, 'svc-root-'));
  for (const d of ['var/lib/dpkg/info', 'var/lib/dpkg/updates', 'etc']) mkdirSync(join(root, d), { recursive: true });
  writeFileSync(join(root, 'var/lib/dpkg/status'), '');
  return root;
}

const dpkgArgs = (root: string) => [`--root=${root}`, '--force-script-chrootless', '--force-depends', '--log=/dev/null'];

/** dpkg -i into the root; extra args (e.g. --force-confold) come before the file. */
export function dpkgInstall(root: string, deb: string, extra: string[] = [], env?: NodeJS.ProcessEnv): Promise<RunResult> {
  return runOk('dpkg', [...dpkgArgs(root), ...extra, '-i', deb], env);
}

/** dpkg -r (remove, configuration kept) in the root. */
export function dpkgRemove(root: string, pkg: string, env?: NodeJS.ProcessEnv): Promise<RunResult> {
  return runOk('dpkg', [...dpkgArgs(root), '-r', pkg], env);
}

/** dpkg -P (purge) in the root. */
export function dpkgPurge(root: string, pkg: string, env?: NodeJS.ProcessEnv): Promise<RunResult> {
  return runOk('dpkg', [...dpkgArgs(root), '-P', pkg], env);
}

/** The status paragraph of `pkg` in the root's dpkg database, as fields; undefined when absent. */
export function dpkgStatus(root: string, pkg: string): Record<string, string> | undefined {
  const text = readFileSync(join(root, 'var/lib/dpkg/status'), 'utf8');
  for (const para of text.split(/\n\n+/)) {
    const fields: Record<string, string> = {};
    let last = '';
    for (const line of para.split('\n')) {
      if (/^\s/.test(line) && last) fields[last] += '\n' + line.trim();
      else {
        const i = line.indexOf(':');
        if (i > 0) {
          last = line.slice(0, i);
          fields[last] = line.slice(i + 1).trim();
        }
      }
    }
    if (fields['Package'] === pkg) return fields;
  }
  return undefined;
}

/** Every path under `root` (relative, '/'-separated), with its type and permission bits. */
export function listTree(root: string, skip: (rel: string) => boolean = () => false): Map<string, { type: 'dir' | 'file' | 'link'; mode: number; uid: number; gid: number }> {
  const out = new Map<string, { type: 'dir' | 'file' | 'link'; mode: number; uid: number; gid: number }>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      const rel = relative(root, p);
      if (skip(rel)) continue;
      const st = lstatSync(p);
      const type = st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'link' : 'file';
      out.set(rel, { type, mode: st.mode & 0o7777, uid: st.uid, gid: st.gid });
      if (type === 'dir') walk(p);
    }
  };
  walk(root);
  return out;
}
