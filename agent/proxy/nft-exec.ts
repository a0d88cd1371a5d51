/**
 * The real runners: `nft -f -` with the script on standard input (one transaction), and
 * `conntrack -D` for flow cleanup. Each rejects with the tool's standard error when it fails.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

/** The system directories searched first for nft and conntrack. */
const SYSTEM_DIRS = ['/usr/sbin', '/sbin', '/usr/bin', '/bin', '/usr/local/sbin'];

/**
 * The tool's path in the system directories, else its bare name (PATH). Not PATH first: under npm
 * the PATH starts with node_modules/.bin, where @vercel/nft installs an unrelated `nft` that
 * exits 0 on any script.
 */
export function systemTool(name: string, exists: (p: string) => boolean = existsSync): string {
  return SYSTEM_DIRS.map((d) => `${d}/${name}`).find(exists) ?? name;
}

/** Runs a command with `input` on standard input; resolves its exit code and output. Never rejects for a non-zero exit. */
export function runCommand(cmd: string, args: readonly string[], input = ''): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }));
    child.stdin.on('error', () => undefined); // a child that exits early closes its stdin; the exit code tells
    child.stdin.end(input);
  });
}

export class NftError extends Error {
  constructor(
    message: string,
    readonly stderr: string,
  ) {
    super(message);
    this.name = 'NftError';
  }
}

/** Applies nft scripts with the nft binary: `command` runs it (default systemTool('nft'); tests prefix `ip netns exec <ns>`). */
export class NftCommand {
  constructor(private readonly command: readonly string[] = [systemTool('nft')]) {}

  async apply(script: string): Promise<void> {
    const r = await runCommand(this.command[0], [...this.command.slice(1), '-f', '-'], script);
    if (r.code !== 0) {
      const why = r.stderr.trim().split('\n').slice(0, 6).join('\n');
      throw new NftError(`nft -f - exited ${r.code}: ${why}`, r.stderr);
    }
  }
}

/** Deletes conntrack entries with the conntrack tool; "0 flow entries" (exit 1 with nothing found) is not a failure. */
export class ConntrackCommand {
  constructor(private readonly command: readonly string[] = [systemTool('conntrack')]) {}

  async deleteFlows(args: readonly string[]): Promise<void> {
    const r = await runCommand(this.command[0], [...this.command.slice(1), '-D', ...args]);
    if (r.code !== 0 && !/0 flow entries/.test(r.stderr)) throw new Error(`conntrack -D ${args.join(' ')} exited ${r.code}: ${r.stderr.trim()}`);
  }
}

/** The iptables tools of a flavour: the system's choice (''), or `-legacy` / `-nft` explicitly. */
export type IptablesFlavour = '' | '-legacy' | '-nft';

/**
 * Runs iptables-save and iptables-restore (ip6tables-* for ip6), each prefixed by `prefix` (tests:
 * `ip netns exec <ns>`). Restore waits for the xtables lock (-w 5) and never flushes what it does
 * not declare (--noflush).
 */
export class IptablesCommand {
  constructor(
    private readonly flavour: IptablesFlavour = '',
    private readonly prefix: readonly string[] = [],
  ) {}

  private tool(family: 'ip' | 'ip6', what: 'save' | 'restore'): string[] {
    const name = `${family === 'ip' ? 'iptables' : 'ip6tables'}${this.flavour}-${what}`;
    return [...this.prefix, systemTool(name)];
  }

  async save(family: 'ip' | 'ip6'): Promise<string> {
    const [cmd, ...args] = this.tool(family, 'save');
    const r = await runCommand(cmd, args);
    if (r.code !== 0) throw new Error(`${args.at(-1) ?? cmd} exited ${r.code}: ${r.stderr.trim()}`);
    return r.stdout;
  }

  async restore(family: 'ip' | 'ip6', input: string): Promise<void> {
    const [cmd, ...args] = this.tool(family, 'restore');
    const r = await runCommand(cmd, [...args, '-w', '5', '--noflush'], input);
    if (r.code !== 0) throw new Error(`${args.at(-1) ?? cmd} --noflush exited ${r.code}: ${r.stderr.trim().split('\n').slice(0, 6).join('\n')}`);
  }
}
