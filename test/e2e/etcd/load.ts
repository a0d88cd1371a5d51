import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent } from 'undici';
import { repoRoot, type RunningApiServer } from '../../helpers/apiserver-process';
import { call } from '../../helpers/http';

/** A write the server acknowledged (201), as the client saw it. */
export interface AckedWrite {
  name: string;
  resourceVersion: string;
  uid: string;
  /** When the answer arrived (ms since the epoch). */
  at: number;
}

/** A write that failed: its HTTP status (0 when the connection itself failed), reason, and how long it took. */
export interface FailedWrite {
  name: string;
  status: number;
  reason: string;
  ms: number;
  at: number;
}

export interface WriteLoad {
  acked: AckedWrite[];
  failed: FailedWrite[];
  /** Stops the clients and resolves once every request in flight has answered. */
  stop(): Promise<void>;
}

/**
 * Several concurrent clients creating ConfigMaps in a namespace, each one request at a time, with
 * every acknowledged write recorded (name, resourceVersion, uid) so a test can check each later.
 * Failed writes are recorded too and the client carries on after a short pause.
 */
export function startWriteLoad(s: RunningApiServer, o: { clients: number; namespace: string; prefix: string }): WriteLoad {
  const acked: AckedWrite[] = [];
  const failed: FailedWrite[] = [];
  let running = true;
  const clients = Array.from({ length: o.clients }, async (_, c) => {
    for (let i = 0; running; i++) {
      const name = `${o.prefix}-${c}-${i}`;
      const started = Date.now();
      try {
        const r = await call(s.admin, 'POST', `${s.url}/api/v1/namespaces/${o.namespace}/configmaps`, { metadata: { name }, data: { client: String(c), seq: String(i) } });
        if (r.status === 201) {
          acked.push({ name, resourceVersion: r.body.metadata.resourceVersion, uid: r.body.metadata.uid, at: Date.now() });
          continue;
        }
        failed.push({ name, status: r.status, reason: String(r.body?.reason ?? r.text.slice(0, 200)), ms: Date.now() - started, at: Date.now() });
      } catch (e) {
        failed.push({ name, status: 0, reason: e instanceof Error ? e.message : String(e), ms: Date.now() - started, at: Date.now() });
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  });
  return {
    acked,
    failed,
    async stop() {
      running = false;
      await Promise.all(clients);
    },
  };
}

/** Polls fn every interval until it returns true or timeoutMs passes; returns whether it did. */
export async function eventually(fn: () => boolean | Promise<boolean>, timeoutMs: number, intervalMs = 200): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await fn()) return true;
    } catch {
      // not yet
    }
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Summarises failures by status and reason, for test logs. */
export function summarize(failed: readonly FailedWrite[]): string {
  const counts = new Map<string, number>();
  for (const f of failed) counts.set(`${f.status} ${f.reason}`, (counts.get(`${f.status} ${f.reason}`) ?? 0) + 1);
  return [...counts].map(([k, n]) => `${n}× ${k}`).join('; ') || 'none';
}

/** An undici dispatcher with the admin client certificate the server wrote under dataDir/pki (throws until it exists). */
export function adminAgent(dataDir: string): Agent {
  const pki = (f: string) => readFileSync(join(dataDir, 'pki', f), 'utf8');
  return new Agent({ connect: { ca: pki('ca.crt'), cert: pki('admin.crt'), key: pki('admin.key'), servername: 'localhost' } });
}

/**
 * Starts bin/svc-apiserver without waiting for readiness (startApiServer waits for readyz 200,
 * which a server with a broken store never reaches). stop() sends SIGTERM and waits for the exit.
 */
export function spawnApiServer(dataDir: string, port: number, args: string[]): { proc: ChildProcess; output: () => string; stop(): Promise<void> } {
  const proc = spawn(join(repoRoot, 'bin', 'svc-apiserver'), ['--bind-address=127.0.0.1', `--secure-port=${port}`, `--data-dir=${dataDir}`, '--log-level=warn', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  return {
    proc,
    output: () => out,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      await exited;
    },
  };
}
