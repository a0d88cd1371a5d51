/**
 * The node-local address the DNS server listens on, put on a dummy interface as NodeLocal DNS's
 * node-cache does (its "nodelocaldns" interface holding 169.254.20.10): `ip link add <name> type
 * dummy`, `ip addr replace <address>/32` (/128 for IPv6), `ip link set <name> up`; removed again
 * (`ip link del`) when the server stops cleanly, so nothing of it outlives svc-node. An interface
 * of that name left by an earlier run is reused. An existing interface that is not a dummy one
 * (`lo`, for kernels without the dummy driver: Linux accepts packets for any local address on any
 * interface) only gets the address, and only the address is taken away again. Only when
 * dns.interfaceName is set: a node whose address already exists leaves it empty.
 */
import { execFile } from 'node:child_process';
import { isIPv6 } from 'node:net';

/** Runs a program; resolves its exit code and stderr (never rejects for a non-zero exit). */
export type CommandRunner = (file: string, args: readonly string[]) => Promise<{ code: number; stdout: string; stderr: string }>;

export const runCommand: CommandRunner = (file, args) =>
  new Promise((resolve) => {
    execFile(file, [...args], { timeout: 10_000, encoding: 'utf8' }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr: stderr + (err && code === -1 ? err.message : '') });
    });
  });

export class ListenInterfaceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ListenInterfaceError';
  }
}

export class ListenInterface {
  constructor(
    private readonly name: string,
    private readonly address: string,
    private readonly run: CommandRunner = runCommand,
  ) {}

  /** Makes the interface (or reuses it), puts the address on it and brings it up; rejects ListenInterfaceError naming the step. */
  async ensure(): Promise<void> {
    const add = await this.run('ip', ['link', 'add', this.name, 'type', 'dummy']);
    if (add.code !== 0 && !/File exists/i.test(add.stderr)) throw new ListenInterfaceError(`cannot create dummy interface ${this.name} for the DNS address: ${add.stderr.trim()}`);
    await this.step(['addr', 'replace', this.cidr(), 'dev', this.name], `cannot put ${this.address} on ${this.name}`);
    await this.step(['link', 'set', this.name, 'up'], `cannot bring ${this.name} up`);
  }

  /** Removes the dummy interface (and so its address), or only the address from another interface; either already gone is fine. */
  async remove(): Promise<void> {
    const show = await this.run('ip', ['-d', 'link', 'show', 'dev', this.name]);
    if (show.code !== 0) return;
    const dummy = /\bdummy\b/.test(show.stdout);
    const r = dummy ? await this.run('ip', ['link', 'del', this.name]) : await this.run('ip', ['addr', 'del', this.cidr(), 'dev', this.name]);
    if (r.code !== 0 && !/Cannot find device|does not exist|Cannot assign/i.test(r.stderr)) throw new ListenInterfaceError(`cannot remove ${dummy ? this.name : `${this.address} from ${this.name}`}: ${r.stderr.trim()}`);
  }

  private cidr(): string {
    return `${this.address}/${isIPv6(this.address) ? 128 : 32}`;
  }

  private async step(args: string[], what: string): Promise<void> {
    const r = await this.run('ip', args);
    if (r.code !== 0) throw new ListenInterfaceError(`${what}: ${r.stderr.trim()}`);
  }
}
