/**
 * Canned ExecSync results for the simulator: per-behaviour command table, then the user's handler,
 * then a few built-in commands so probes like `cat /tmp/healthy` or `sh -c "exit 1"` can be
 * modelled without a handler. Anything else fails the way runc reports a missing binary.
 */
import type { ExecContext, ExecHandler, ExecResultSpec } from './sim-options';

/** The built-in commands: echo, true, false, sleep N, sh -c "exit N" / "echo ...". */
export function builtinExec(cmd: readonly string[]): ExecResultSpec | undefined {
  const [bin, ...args] = cmd;
  const base = bin?.split('/').pop();
  switch (base) {
    case 'echo':
      return { stdout: `${args.join(' ')}\n`, exitCode: 0 };
    case 'true':
      return { exitCode: 0 };
    case 'false':
      return { exitCode: 1 };
    case 'sleep': {
      const s = Number(args[0] ?? '0');
      return Number.isFinite(s) && s >= 0 ? { exitCode: 0, durationMs: s * 1000 } : { stderr: 'sleep: invalid number\n', exitCode: 1 };
    }
    case 'sh':
    case 'bash':
      if (args[0] === '-c' && args[1] !== undefined) return shellLine(args[1]);
      return undefined;
    default:
      return undefined;
  }
}

function shellLine(line: string): ExecResultSpec | undefined {
  const exit = /^\s*exit\s+(\d+)\s*$/.exec(line);
  if (exit) return { exitCode: Number(exit[1]) % 256 };
  const echo = /^\s*echo\s+(.*)$/.exec(line);
  if (echo) return { stdout: `${(echo[1] ?? '').replace(/^(['"])(.*)\1$/, '$2')}\n`, exitCode: 0 };
  const trimmed = line.trim();
  if (trimmed === 'true') return { exitCode: 0 };
  if (trimmed === 'false') return { exitCode: 1 };
  return undefined;
}

/** Picks the result for an exec: table, handler, built-ins, else "executable file not found". */
export function resolveExec(ctx: ExecContext, table: Record<string, ExecResultSpec> | undefined, handler: ExecHandler | undefined): ExecResultSpec {
  const key = ctx.cmd.join(' ');
  const fromTable = table?.[key];
  if (fromTable) return fromTable;
  const fromHandler = handler?.(ctx);
  if (fromHandler) return fromHandler;
  const builtin = builtinExec(ctx.cmd);
  if (builtin) return builtin;
  return {
    error:
      `failed to exec in container: failed to start exec: OCI runtime exec failed: exec failed: ` +
      `unable to start container process: exec: "${ctx.cmd[0] ?? ''}": executable file not found in $PATH: unknown`,
  };
}
