/**
 * `tar` for the simulator's exec, enough for `kubectl cp` both ways: `tar cf - [-C dir] PATH...`
 * writes the named files (what the container can read, plus what earlier copies wrote) as a ustar
 * archive on stdout; `tar xf - [-C dir]` (any of kubectl's extra flags) reads one from stdin and
 * keeps its regular files in the container's written-files map. Nothing else of tar.
 */
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { tarArchive, type TarEntry } from './sim-tar';

export interface SimTarContext {
  stdin?: Readable;
  stdout?: Writable;
  stderr?: Writable;
  /** Reads a file as the container sees it. */
  readFile(p: string): Promise<Buffer>;
  /** Files written into the container by earlier execs (absolute path → bytes). */
  written: Map<string, Buffer>;
  now(): number;
}

const WRITTEN_LIMIT = 16 * 1024 * 1024;

function parseArgs(args: readonly string[]): { mode?: 'c' | 'x'; dir: string; files: string[] } {
  let mode: 'c' | 'x' | undefined;
  let dir = '/';
  const files: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '-C') dir = args[++i] ?? '/';
    else if (a.startsWith('--')) continue;
    else if (i === 0 || a.startsWith('-')) {
      if (a.includes('c')) mode = 'c';
      if (a.includes('x')) mode = 'x';
    } else if (a !== '-') files.push(a);
  }
  return { ...(mode ? { mode } : {}), dir, files };
}

function write(w: Writable | undefined, data: Buffer | string): Promise<void> {
  if (!w || w.destroyed || w.writableEnded) return Promise.resolve();
  return new Promise((resolve) => w.write(data, () => resolve()));
}

function octalField(b: Buffer, at: number, len: number): number {
  const s = b.toString('ascii', at, at + len).replace(/\0.*$/s, '').trim();
  return s === '' ? 0 : parseInt(s, 8);
}

/** The regular files of a ustar archive (name with the prefix field, contents). */
export function untar(archive: Buffer): { name: string; data: Buffer }[] {
  const out: { name: string; data: Buffer }[] = [];
  for (let at = 0; at + 512 <= archive.length; ) {
    const h = archive.subarray(at, at + 512);
    if (h.every((b) => b === 0)) break;
    const name = h.toString('utf8', 0, 100).replace(/\0.*$/s, '');
    const prefix = h.toString('ascii', 257, 262) === 'ustar' ? h.toString('utf8', 345, 500).replace(/\0.*$/s, '') : '';
    const size = octalField(h, 124, 12);
    const type = String.fromCharCode(h[156] ?? 0);
    const data = archive.subarray(at + 512, at + 512 + size);
    if (type === '0' || type === '\0') out.push({ name: prefix ? `${prefix}/${name}` : name, data: Buffer.from(data) });
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}

/** Runs tar; resolves its exit code. */
export async function runTar(args: readonly string[], ctx: SimTarContext): Promise<number> {
  const { mode, dir, files } = parseArgs(args);
  if (mode === 'x') {
    const parts: Buffer[] = [];
    let size = [...ctx.written.values()].reduce((n, b) => n + b.length, 0);
    if (ctx.stdin) {
      for await (const c of ctx.stdin) {
        size += (c as Buffer).length;
        // The simulator keeps copies in memory: a container holds at most 16 MiB of them.
        if (size > WRITTEN_LIMIT) {
          await write(ctx.stderr ?? ctx.stdout, 'tar: write error: No space left on device\n');
          return 2;
        }
        parts.push(c as Buffer);
      }
    }
    for (const f of untar(Buffer.concat(parts))) ctx.written.set(path.posix.resolve(dir, f.name), f.data);
    return 0;
  }
  if (mode !== 'c') {
    await write(ctx.stderr ?? ctx.stdout, 'tar: the simulator runs only "tar cf -" and "tar xf -"\n');
    return 2;
  }
  const entries: TarEntry[] = [];
  const mtime = Math.floor(ctx.now() / 1000);
  for (const f of files) {
    const abs = path.posix.resolve(dir, f);
    const below = [...ctx.written.keys()].filter((k) => k === abs || k.startsWith(abs.replace(/\/$/, '') + '/'));
    if (below.length > 0) {
      for (const k of below) entries.push({ name: path.posix.relative(dir, k) || path.posix.basename(k), data: ctx.written.get(k)!, mtime, mode: 0o644 });
      continue;
    }
    try {
      entries.push({ name: path.posix.relative(dir, abs) || path.posix.basename(abs), data: await ctx.readFile(abs), mtime, mode: 0o644 });
    } catch {
      await write(ctx.stderr ?? ctx.stdout, `tar: ${f}: Cannot stat: No such file or directory\n`);
      return 2;
    }
  }
  await write(ctx.stdout, tarArchive(entries));
  return 0;
}
