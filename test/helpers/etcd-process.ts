import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCA, issue } from '../../apiserver/pki/certs';
import { freePort } from './free-port';

/** PEM files for a TLS member (client-cert-auth on): the CA, and a client certificate it signed. */
export interface EtcdTlsFiles {
  caFile: string;
  certFile: string;
  keyFile: string;
}

export interface RunningEtcd {
  /** The client URL, http://127.0.0.1:<port>. */
  endpoint: string;
  /** The member's data directory (kept across restart()). */
  dataDir: string;
  /** SIGTERM, wait for exit, remove the temp directory. Idempotent. */
  stop(): Promise<void>;
  /** SIGKILL without waiting, as a crash would (the data directory stays for restart()). */
  kill9(): void;
  /** Starts the member again on the same ports and data directory; resolves once it answers. */
  restart(): Promise<void>;
  /** What the member printed (for failure messages). */
  output(): string;
  /** With tls: the files a client needs (--etcd-cafile, --etcd-certfile, --etcd-keyfile). */
  tls?: EtcdTlsFiles;
}

export interface StartEtcdOptions {
  /** Path of the etcd binary (default /usr/bin/etcd, Debian's etcd-server). */
  bin?: string;
  /** How long to wait for /health (default 30 s). */
  readyTimeoutMs?: number;
  /** Serve clients over https with a fresh CA and require client certificates (default false). */
  tls?: boolean;
}

/**
 * Starts a real single-member etcd on free loopback ports with a temp data directory, and resolves
 * once its /health answers. Auto-compaction is off (--auto-compaction-retention=0) because the API
 * server compacts itself. The data directory goes to /dev/shm when there is one: etcd fsyncs every
 * commit, tests do not need that to reach a disk, and a SIGKILL keeps page-cache data anyway.
 */
export async function startEtcd(o: StartEtcdOptions = {}): Promise<RunningEtcd> {
  const bin = o.bin ?? '/usr/bin/etcd';
  const root = mkdtempSync(join(writable('/dev/shm') ? '/dev/shm' : tmpdir(), 'svc-etcd-'));
  const dataDir = join(root, 'member');
  const clientPort = await freePort();
  let peerPort = await freePort();
  while (peerPort === clientPort) peerPort = await freePort();
  const endpoint = `${o.tls ? 'https' : 'http'}://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const tls = o.tls ? await writeTlsFiles(root) : undefined;
  const args = [
    '--name=m0',
    `--data-dir=${dataDir}`,
    `--listen-client-urls=${endpoint}`,
    `--advertise-client-urls=${endpoint}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=m0=${peer}`,
    '--initial-cluster-state=new',
    '--auto-compaction-retention=0',
    '--logger=zap',
    '--log-level=warn',
    ...(tls ? [`--cert-file=${tls.serverCert}`, `--key-file=${tls.serverKey}`, `--trusted-ca-file=${tls.caFile}`, '--client-cert-auth'] : []),
  ];
  let out = '';
  let proc: ChildProcess | null = null;
  let stopped = false;

  // etcd would outlive a test worker that exits without running its teardown (e.g. after an ava
  // timeout); an exit hook still runs then, and kills the member and removes its files synchronously.
  const onExit = (): void => {
    proc?.kill('SIGKILL');
    rmSync(root, { recursive: true, force: true });
  };
  process.once('exit', onExit);

  const launch = async (): Promise<void> => {
    const p = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    proc = p;
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const deadline = Date.now() + (o.readyTimeoutMs ?? 30_000);
    for (;;) {
      if (p.exitCode !== null || p.signalCode !== null) throw new Error(`etcd exited (${p.exitCode ?? p.signalCode}):\n${out.slice(-4000)}`);
      if (await healthy(endpoint, tls)) return;
      if (Date.now() > deadline) {
        p.kill('SIGKILL');
        throw new Error(`etcd did not become healthy at ${endpoint}:\n${out.slice(-4000)}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  const exit = (p: ChildProcess): Promise<void> =>
    p.exitCode !== null || p.signalCode !== null ? Promise.resolve() : new Promise((r) => p.once('exit', () => r()));

  try {
    await launch();
  } catch (e) {
    process.removeListener('exit', onExit);
    rmSync(root, { recursive: true, force: true });
    throw e;
  }
  return {
    endpoint,
    dataDir,
    ...(tls ? { tls: { caFile: tls.caFile, certFile: tls.certFile, keyFile: tls.keyFile } } : {}),
    output: () => out,
    kill9: () => {
      proc?.kill('SIGKILL');
    },
    restart: async () => {
      if (proc) {
        proc.kill('SIGKILL');
        await exit(proc);
      }
      await launch();
    },
    stop: async () => {
      if (stopped) return;
      stopped = true;
      if (proc) {
        proc.kill('SIGTERM');
        await exit(proc);
      }
      process.removeListener('exit', onExit);
      rmSync(root, { recursive: true, force: true });
    },
  };
}

function writable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** A CA, a server certificate for 127.0.0.1/localhost and a client certificate, as files under dir. */
async function writeTlsFiles(dir: string): Promise<EtcdTlsFiles & { serverCert: string; serverKey: string }> {
  const ca = await createCA('svc-test-etcd-ca');
  const server = await issue(ca, { commonName: 'etcd', ips: ['127.0.0.1'], dnsNames: ['localhost'], usage: 'server+client', validityMs: 24 * 3600_000 });
  const client = await issue(ca, { commonName: 'svc-apiserver', usage: 'client', validityMs: 24 * 3600_000 });
  const files = {
    caFile: join(dir, 'ca.crt'),
    serverCert: join(dir, 'server.crt'),
    serverKey: join(dir, 'server.key'),
    certFile: join(dir, 'client.crt'),
    keyFile: join(dir, 'client.key'),
  };
  writeFileSync(files.caFile, ca.certPem);
  writeFileSync(files.serverCert, server.certPem);
  writeFileSync(files.serverKey, server.keyPem, { mode: 0o600 });
  writeFileSync(files.certFile, client.certPem);
  writeFileSync(files.keyFile, client.keyPem, { mode: 0o600 });
  return files;
}

/** True when GET /health reports {"health":"true"} (the member has a leader and serves requests). */
function healthy(endpoint: string, tls?: EtcdTlsFiles): Promise<boolean> {
  return new Promise((resolve) => {
    const onResponse = (res: import('node:http').IncomingMessage): void => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve(res.statusCode === 200 && /"health":\s*"true"/.test(body)));
      res.on('error', () => resolve(false));
    };
    const req = tls
      ? httpsRequest(`${endpoint}/health`, { timeout: 1000, ca: readPem(tls.caFile), cert: readPem(tls.certFile), key: readPem(tls.keyFile) }, onResponse)
      : httpRequest(`${endpoint}/health`, { timeout: 1000 }, onResponse);
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

function readPem(path: string): string {
  return readFileSync(path, 'utf8');
}
