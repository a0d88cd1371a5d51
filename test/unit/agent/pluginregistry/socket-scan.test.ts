import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { scanSockets } from '../../../../agent/pluginregistry/socket-scan';
import { makeStaleSocket } from '../../../helpers/device-doubles';

test('finds sockets (also in subdirectories), skips dot names and other files; a remade socket gets a new key', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-scan-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(path.join(dir, 'csi'));
  await makeStaleSocket(path.join(dir, 'a.sock'));
  await makeStaleSocket(path.join(dir, 'csi', 'b.sock'));
  await makeStaleSocket(path.join(dir, '.hidden.sock'));
  writeFileSync(path.join(dir, 'notes.txt'), 'x');
  const first = await scanSockets(dir);
  t.deepEqual([...first.sockets.keys()].sort(), [path.join(dir, 'a.sock'), path.join(dir, 'csi', 'b.sock')]);
  t.deepEqual(first.dirs.sort(), [dir, path.join(dir, 'csi')]);

  rmSync(path.join(dir, 'a.sock'));
  // Another socket takes an inode first, so the remade one cannot reuse a's.
  await makeStaleSocket(path.join(dir, 'csi', 'c.sock'));
  await makeStaleSocket(path.join(dir, 'a.sock'));
  const second = await scanSockets(dir);
  t.not(second.sockets.get(path.join(dir, 'a.sock')), first.sockets.get(path.join(dir, 'a.sock')));
  t.is(second.sockets.get(path.join(dir, 'csi', 'b.sock')), first.sockets.get(path.join(dir, 'csi', 'b.sock')));
});

test('a socket remade at once on the same inode still gets a new key (the time tells them apart)', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-scan-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const sock = path.join(dir, 'a.sock');
  await makeStaleSocket(sock);
  const before = (await scanSockets(dir)).sockets.get(sock)!;
  rmSync(sock);
  // File times come from the kernel's coarse clock: wait past one tick so they can differ.
  await new Promise((r) => setTimeout(r, 25));
  await makeStaleSocket(sock);
  const after = (await scanSockets(dir)).sockets.get(sock)!;
  t.not(after, before);
  // The key never ends in a zero time, which would make every remade socket on that inode look the same.
  t.notRegex(after, /:0$/);
});

test('an unreadable root rejects', async (t) => {
  await t.throwsAsync(scanSockets(path.join(tmpdir(), 'svc-scan-does-not-exist-' + process.pid)), { code: 'ENOENT' });
});
