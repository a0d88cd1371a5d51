import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { Cleanup } from './cleanup';

export interface FloorProcess {
  port: number;
  pid: number;
  /** SIGTERM, then resolves when the process has exited. */
  stop(): Promise<void>;
}

export interface FloorTls {
  certFile: string;
  keyFile: string;
  clientCaFile: string;
}

/** Starts bench/floor-server as a child process on an ephemeral port; resolves once it listens. */
export function startFloorServer(tls: FloorTls, cleanup: Cleanup): Promise<FloorProcess> {
  const proc = spawn(
    process.execPath,
    [join(__dirname, '..', 'floor-server.js'), `--cert=${tls.certFile}`, `--key=${tls.keyFile}`, `--client-ca=${tls.clientCaFile}`, '--port=0'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  cleanup.child(proc);
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  let out = '';
  proc.stderr.on('data', (d) => (out += d));
  return new Promise<FloorProcess>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`floor server did not start:\n${out}`)), 15_000);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`floor server exited with ${code}:\n${out}`));
    });
    proc.stdout.on('data', (d) => {
      out += d;
      const m = /listening (\d+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      resolve({
        port: Number(m[1]),
        pid: proc.pid!,
        async stop() {
          if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
          await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
          if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
        },
      });
    });
  });
}
