/**
 * A fake systemd NOTIFY_SOCKET for tests: wraps test/helpers/notify-socket.py (Node cannot bind
 * unix datagram sockets) and collects what the service under test sends.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

export interface Datagram {
  data: string;
  /** Sender pid from SCM_CREDENTIALS (what systemd's NotifyAccess=main compares). */
  pid: number | null;
}

export interface NotifyReceiver {
  /** Everything received so far, in order. */
  got: Datagram[];
  /** Resolves once the socket is bound. */
  ready: Promise<void>;
  /** Resolves with the receiver's exit code: 0 after STOPPING=1, 1 after its idle timeout. */
  exited: Promise<number | null>;
  kill(): void;
}

/** Binds a receiver at `path` (exits after STOPPING=1 or `idleSeconds` without a message). */
export function notifyReceiver(repoRoot: string, path: string, idleSeconds = 90): NotifyReceiver {
  const proc = spawn('python3', [join(repoRoot, 'test', 'helpers', 'notify-socket.py'), path, 'STOPPING=1', String(idleSeconds)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const got: Datagram[] = [];
  let bound!: () => void;
  const ready = new Promise<void>((r) => (bound = r));
  let buf = '';
  proc.stdout.on('data', (d: Buffer) => {
    buf += d.toString('utf8');
    const lines = buf.split('\n');
    buf = lines.pop()!;
    for (const line of lines) {
      const m = JSON.parse(line) as { listening?: string; data?: string; pid?: number | null };
      if (m.listening !== undefined) bound();
      else if (m.data !== undefined) got.push({ data: m.data, pid: m.pid ?? null });
    }
  });
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  return { got, ready, exited, kill: () => proc.kill('SIGKILL') };
}

/** Polls `check` every 100 ms until it returns a value; rejects with `what` after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => T | undefined | Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
