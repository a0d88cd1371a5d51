/** Container log rotation against a fake runtime and real files in a temp dir. */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import test, { type ExecutionContext } from 'ava';
import { ContainerLogManager } from '../../../../agent/logs/container-log-manager';
import { FakeClock } from '../../../helpers/fake-clock';
import { MemLog } from '../node/fakes/mem-log';
import { FakeLogRuntime, type FakeContainer } from './fake-log-runtime';

const MAX = 4096;
const START = Date.UTC(2025, 0, 1, 0, 0, 0);
/** Appears in every log line written here; must never reach the agent's own log. */
const SECRET = 'container-output-not-for-the-agent-log';

/** CRI-format lines tagged `tag`, at least `bytes` long. */
function output(tag: string, bytes = MAX): Buffer {
  const line = `2025-01-01T00:00:00.000000000Z stdout F ${SECRET} ${tag}\n`;
  return Buffer.from(line.repeat(Math.ceil(bytes / line.length)));
}

interface Env {
  dir: string;
  clock: FakeClock;
  log: MemLog;
  runtime: FakeLogRuntime;
  manager: ContainerLogManager;
  /** The log path of container `id` (<dir>/<id>/0.log). */
  logOf(id: string): string;
  /** Sorted names of the files in container `id`'s log directory. */
  files(id: string): Promise<string[]>;
}

/** A test whose last check is that no container output reached the agent's log. */
function rotationTest(title: string, fn: (t: ExecutionContext, start: (containers: Omit<FakeContainer, 'logPath'>[], maxFiles?: number) => Promise<Env>) => Promise<void>): void {
  test(title, async (t) => {
    let env: Env | undefined;
    await fn(t, async (containers, maxFiles) => (env = await setup(t, containers, maxFiles)));
    t.false(JSON.stringify(env?.log.lines ?? []).includes(SECRET), 'container output was logged');
  });
}

async function setup(t: ExecutionContext, containers: Omit<FakeContainer, 'logPath'>[], maxFiles = 5): Promise<Env> {
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-logrotate-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const logOf = (id: string) => path.join(dir, id, '0.log');
  for (const c of containers) await mkdir(path.dirname(logOf(c.id)));
  const runtime = new FakeLogRuntime(containers.map((c) => ({ ...c, logPath: logOf(c.id) })));
  const clock = new FakeClock(START);
  const log = new MemLog();
  const manager = new ContainerLogManager({ runtime, clock, log, maxSizeBytes: MAX, maxFiles, intervalMs: 10_000 });
  return { dir, clock, log, runtime, manager, logOf, files: async (id) => (await readdir(path.dirname(logOf(id)))).sort() };
}

rotationTest('a log below the size is left alone', async (t, start) => {
  const e = await start([{ id: 'a' }]);
  const small = output('small', MAX - 200).subarray(0, MAX - 1);
  await writeFile(e.logOf('a'), small);
  await e.manager.runOnce();
  t.deepEqual(await e.files('a'), ['0.log']);
  t.deepEqual(await readFile(e.logOf('a')), small);
  t.deepEqual(e.runtime.reopened, []);
  t.deepEqual(e.log.lines.filter((l) => l.level !== 'debug'), []);
});

rotationTest('a log at the size is renamed with the UTC time of the clock and the runtime reopens it', async (t, start) => {
  const e = await start([{ id: 'a' }]);
  const full = output('first').subarray(0, MAX);
  await writeFile(e.logOf('a'), full);
  await e.clock.advance(3_723_000); // 01:02:03
  await e.manager.runOnce();
  t.deepEqual(await e.files('a'), ['0.log', '0.log.20250101-010203']);
  t.deepEqual(await readFile(`${e.logOf('a')}.20250101-010203`), full);
  t.is((await readFile(e.logOf('a'))).length, 0, 'the reopened live log starts empty');
  t.deepEqual(e.runtime.reopened, ['a']);
});

rotationTest('the count limit holds over many rotations: the oldest files go, the newest stay', async (t, start) => {
  const e = await start([{ id: 'a' }], 3);
  const stamps: string[] = [];
  for (let i = 0; i < 6; i++) {
    await writeFile(e.logOf('a'), output(`round ${i}`));
    await e.clock.advance(10_000);
    stamps.push(new Date(e.clock.now()).toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15));
    await e.manager.runOnce();
    const files = await e.files('a');
    t.true(files.length <= 3, `${files.join(' ')} after rotation ${i}`);
  }
  // Live file, the newest rotation as is, the one before it compressed.
  t.deepEqual(await e.files('a'), ['0.log', `0.log.${stamps[4]}.gz`, `0.log.${stamps[5]}`]);
  t.deepEqual(gunzipSync(await readFile(`${e.logOf('a')}.${stamps[4]}.gz`)), output('round 4'));
  t.deepEqual(await readFile(`${e.logOf('a')}.${stamps[5]}`), output('round 5'));
  t.is(e.runtime.reopened.length, 6);
});

rotationTest('every rotated file but the newest is gzipped and decompresses to the original bytes', async (t, start) => {
  const e = await start([{ id: 'a' }], 5);
  const written: Buffer[] = [];
  for (let i = 0; i < 4; i++) {
    // Different sizes and contents, so a mix-up between files would show.
    const bytes = output(`part ${i}`, MAX + i * 1000);
    written.push(bytes);
    await writeFile(e.logOf('a'), bytes);
    await e.manager.runOnce();
    await e.clock.advance(60_000);
  }
  const files = await e.files('a');
  t.deepEqual(files, ['0.log', '0.log.20250101-000000.gz', '0.log.20250101-000100.gz', '0.log.20250101-000200.gz', '0.log.20250101-000300']);
  for (let i = 0; i < 3; i++) t.deepEqual(gunzipSync(await readFile(path.join(e.dir, 'a', files[i + 1]))), written[i], files[i + 1]);
  t.deepEqual(await readFile(path.join(e.dir, 'a', files[4])), written[3]);
});

