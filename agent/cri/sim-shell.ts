/**
 * What an exec runs inside a simulated container: a small built-in command set, enough for tests
 * and demos (documented in docs/simulator.md as such), not a shell:
 * echo [-n], cat [files] (stdin without files), env / printenv [NAME], hostname, sleep N,
 * true, false, exit N, stty size (the last terminal size the client sent, "rows cols"),
 * tar cf/xf for `kubectl cp` (./sim-tar-command.ts; files it extracts are read back by cat and tar), and sh/bash (`-c "line"`, or lines read from stdin) where a line is
 * commands joined by `;`, `&&` and `||`, words split on blanks with '' and "" quoting. Files are
 * the container's mounts (host paths behind their container paths) and /etc/hostname.
 * Anything else is "not found" (127), as in a shell.
 */
import type { Readable, Writable } from 'node:stream';
import { runTar } from './sim-tar-command';

export interface SimShellContext {
  stdin?: Readable;
  stdout?: Writable;
  stderr?: Writable;
  env: Record<string, string>;
  /** Reads a file as the container sees it; rejects with a message when there is none. */
  readFile(path: string): Promise<Buffer>;
  /** Waits ms; false when the exec was ended first. */
  sleep(ms: number): Promise<boolean>;
  /** Aborted when the client went away. */
  signal: AbortSignal;
  /** Files written into the container by earlier execs (tar x), absolute path → bytes. */
  written?: Map<string, Buffer>;
  /** Milliseconds since the epoch (archive times). */
  now?: () => number;
  /** The terminal's size as last resized by the client (tty sessions). */
  terminalSize?: () => { width: number; height: number } | undefined;
  /** stdin is a terminal: ^D (EOT) ends the interactive shell's input, as a terminal's line discipline makes it. */
  tty?: boolean;
}

/** Splits a line into words, honouring '' and "" quotes and backslash escapes outside single quotes. */
export function words(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let has = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"' && i + 1 < line.length) cur += line[++i];
      else cur += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      has = true;
    } else if (c === '\\' && i + 1 < line.length) {
      cur += line[++i];
      has = true;
    } else if (/\s/.test(c)) {
      if (has) out.push(cur);
      cur = '';
      has = false;
    } else {
      cur += c;
      has = true;
    }
  }
  if (has) out.push(cur);
  return out;
}

/** Splits a line into commands and the operators before each (`;` first). Operators inside quotes are kept. */
function commands(line: string): { op: ';' | '&&' | '||'; text: string }[] {
  const out: { op: ';' | '&&' | '||'; text: string }[] = [];
  let op: ';' | '&&' | '||' = ';';
  let cur = '';
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = undefined;
      cur += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      cur += c;
    } else if (c === ';' || c === '\n' || ((c === '&' || c === '|') && line[i + 1] === c)) {
      out.push({ op, text: cur });
      op = c === ';' || c === '\n' ? ';' : c === '&' ? '&&' : '||';
      if (c !== ';' && c !== '\n') i++;
      cur = '';
    } else cur += c;
  }
  out.push({ op, text: cur });
  return out.filter((c) => c.text.trim() !== '');
}

function write(w: Writable | undefined, text: string | Buffer): Promise<void> {
  if (!w || w.destroyed || w.writableEnded) return Promise.resolve();
  return new Promise((resolve) => {
    w.write(text, () => resolve());
  });
}

/** Copies the context's stdin to stdout until stdin ends or the exec is ended. */
async function copyStdin(ctx: SimShellContext): Promise<void> {
  if (!ctx.stdin) return;
  for await (const chunk of ctx.stdin) {
    if (ctx.signal.aborted) return;
    await write(ctx.stdout, chunk as Buffer);
  }
}

/** A file as the container sees it: what an earlier exec wrote there, else the container's own. */
function readSeen(ctx: SimShellContext, p: string): Promise<Buffer> {
  const w = ctx.written?.get(p.startsWith('/') ? p : `/${p}`);
  return w ? Promise.resolve(w) : ctx.readFile(p);
}

/** Exit status of `exit N`: the shell ends with it (thrown to unwind the command list). */
class ShellExit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

const BUILTINS = new Set(['echo', 'true', 'false', 'exit', 'hostname', 'env', 'printenv', 'sleep', 'cat', 'sh', 'bash', 'stty', 'tar']);

/** Whether an exec's program is one the simulator knows (by its base name). */
export function isSimCommand(bin: string): boolean {
  return BUILTINS.has(bin.split('/').pop() ?? '');
}

