import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port';

export interface EtcdClusterOptions {
  /** Number of members (default 3). */
  size?: number;
  /** Path of the etcd binary (default /usr/bin/etcd, Debian's etcd-server). */
  bin?: string;
  /** Client ports to use, one per member (default: free ports). Lets a test start etcd where a server already points. */
  clientPorts?: number[];
  /** --initial-cluster-token (default unique per cluster, so two clusters never share an ID). */
  token?: string;
  /** How long to wait for a member to answer (default 30 s). */
  readyTimeoutMs?: number;
}

/** A member's state as the cluster helper sees it. */
export interface EtcdMemberInfo {
  name: string;
  /** Client URL, http://127.0.0.1:<port>. */
  endpoint: string;
  peerUrl: string;
  dataDir: string;
  running: boolean;
}

export interface EtcdCluster {
  /** Client URLs of every member (running or not), in member order. */
  endpoints(): string[];
  /** The members, in order (index = the member argument of stop/start/kill9). */
  members(): EtcdMemberInfo[];
  /** SIGTERM one member (a graceful stop: a leader hands over leadership first) and wait for it to exit. */
  stop(member: number): Promise<void>;
  /** SIGKILL one member, as a crash would, and wait for it to exit. Its data directory stays. */
  kill9(member: number): Promise<void>;
  /**
   * Starts a stopped member again on its ports and data directory; resolves once it answers
   * HTTP (/health answers even without quorum), not once it is healthy: see waitHealthy.
   */
  start(member: number): Promise<void>;
  /** Resolves once every running member reports {"health":"true"} (a leader and a quorum). */
  waitHealthy(timeoutMs?: number): Promise<void>;
  /** The index of the member that is the Raft leader now, or -1 (read from each member's /v3 status). */
  leader(): Promise<number>;
  /** What a member printed (for failure messages). */
  output(member: number): string;
  /** Stops every member and removes all data directories. Idempotent. */
  close(): Promise<void>;
}

interface Member extends EtcdMemberInfo {
  clientPort: number;
  args: string[];
  proc: ChildProcess | null;
  out: string;
}

/**
 * Starts a real etcd cluster on loopback: every member on free client and peer ports, its own data
 * directory (under /dev/shm when writable: tests need neither fsync nor a disk), one static
 * --initial-cluster, and auto-compaction off (the API server compacts itself). Resolves once all
 * members report healthy. Debian's etcd-server package's own service is never used.
 */
