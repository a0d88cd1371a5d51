import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { acquireLockFile, LockHeldError, lockSocketName } from '../../../../agent/platform/lock-file';

const holderScript = resolve(__dirname, '../../../fixtures/agent/lock-holder.js');

function tmp(t: import('ava').ExecutionContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-lock-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Starts the fixture child and resolves with its first stdout line. */
function startHolder(t: import('ava').ExecutionContext, path: string): { child: ChildProcess; firstLine: Promise<string> } {
  const child = spawn(process.execPath, [holderScript, path], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const rl = createInterface({ input: child.stdout });
  const firstLine = new Promise<string>((ok, fail) => {
    rl.once('line', ok);
    child.once('exit', (code) => fail(new Error(`holder exited with ${code} before printing`)));
  });
  return { child, firstLine };
}

test('the file is created 0600 holding the pid; a second lock in the same process is refused', async (t) => {
  const path = join(tmp(t), 'svc-node.lock');
  const lock = await acquireLockFile(path);
  t.is(statSync(path).mode & 0o777, 0o600);
  t.is(readFileSync(path, 'utf8'), `${process.pid}\n`);
  const e = await t.throwsAsync(acquireLockFile(path), { instanceOf: LockHeldError });
  t.is((e).holderPid, process.pid);
  t.regex(e.message, /is held by another svc-node process \(pid \d+\); only one agent may run on a machine$/);
  await lock.release();
  await lock.release();
  const again = await acquireLockFile(path);
  await again.release();
});

test('a live agent in another process keeps the lock; after kill -9 it is free again', async (t) => {
  const path = join(tmp(t), 'svc-node.lock');
  const { child, firstLine } = startHolder(t, path);
  t.is(await firstLine, `locked ${child.pid}`);

  const refused = await t.throwsAsync(acquireLockFile(path), { instanceOf: LockHeldError });
  t.is((refused).holderPid, child.pid);

  const exited = new Promise<NodeJS.Signals | null>((ok) => child.once('exit', (_c, sig) => ok(sig)));
  child.kill('SIGKILL');
  t.is(await exited, 'SIGKILL');

  // The kernel released the abstract socket with the process: no stale lock despite the pid left in the file.
  t.is(readFileSync(path, 'utf8'), `${child.pid}\n`);
  const lock = await acquireLockFile(path);
  t.is(readFileSync(path, 'utf8'), `${process.pid}\n`);
  await lock.release();
});

test('a second agent process is refused while this one holds the lock', async (t) => {
  const path = join(tmp(t), 'svc-node.lock');
  const lock = await acquireLockFile(path);
  t.teardown(() => lock.release());
  const { child, firstLine } = startHolder(t, path);
  const exitCode = new Promise<number | null>((ok) => child.once('exit', (c) => ok(c)));
  t.regex(await firstLine, new RegExp(`^refused lock file .* is held by another svc-node process \\(pid ${process.pid}\\)`));
  t.is(await exitCode, 3);
});

test('symlinked and relative spellings of one lock file are the same lock', async (t) => {
  const dir = tmp(t);
  const path = join(dir, 'svc-node.lock');
  const lock = await acquireLockFile(path);
  t.teardown(() => lock.release());
  const { symlinkSync } = await import('node:fs');
  symlinkSync(path, join(dir, 'alias.lock'));
  await t.throwsAsync(acquireLockFile(join(dir, 'alias.lock')), { instanceOf: LockHeldError });
});

test('abstract names fit sun_path: long paths are hashed', (t) => {
  t.is(lockSocketName('/var/run/svc-node.lock'), '\0svc-node-lock:/var/run/svc-node.lock');
  const long = '/' + 'x'.repeat(200);
  const name = lockSocketName(long);
  t.true(name.startsWith('\0svc-node-lock:sha256:'));
  t.true(Buffer.byteLength(name) <= 108);
  t.not(lockSocketName(long + 'y'), name);
});

test('a lock file in a missing directory fails with the fs error', async (t) => {
  await t.throwsAsync(acquireLockFile(join(tmp(t), 'no', 'such', 'x.lock')), { code: 'ENOENT' });
});
