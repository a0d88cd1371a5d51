import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { NoopNotifier, SystemdNotifier, createSdNotifier, watchdogIntervalFromEnv, type SdNotifyBinding } from '../../../../common/systemd';

const repo = resolve(__dirname, '../../../../..');
const receiverScript = join(repo, 'test/helpers/notify-socket.py');
const senderScript = resolve(__dirname, '../../../fixtures/agent/notify-sender.js');

test('WATCHDOG_USEC/WATCHDOG_PID are read as sd_watchdog_enabled does', (t) => {
  t.is(watchdogIntervalFromEnv({ WATCHDOG_USEC: '30000000' }, 42), 30_000);
  t.is(watchdogIntervalFromEnv({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: '42' }, 42), 30_000);
  t.is(watchdogIntervalFromEnv({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: '41' }, 42), undefined, 'meant for another process');
  t.is(watchdogIntervalFromEnv({ WATCHDOG_USEC: '0' }, 42), undefined);
  t.is(watchdogIntervalFromEnv({ WATCHDOG_USEC: 'abc' }, 42), undefined);
  t.is(watchdogIntervalFromEnv({}, 42), undefined);
});

test('without NOTIFY_SOCKET the notifier is a no-op and the binding is never loaded', (t) => {
  let loaded = false;
  const n = createSdNotifier({
    env: { WATCHDOG_USEC: '1000000' },
    loadBinding: () => {
      loaded = true;
      throw new Error('must not load');
    },
  });
  t.true(n instanceof NoopNotifier);
  t.false(loaded);
  n.ready();
  n.status('x');
  n.watchdog();
  n.stopping();
  t.is(n.watchdogIntervalMs(), undefined);
});

test('with NOTIFY_SOCKET the binding gets exact states; status is kept to one line', (t) => {
  const sent: string[] = [];
  const binding: SdNotifyBinding = { sendState: (s) => sent.push(s), watchdog: () => sent.push('(watchdog)') };
  const env = { NOTIFY_SOCKET: '/run/systemd/notify', WATCHDOG_USEC: '15000000' };
  const n = createSdNotifier({ env, pid: 7, loadBinding: () => binding });
  t.true(n instanceof SystemdNotifier);
  n.status('registering\nREADY=1');
  n.ready();
  n.watchdog();
  n.stopping();
  t.deepEqual(sent, ['STATUS=registering READY=1', 'READY=1', '(watchdog)', 'STOPPING=1']);
  t.is(n.watchdogIntervalMs(), 15_000);
  t.is(env.NOTIFY_SOCKET, '/run/systemd/notify', 'NOTIFY_SOCKET is never cleared');
});

test('a binding that fails to load under NOTIFY_SOCKET is a clear error', (t) => {
  t.throws(
    () =>
      createSdNotifier({
        env: { NOTIFY_SOCKET: '/x' },
        loadBinding: () => {
          throw new Error('libsystemd.so.0: cannot open shared object file');
        },
      }),
    { message: 'NOTIFY_SOCKET is set but the sd-notify binding failed to load: libsystemd.so.0: cannot open shared object file' },
  );
});

interface Datagram {
  data: string;
  pid: number;
}

/** Runs the python receiver on `socketPath`, then the real notifier in a child node process. */
async function roundTrip(t: import('ava').ExecutionContext, socketPath: string) {
  const receiver = spawn('python3', [receiverScript, socketPath, 'STOPPING=1', '20'], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => {
    if (receiver.exitCode === null) receiver.kill('SIGKILL');
  });
  const lines = createInterface({ input: receiver.stdout });
  const received: Datagram[] = [];
  const listening = new Promise<void>((ok) => {
    lines.on('line', (l) => {
      const msg = JSON.parse(l) as { listening?: string; data?: string; pid?: number; timeout?: boolean };
      if (msg.listening) ok();
      else if (msg.data !== undefined) received.push({ data: msg.data, pid: msg.pid! });
    });
  });
  const receiverExit = new Promise<number | null>((ok) => receiver.once('exit', (c) => ok(c)));
  await listening;

  const sender = spawn(process.execPath, [senderScript], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, NOTIFY_SOCKET: socketPath, WATCHDOG_USEC: '30000000' },
  });
  let out = '';
  sender.stdout.on('data', (b: Buffer) => (out += b.toString()));
  const senderExit = await new Promise<number | null>((ok) => sender.once('exit', (c) => ok(c)));
  t.is(senderExit, 0);
  t.is(await receiverExit, 0, 'receiver saw STOPPING=1 and exited');
  return { received, report: JSON.parse(out.trim()) as { kind: string; notifySocket: string; watchdogMs: number }, senderPid: sender.pid! };
}

const expected = ['STATUS=starting', 'READY=1', 'WATCHDOG=1', 'STATUS=node "node-a" registered READY=0', 'STOPPING=1'];

test('real NOTIFY_SOCKET (filesystem path): the datagrams arrive exactly, from the agent pid', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-notify-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const socketPath = join(dir, 'notify.sock');
  const { received, report, senderPid } = await roundTrip(t, socketPath);
  t.deepEqual(
    received.map((d) => d.data),
    expected,
  );
  t.true(received.every((d) => d.pid === senderPid), 'credentials name the agent process');
  t.deepEqual(report, { kind: 'SystemdNotifier', notifySocket: socketPath, watchdogMs: 30_000 });
});

test('real NOTIFY_SOCKET (abstract namespace, as systemd passes it): the datagrams arrive exactly', async (t) => {
  const socketPath = `@svc-notify-test-${process.pid}-${Date.now()}`;
  const { received, report } = await roundTrip(t, socketPath);
  t.deepEqual(
    received.map((d) => d.data),
    expected,
  );
  t.is(report.notifySocket, socketPath);
});
