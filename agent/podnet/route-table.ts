/**
 * The node's routing table through `ip` (iproute2), behind an injected runner so the reconciler
 * is tested without touching the host. Routes svc-node adds carry routing protocol 157 (`proto
 * 157`, a number no routing daemon registers in rt_protos), which is how they are told from
 * everyone else's: on start the ones left by an earlier run are found by it, and only those are
 * ever deleted.
 */
import { execFile } from 'node:child_process';
import type { HostRoute } from './routes';

/** The routing protocol number marking svc-node's routes. */
export const ROUTE_PROTO = '157';

/** Runs `ip` with the arguments; resolves its stdout, rejects with its stderr in the message. */
export type IpRunner = (args: readonly string[]) => Promise<string>;

export const execIp: IpRunner = (args) =>
  new Promise((resolve, reject) => {
    execFile('ip', [...args], { timeout: 10_000, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err) reject(new Error(`ip ${args.join(' ')}: ${stderr.trim() || err.message}`));
      else resolve(stdout);
    });
  });

const familyFlag = (dst: string) => (dst.includes(':') ? '-6' : '-4');

/** The node's routing table, as the reconciler needs it. */
export class RouteTable {
  constructor(private readonly ip: IpRunner = execIp) {}

  /** Adds or replaces the route to r.dst (ours from now on). */
  async replace(r: HostRoute): Promise<void> {
    await this.ip([familyFlag(r.dst), 'route', 'replace', r.dst, 'via', r.via, 'proto', ROUTE_PROTO]);
  }

  /** Deletes our route to dst; one that is already gone is not an error. */
  async delete(dst: string): Promise<void> {
    try {
      await this.ip([familyFlag(dst), 'route', 'del', dst, 'proto', ROUTE_PROTO]);
    } catch (e) {
      // RTNETLINK's ESRCH: "No such process" (nothing matched)
      if (/No such process|not found/i.test((e as Error).message)) return;
      throw e;
    }
  }

  /** Our routes present in the main table (both families). */
  async list(): Promise<HostRoute[]> {
    const out: HostRoute[] = [];
    for (const family of ['-4', '-6']) {
      let text: string;
      try {
        text = await this.ip(['-j', family, 'route', 'show', 'proto', ROUTE_PROTO]);
      } catch (e) {
        // A kernel without IPv6 has no IPv6 routes of ours either.
        if (family === '-6' && /not supported/i.test((e as Error).message)) continue;
        throw e;
      }
      const rows = text.trim() === '' ? [] : (JSON.parse(text) as { dst?: string; gateway?: string }[]);
      for (const row of rows) if (row.dst && row.gateway) out.push({ dst: row.dst, via: row.gateway });
    }
    return out;
  }
}
