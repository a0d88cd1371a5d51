/**
 * The plugin registry against real plugins: each serves pluginregistration.Registration on a real
 * unix socket in a temp registry directory, and the registry dials them with a real gRPC client.
 * The rescan period is long (60 s) where a test is about inotify, so only the watch can wake it.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { realClock } from '../../../../agent/platform/clock';
import { PluginRegistry } from '../../../../agent/pluginregistry/plugin-registry';
import { FakeRegistrationPlugin, makeStaleSocket, RecordingRegistrar, type RegistrarCall } from '../../../helpers/device-doubles';
import { MemLog } from '../node/fakes/mem-log';

interface Env {
  dir: string;
  registrar: RecordingRegistrar;
  registry: PluginRegistry;
  log: MemLog;
  plugins: FakeRegistrationPlugin[];
  start(): void;
}

function env(t: { teardown(fn: () => Promise<void> | void): void }, resyncMs = 60_000): Env {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-preg-'));
  const registrar = new RecordingRegistrar();
  const log = new MemLog();
  const registry = new PluginRegistry({ dir, registrar, clock: realClock, log, resyncMs, backoffInitialMs: 200, backoffMaxMs: 400 });
  const ac = new AbortController();
  let running: Promise<void> | undefined;
  const e: Env = {
    dir,
    registrar,
    registry,
    log,
    plugins: [],
    start: () => {
      running = registry.run(ac.signal);
    },
  };
  t.teardown(async () => {
    ac.abort();
    await running;
    for (const p of e.plugins) await p.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return e;
}

async function plugin(e: Env, file: string, info: Parameters<typeof FakeRegistrationPlugin.start>[1]): Promise<FakeRegistrationPlugin> {
  const p = await FakeRegistrationPlugin.start(path.join(e.dir, file), info);
  e.plugins.push(p);
  return p;
}

const registers = (name: string) => (c: RegistrarCall[]) => c.some((x) => x.op === 'register' && x.name === name);

test('a plugin socket present at start is found by the initial scan, registered, and told so', async (t) => {
  const e = env(t);
  const p = await plugin(e, 'foo.sock', { name: 'example.com/foo', supported_versions: ['v1alpha', 'v1beta1'] });
  e.start();
  await e.registrar.until(registers('example.com/foo'));
  t.deepEqual(e.registrar.calls[0], { op: 'register', name: 'example.com/foo', endpoint: p.socketPath, versions: ['v1alpha', 'v1beta1'] });
  t.deepEqual(await p.statusCount(1), [{ plugin_registered: true, error: '' }]);
  t.deepEqual(e.registry.plugins(), [{ socketPath: p.socketPath, name: 'example.com/foo', endpoint: p.socketPath }]);
});

test('a socket created later is picked up through inotify; removing it deregisters', async (t) => {
  const e = env(t);
  e.start();
  await waitFor(() => e.log.find('watching for plugin registration sockets').length > 0);
  const p = await plugin(e, 'bar.sock', { name: 'example.com/bar', endpoint: '/run/bar/dp.sock' });
  await e.registrar.until(registers('example.com/bar'));
  t.is((e.registrar.calls[0] as { endpoint: string }).endpoint, '/run/bar/dp.sock');
  await p.statusCount(1);
  await p.stop();
  t.false(existsSync(p.socketPath));
  await e.registrar.until((c) => c.some((x) => x.op === 'deregister'));
  t.deepEqual(e.registrar.calls.at(-1), { op: 'deregister', name: 'example.com/bar', endpoint: '/run/bar/dp.sock' });
  t.deepEqual(e.registry.plugins(), []);
});

test('plugins of other types and invalid device plugins are refused with a clear status, never reaching the registrar', async (t) => {
  const e = env(t);
  const csi = await plugin(e, 'csi.sock', { type: 'CSIPlugin', name: 'csi.example.com', supported_versions: ['1.0.0'] });
  const old = await plugin(e, 'old.sock', { name: 'example.com/old', supported_versions: ['v1alpha'] });
  const bad = await plugin(e, 'bad.sock', { name: 'gpu' });
  const good = await plugin(e, 'good.sock', { name: 'example.com/good' });
  e.start();
  const [s1] = await csi.statusCount(1);
  t.false(s1.plugin_registered);
  t.is(s1.error, `RegisterPlugin error -- no handler registered for plugin type: CSIPlugin at socket ${csi.socketPath} (svc-node does not support CSI plugins)`);
  const [s2] = await old.statusCount(1);
  t.false(s2.plugin_registered);
  t.regex(s2.error, /manager version, v1beta1, is not among plugin supported versions \[v1alpha\]/);
  const [s3] = await bad.statusCount(1);
  t.false(s3.plugin_registered);
  t.regex(s3.error, /the ResourceName "gpu" is invalid/);
  await good.statusCount(1);
  t.deepEqual(e.registrar.calls.map((c) => c.name), ['example.com/good']);
  await waitFor(() => e.log.find('plugin registration failed').length >= 3);
  // Each refusal is logged loudly, naming its socket.
  const logged = new Set(e.log.find('plugin registration failed').filter((l) => l.level === 'warn').map((l) => l.obj['socket']));
  t.deepEqual([...logged].sort(), [bad.socketPath, csi.socketPath, old.socketPath].sort());
});

test('a registrar refusal is sent to the plugin and retried with back-off until it succeeds', async (t) => {
  const e = env(t);
  e.registrar.failWith = 'resource busy';
  const p = await plugin(e, 'foo.sock', { name: 'example.com/foo' });
  e.start();
  const [first] = await p.statusCount(1);
  t.deepEqual(first, { plugin_registered: false, error: 'RegisterPlugin error -- plugin registration failed with err: resource busy' });
  await p.statusCount(2); // retried
  e.registrar.failWith = undefined;
  await waitFor(() => p.statuses.some((s) => s.plugin_registered));
  t.deepEqual(p.statuses.at(-1), { plugin_registered: true, error: '' });
  t.is(e.registry.plugins().length, 1);
});

test('a stale socket (plugin died without removing it) is retried, not registered, and a new plugin on that path is taken at once', async (t) => {
  const e = env(t);
  const sock = path.join(e.dir, 'dead.sock');
  await makeStaleSocket(sock);
  e.start();
  await waitFor(() => e.log.find('plugin registration failed').some((l) => l.obj['socket'] === sock));
  t.true(existsSync(sock), 'the registry never deletes plugin sockets');
  t.deepEqual(e.registrar.calls, []);
  rmSync(sock);
  const p = await plugin(e, 'dead.sock', { name: 'example.com/revived' });
  await e.registrar.until(registers('example.com/revived'));
  t.true((await p.statusCount(1))[0].plugin_registered);
});

test('a plugin restarting under the same socket name is deregistered and registered again', async (t) => {
  const e = env(t);
  const first = await plugin(e, 'foo.sock', { name: 'example.com/foo' });
  e.start();
  await first.statusCount(1);
  await first.stop();
  e.plugins.splice(e.plugins.indexOf(first), 1);
  const second = await plugin(e, 'foo.sock', { name: 'example.com/foo' });
  await second.statusCount(1);
  const ops = e.registrar.calls.map((c) => c.op);
  t.deepEqual(ops, ['register', 'deregister', 'register']);
  t.is(second.getInfoCalls, 1);
});

test('with frequent rescans racing inotify, a plugin restart still ends in one registration per plugin instance', async (t) => {
  // Rescans every 200 ms and inotify both wake the loop; neither may register an instance twice.
  const e = env(t, 200);
  const first = await plugin(e, 'foo.sock', { name: 'example.com/foo' });
  e.start();
  await first.statusCount(1);
  await first.stop();
  e.plugins.splice(e.plugins.indexOf(first), 1);
  const second = await plugin(e, 'foo.sock', { name: 'example.com/foo' });
  await second.statusCount(1);
  t.is(e.registrar.calls.filter((c) => c.op === 'register').length, 2);
  t.is(e.registrar.calls.at(-1)?.op, 'register');
  t.is(e.registry.plugins().length, 1);
});

test('a socket in a subdirectory made after start is found (the new directory is watched too)', async (t) => {
  const e = env(t);
  e.start();
  await waitFor(() => e.log.find('watching for plugin registration sockets').length > 0);
  mkdirSync(path.join(e.dir, 'vendor'));
  const p = await plugin(e, path.join('vendor', 'dp.sock'), { name: 'vendor.example/dev' });
  await e.registrar.until(registers('vendor.example/dev'));
  t.true((await p.statusCount(1))[0].plugin_registered);
});

async function waitFor(pred: () => boolean, boundMs = 20_000): Promise<void> {
  const end = Date.now() + boundMs;
  while (!pred()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
