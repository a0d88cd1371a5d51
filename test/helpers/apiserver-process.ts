import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { freePort } from './free-port';

export const repoRoot = join(__dirname, '..', '..', '..');

export interface RunningApiServer {
  port: number;
  url: string;
  dataDir: string;
  kubeconfig: string;
  caPem: string;
  /** An undici dispatcher presenting the admin client certificate (system:masters). */
  admin: Agent;
  /** A dispatcher that trusts the CA but presents no client certificate. */
  anonymous: Agent;
  proc: ChildProcess;
  output: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface StartOptions {
  args?: string[];
  dataDir?: string;
  port?: number;
  /** --log-level (default warn: the tests' logs stay short); info shows why requests were refused. */
  logLevel?: string;
  /** Extra environment of the process (e.g. NODE_OPTIONS), added to the test's own. */
  env?: NodeJS.ProcessEnv;
  /** The address it listens on and is reached at (default 127.0.0.1); its serving certificate names it. */
  host?: string;
}

/** Starts ./bin/svc-apiserver as a real process on a free port with a temp data dir; resolves when /readyz answers 200. */
export async function startApiServer(o: StartOptions = {}): Promise<RunningApiServer> {
  const dataDir = o.dataDir ?? mkdtempSync(join(tmpdir(), 'svc-apiserver-'));
  const port = o.port ?? (await freePort());
  const host = o.host ?? '127.0.0.1';
  const proc = spawn(join(repoRoot, 'bin', 'svc-apiserver'), [`--bind-address=${host}`, `--secure-port=${port}`, `--data-dir=${dataDir}`, `--log-level=${o.logLevel ?? 'warn'}`, ...(o.args ?? [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(o.env ? { env: { ...process.env, ...o.env } } : {}),
  });
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  const kubeconfig = join(dataDir, 'admin.kubeconfig');
  const deadline = Date.now() + 60_000;
  let caPem = '';
  let admin: Agent | undefined;
  let anonymous: Agent | undefined;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`svc-apiserver exited with ${proc.exitCode}:\n${out}`);
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`svc-apiserver did not become ready:\n${out}`);
    }
    try {
      if (!admin) {
        caPem = readFileSync(join(dataDir, 'pki', 'ca.crt'), 'utf8');
        const cert = readFileSync(join(dataDir, 'pki', 'admin.crt'), 'utf8');
        const key = readFileSync(join(dataDir, 'pki', 'admin.key'), 'utf8');
        admin = new Agent({ connect: { ca: caPem, cert, key, servername: 'localhost' } });
        anonymous = new Agent({ connect: { ca: caPem, servername: 'localhost' } });
      }
      const res = await request(`https://${host}:${port}/readyz`, { dispatcher: admin });
      await res.body.text();
      if (res.statusCode === 200) break;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    port,
    url: `https://${host}:${port}`,
    dataDir,
    kubeconfig,
    caPem,
    admin: admin,
    anonymous: anonymous!,
    proc,
    output: () => out,
    async stop(signal = 'SIGTERM') {
      if (proc.exitCode === null) proc.kill(signal);
      const code = await exited;
      await admin.close();
      await anonymous!.close();
      if (!o.dataDir) rmSync(dataDir, { recursive: true, force: true });
      return code;
    },
  };
}