/** Runs one command (argv); resolves its exit code. `exit` throws ShellExit. */
export async function runCommand(argv: readonly string[], ctx: SimShellContext): Promise<number> {
  const [bin = '', ...args] = argv;
  switch (bin.split('/').pop()) {
    case 'echo': {
      const noNewline = args[0] === '-n';
      await write(ctx.stdout, (noNewline ? args.slice(1) : args).join(' ') + (noNewline ? '' : '\n'));
      return 0;
    }
    case 'true':
      return 0;
    case 'false':
      return 1;
    case 'exit':
      throw new ShellExit(Number(args[0] ?? '0') & 0xff);
    case 'tar':
      return runTar(args, { ...ctx, readFile: (p) => readSeen(ctx, p), written: ctx.written ?? new Map<string, Buffer>(), now: ctx.now ?? Date.now });
    case 'stty': {
      const size = ctx.terminalSize?.();
      if (args[0] !== 'size' || !size) {
        await write(ctx.stderr ?? ctx.stdout, 'stty: standard input: Inappropriate ioctl for device\n');
        return 1;
      }
      await write(ctx.stdout, `${size.height} ${size.width}\n`);
      return 0;
    }
    case 'hostname':
      await write(ctx.stdout, `${ctx.env.HOSTNAME ?? ''}\n`);
      return 0;
    case 'env':
    case 'printenv': {
      if (args[0] !== undefined) {
        const v = ctx.env[args[0]];
        if (v === undefined) return 1;
        await write(ctx.stdout, `${v}\n`);
        return 0;
      }
      await write(ctx.stdout, Object.entries(ctx.env).map(([k, v]) => `${k}=${v}\n`).join(''));
      return 0;
    }
    case 'sleep': {
      const s = Number(args[0]);
      if (!Number.isFinite(s) || s < 0) {
        await write(ctx.stderr ?? ctx.stdout, `sleep: invalid number '${args[0] ?? ''}'\n`);
        return 1;
      }
      return (await ctx.sleep(s * 1000)) ? 0 : 130;
    }
    case 'cat': {
      if (args.length === 0 || (args.length === 1 && args[0] === '-')) {
        await copyStdin(ctx);
        return 0;
      }
      let code = 0;
      for (const f of args) {
        try {
          await write(ctx.stdout, await readSeen(ctx, f));
        } catch {
          await write(ctx.stderr ?? ctx.stdout, `cat: ${f}: No such file or directory\n`);
          code = 1;
        }
      }
      return code;
    }
    case 'sh':
    case 'bash':
      if (args[0] === '-c') return runLine(args[1] ?? '', ctx);
      return interactive(ctx);
    default:
      await write(ctx.stderr ?? ctx.stdout, `sh: ${bin}: not found\n`);
      return 127;
  }
}

/** Runs a command line; resolves the last command's code (an `exit` ends it with its code). */
export async function runLine(line: string, ctx: SimShellContext): Promise<number> {
  let code = 0;
  try {
    for (const c of commands(line)) {
      if ((c.op === '&&' && code !== 0) || (c.op === '||' && code === 0)) continue;
      const argv = words(c.text);
      if (argv.length > 0) code = await runCommand(argv, ctx);
    }
  } catch (e) {
    if (e instanceof ShellExit) return e.code;
    throw e;
  }
  return code;
}

/** A shell reading lines from stdin until it ends or a line exits. */
async function interactive(ctx: SimShellContext): Promise<number> {
  if (!ctx.stdin) return 0;
  let pending = '';
  let code = 0;
  // Each line's commands get no stdin of their own (cat without files would swallow the shell's).
  const inner: SimShellContext = { ...ctx, stdin: undefined };
  for await (const chunk of ctx.stdin) {
    let text = (chunk as Buffer).toString('utf8');
    // A terminal's ^D at the start of a line is the end of input (sh exits); elsewhere it would
    // pass the line on unfinished: the simulator drops that rest instead.
    const eot = ctx.tty ? text.indexOf('\x04') : -1;
    if (eot >= 0) text = text.slice(0, eot);
    pending += text.replace(/\r/g, '\n');
    let nl;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      try {
        for (const c of commands(line)) {
          if ((c.op === '&&' && code !== 0) || (c.op === '||' && code === 0)) continue;
          const argv = words(c.text);
          if (argv.length > 0) code = await runCommand(argv, inner);
        }
      } catch (e) {
        if (e instanceof ShellExit) return e.code;
        throw e;
      }
    }
    if (eot >= 0) return code;
  }
  return code;
}

/** Runs an exec's argv as the simulator's container would; resolves the exit code. */
export async function runSimExec(argv: readonly string[], ctx: SimShellContext): Promise<number> {
  try {
    return await runCommand(argv, ctx);
  } catch (e) {
    if (e instanceof ShellExit) return e.code;
    throw e;
  }
}
