import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot, startApiServer } from '../../helpers/apiserver-process';
import { eventually, startAgent } from './agent-process';

interface Datagram {
  data: string;
  pid: number | null;
}

/** The python3 NOTIFY_SOCKET receiver from test/helpers (Node has no unix datagram sockets). */
function notifyReceiver(path: string) {
  const proc = spawn('python3', [join(repoRoot, 'test', 'helpers', 'notify-socket.py'), path, 'STOPPING=1', '60'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const got: Datagram[] = [];
  let listening!: () => void;
  const ready = new Promise<void>((r) => (listening = r));
  let buf = '';
  proc.stdout.on('data', (d) => {
    buf += d;
    const lines = buf.split('\n');
    buf = lines.pop()!;
    for (const l of lines) {
      const m = JSON.parse(l) as Record<string, unknown>;
      if ('listening' in m) listening();
      else if ('data' in m) got.push(m as unknown as Datagram);
    }
  });
  const exited = new Promise<number | null>((r) => proc.once('exit', (c) => r(c)));
  return { got, ready, exited, kill: () => proc.kill('SIGKILL') };
}

test('under NOTIFY_SOCKET the agent reports its stages, READY=1 once heartbeating, WATCHDOG=1 keep-alives, STOPPING=1 on SIGTERM', async (t) => {
  const api = await startApiServer();
  const dir = mkdtempSync(join(tmpdir(), 'svc-node-notify-'));
  const sock = join(dir, 'notify.sock');
  const receiver = notifyReceiver(sock);
  await receiver.ready;
  const agent = startAgent({
    dir,
    nodeName: 'e2e-notify',
    kubeconfig: api.kubeconfig,
    // WatchdogSec=2 s: keep-alives every second.
    env: { ...process.env, NOTIFY_SOCKET: sock, WATCHDOG_USEC: '2000000' },
  });
  try {
    await eventually('READY=1', () => (receiver.got.some((g) => g.data === 'READY=1') ? true : undefined), 30_000, 100);
    await eventually('two keep-alives after READY', () => {
      const i = receiver.got.findIndex((g) => g.data === 'READY=1');
      return receiver.got.slice(i).filter((g) => g.data === 'WATCHDOG=1').length >= 2 ? true : undefined;
    }, 15_000, 100);
    const texts = receiver.got.map((g) => g.data);
    const statuses = texts.filter((x) => x.startsWith('STATUS='));
    t.true(statuses.includes('STATUS=bootstrapping client certificate'), texts.join('\n'));
    t.true(statuses.includes('STATUS=registering node e2e-notify'));
    t.true(statuses.includes('STATUS=heartbeating (node e2e-notify)'));
    const order = ['STATUS=bootstrapping client certificate', 'STATUS=registering node e2e-notify', 'STATUS=heartbeating (node e2e-notify)', 'READY=1'].map((s) => texts.indexOf(s));
    t.deepEqual([...order].sort((a, b) => a - b), order, 'stages are reported in order, READY last');
    t.true(texts.indexOf('WATCHDOG=1') < texts.indexOf('STATUS=bootstrapping client certificate'), 'keep-alives start before the slow parts of start-up');
    t.true(receiver.got.every((g) => g.pid === null || g.pid === agent.proc.pid), 'every message comes from the agent itself');
    agent.proc.kill('SIGTERM');
    t.is(await agent.exited, 0);
    t.is(await receiver.exited, 0, 'the receiver saw STOPPING=1');
    t.is(receiver.got.at(-1)!.data, 'STOPPING=1');
  } finally {
    await agent.stop('SIGKILL');
    receiver.kill();
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