export async function startEtcdCluster(o: EtcdClusterOptions = {}): Promise<EtcdCluster> {
  const size = o.size ?? 3;
  if (o.clientPorts && o.clientPorts.length !== size) throw new Error('clientPorts must name one port per member');
  const bin = o.bin ?? '/usr/bin/etcd';
  const readyTimeoutMs = o.readyTimeoutMs ?? 30_000;
  const root = mkdtempSync(join(writable('/dev/shm') ? '/dev/shm' : tmpdir(), 'svc-etcd-cluster-'));
  const taken = new Set<number>(o.clientPorts ?? []);
  const port = async (): Promise<number> => {
    for (;;) {
      const p = await freePort();
      if (!taken.has(p)) {
        taken.add(p);
        return p;
      }
    }
  };
  const token = o.token ?? `svc-test-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  const members: Member[] = [];
  for (let i = 0; i < size; i++) {
    const clientPort = o.clientPorts?.[i] ?? (await port());
    const peerPort = await port();
    members.push({
      name: `m${i}`,
      clientPort,
      endpoint: `http://127.0.0.1:${clientPort}`,
      peerUrl: `http://127.0.0.1:${peerPort}`,
      dataDir: join(root, `m${i}`),
      running: false,
      args: [],
      proc: null,
      out: '',
    });
  }
  const initialCluster = members.map((m) => `${m.name}=${m.peerUrl}`).join(',');
  for (const m of members) {
    m.args = [
      `--name=${m.name}`,
      `--data-dir=${m.dataDir}`,
      `--listen-client-urls=${m.endpoint}`,
      `--advertise-client-urls=${m.endpoint}`,
      `--listen-peer-urls=${m.peerUrl}`,
      `--initial-advertise-peer-urls=${m.peerUrl}`,
      `--initial-cluster=${initialCluster}`,
      `--initial-cluster-token=${token}`,
      // Ignored by etcd once the data directory exists, so restarts rejoin with their own state.
      '--initial-cluster-state=new',
      '--auto-compaction-retention=0',
      '--logger=zap',
      '--log-level=warn',
    ];
  }

  // Members would outlive a test worker that exits without its teardown (e.g. an ava timeout);
  // an exit hook still runs then and kills them and removes their files synchronously.
  const onExit = (): void => {
    for (const m of members) m.proc?.kill('SIGKILL');
    rmSync(root, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  let closed = false;

  const exited = (p: ChildProcess): Promise<void> =>
    p.exitCode !== null || p.signalCode !== null ? Promise.resolve() : new Promise((r) => p.once('exit', () => r()));

  const launch = (m: Member): void => {
    const p = spawn(bin, m.args, { stdio: ['ignore', 'pipe', 'pipe'] });
    m.proc = p;
    m.running = true;
    p.stdout.on('data', (d: Buffer) => (m.out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (m.out += d.toString()));
    p.once('exit', () => {
      if (m.proc === p) m.running = false;
    });
  };

  /** Polls until pred(member) holds, failing early when the process exits. */
  const waitFor = async (m: Member, what: string, pred: () => Promise<boolean>, timeoutMs: number): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const p = m.proc;
      if (!p || p.exitCode !== null || p.signalCode !== null) throw new Error(`etcd ${m.name} exited (${p?.exitCode ?? p?.signalCode}):\n${m.out.slice(-4000)}`);
      if (await pred()) return;
      if (Date.now() > deadline) throw new Error(`etcd ${m.name} at ${m.endpoint} did not ${what}:\n${m.out.slice(-4000)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  const halt = async (i: number, signal: NodeJS.Signals): Promise<void> => {
    const m = member(i);
    const p = m.proc;
    if (!p) return;
    p.kill(signal);
    await exited(p);
    m.running = false;
  };

  const member = (i: number): Member => {
    const m = members[i];
    if (!m) throw new Error(`no member ${i} (cluster of ${size})`);
    return m;
  };

  const cluster: EtcdCluster = {
    endpoints: () => members.map((m) => m.endpoint),
    members: () => members.map((m) => ({ name: m.name, endpoint: m.endpoint, peerUrl: m.peerUrl, dataDir: m.dataDir, running: m.running })),
    stop: (i) => halt(i, 'SIGTERM'),
    kill9: (i) => halt(i, 'SIGKILL'),
    async start(i) {
      const m = member(i);
      if (m.running) return;
      launch(m);
      await waitFor(m, 'answer HTTP', async () => (await health(m.endpoint)) !== undefined, readyTimeoutMs);
    },
    async waitHealthy(timeoutMs = readyTimeoutMs) {
      await Promise.all(members.filter((m) => m.running).map((m) => waitFor(m, 'become healthy', async () => (await health(m.endpoint)) === true, timeoutMs)));
    },
    async leader() {
      for (let i = 0; i < members.length; i++) {
        if (!members[i].running) continue;
        const s = await status(members[i].endpoint);
        if (s && s.leader !== '0' && s.leader === s.memberId) return i;
      }
      return -1;
    },
    output: (i) => member(i).out,
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all(members.map((_, i) => halt(i, 'SIGTERM')));
      process.removeListener('exit', onExit);
      rmSync(root, { recursive: true, force: true });
    },
  };

  try {
    // All at once: a member of a new cluster waits for its peers before it can elect a leader.
    for (const m of members) launch(m);
    await cluster.waitHealthy();
  } catch (e) {
    await cluster.close();
    throw e;
  }
  return cluster;
}

function writable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** One small HTTP call to a member; undefined when it does not answer. */
function get(url: string, method = 'GET', body?: string): Promise<{ status: number; body: string } | undefined> {
  return new Promise((resolve) => {
    const req = httpRequest(url, { method, timeout: 2000, headers: body ? { 'content-type': 'application/json' } : {} }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on('error', () => resolve(undefined));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end(body);
  });
}

/** /health: true with a leader and quorum, false when the member answers unhealthy, undefined when it does not answer. */
async function health(endpoint: string): Promise<boolean | undefined> {
  const res = await get(`${endpoint}/health`);
  if (!res) return undefined;
  return res.status === 200 && /"health":\s*"true"/.test(res.body);
}

/** The member's own ID and its idea of the leader, through the gRPC gateway's /v3/maintenance/status. */
async function status(endpoint: string): Promise<{ memberId: string; leader: string } | undefined> {
  const res = await get(`${endpoint}/v3/maintenance/status`, 'POST', '{}');
  if (!res || res.status !== 200) return undefined;
  try {
    const s = JSON.parse(res.body) as { header?: { member_id?: string }; leader?: string };
    return { memberId: String(s.header?.member_id ?? ''), leader: String(s.leader ?? '0') };
  } catch {
    return undefined;
  }
}