rotationTest('when the runtime cannot reopen the log, the rotated file is renamed back and a warning names the container and path', async (t, start) => {
  const e = await start([{ id: 'a', reopenError: 'shim is gone' }]);
  const full = output('kept');
  await writeFile(e.logOf('a'), full);
  await e.manager.runOnce();
  t.deepEqual(await e.files('a'), ['0.log']);
  t.deepEqual(await readFile(e.logOf('a')), full);
  t.deepEqual(e.runtime.reopened, ['a']);
  const warn = e.log.lines.find((l) => l.level === 'warn');
  t.like(warn?.obj, { containerId: 'a', path: e.logOf('a'), error: 'shim is gone' });
  t.deepEqual(e.log.lines.filter((l) => l.level === 'error'), []);
});

rotationTest('leftovers of an interrupted rotation are removed: .tmp files, and an uncompressed file whose .gz is complete', async (t, start) => {
  const e = await start([{ id: 'a' }]);
  const log = e.logOf('a');
  await writeFile(`${log}.20241231-230000.gz.tmp`, 'half a gzip stream');
  await writeFile(`${log}.20241231-220000`, output('old'));
  await writeFile(`${log}.20241231-220000.gz`, 'finished gzip');
  await writeFile(log, output('live'));
  await e.manager.runOnce();
  t.deepEqual(await e.files('a'), ['0.log', '0.log.20241231-220000.gz', '0.log.20250101-000000']);
  t.is(await readFile(`${log}.20241231-220000.gz`, 'utf8'), 'finished gzip', 'the complete .gz is kept as it was');
});

rotationTest('a container whose status or rotation fails does not stop the rotation of the others', async (t, start) => {
  const e = await start([{ id: 'a', statusError: 'status exploded' }, { id: 'b' }, { id: 'c' }]);
  await writeFile(e.logOf('b'), output('b'));
  // A directory where an older rotated file should be: compressing it fails.
  await mkdir(`${e.logOf('b')}.20241231-000000`);
  await writeFile(e.logOf('c'), output('c'));
  await e.manager.runOnce();
  t.deepEqual(await e.files('c'), ['0.log', '0.log.20250101-000000']);
  t.deepEqual(e.runtime.reopened, ['c']);
  const errors = e.log.lines.filter((l) => l.level === 'error');
  t.is(errors.length, 2);
  t.like(errors[0]?.obj, { containerId: 'a', error: 'status exploded' });
  t.like(errors[1]?.obj, { containerId: 'b', path: e.logOf('b') });
  t.regex(String(errors[1]?.obj['error']), /EISDIR/);
  t.deepEqual(await readFile(e.logOf('b')), output('b'), "b's live log is untouched");
});

rotationTest('containers that are not running are not rotated', async (t, start) => {
  const e = await start([{ id: 'a', state: 'CONTAINER_EXITED' }]);
  await writeFile(e.logOf('a'), output('done'));
  await e.manager.runOnce();
  t.deepEqual(await e.files('a'), ['0.log']);
  t.deepEqual(e.runtime.reopened, []);
});

rotationTest('a missing live log is reopened (recreated by the runtime) and not rotated', async (t, start) => {
  const e = await start([{ id: 'a' }]);
  await e.manager.runOnce();
  t.deepEqual(e.runtime.reopened, ['a']);
  t.deepEqual(await e.files('a'), ['0.log']);
  t.deepEqual(e.log.lines.filter((l) => l.level !== 'debug'), []);
});

rotationTest('two rotations within one second never overwrite the earlier rotated file', async (t, start) => {
  const e = await start([{ id: 'a' }]);
  await writeFile(e.logOf('a'), output('one'));
  await e.manager.runOnce();
  await writeFile(e.logOf('a'), output('two'));
  await e.clock.advance(500);
  await e.manager.runOnce();
  // The earlier file was compressed as usual; the live one keeps growing until the next second.
  t.deepEqual(await e.files('a'), ['0.log', '0.log.20250101-000000.gz']);
  t.deepEqual(gunzipSync(await readFile(`${e.logOf('a')}.20250101-000000.gz`)), output('one'));
  t.deepEqual(await readFile(e.logOf('a')), output('two'));
  t.deepEqual(e.runtime.reopened, ['a']);
  await e.clock.advance(500);
  await e.manager.runOnce();
  t.deepEqual(await e.files('a'), ['0.log', '0.log.20250101-000000.gz', '0.log.20250101-000001']);
});

rotationTest('run passes at once, then every interval, and returns when the signal aborts', async (t, start) => {
  const e = await start([{ id: 'a' }]);
  await writeFile(e.logOf('a'), output('x'));
  const ac = new AbortController();
  const running = e.manager.run(ac.signal);
  t.true(await settle(() => e.clock.pending === 1));
  t.is(e.runtime.lists, 1);
  t.deepEqual(e.clock.requested, [10_000]);
  t.true(existsSync(`${e.logOf('a')}.20250101-000000`));
  await e.clock.advance(10_000);
  t.true(await settle(() => e.clock.pending === 1 && e.runtime.lists === 2));
  ac.abort();
  await running;
  t.is(e.runtime.lists, 2);
});

/** Lets real file I/O finish (fake time stands still) until cond holds. */
async function settle(cond: () => boolean): Promise<boolean> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  return cond();
}
