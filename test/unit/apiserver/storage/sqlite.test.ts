import test from 'ava';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStorage } from '../../../../apiserver/storage/sqlite';
import { StorageError, type StorageEvent } from '../../../../apiserver/storage/storage';
import { storageConformance } from '../../../conformance/storage-suite';

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'svc-sqlite-'));
}

storageConformance('sqlite', () => {
  const dir = tempDir();
  const storage = SqliteStorage.open(join(dir, 'data', 'state.db'));
  return {
    storage,
    cleanup: async () => {
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

test('sqlite: creates missing parent directories 0700 and the database and WAL files 0600', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'a', 'b', 'state.db');
  const s = SqliteStorage.open(path);
  await s.create('/k', Buffer.from('v'));
  t.is(statSync(join(dir, 'a')).mode & 0o777, 0o700);
  t.is(statSync(join(dir, 'a', 'b')).mode & 0o777, 0o700);
  t.is(statSync(path).mode & 0o777, 0o600);
  t.true(existsSync(`${path}-wal`));
  t.is(statSync(`${path}-wal`).mode & 0o777, 0o600);
  await s.close();
});

test('sqlite: reopening keeps data, compaction state and the revision counter', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'state.db');
  const s1 = SqliteStorage.open(path);
  const a = await s1.create('/p/a', Buffer.from('a1'));
  await s1.update('/p/a', Buffer.from('a2'), a.modRevision);
  await s1.create('/p/b', Buffer.from('b1'));
  const d = await s1.delete('/p/b');
  // The newest row is a tombstone that compaction removes; the counter must not go back.
  await s1.compact(d.modRevision);
  await s1.close();

  const s2 = SqliteStorage.open(path);
  t.teardown(() => s2.close());
  t.is(await s2.currentRevision(), d.modRevision);
  t.is(await s2.compactedRevision(), d.modRevision);
  const got = await s2.get('/p/a');
  t.is(got?.value.toString(), 'a2');
  t.is(got?.createRevision, a.modRevision);
  t.is(await s2.get('/p/b'), null);
  const c = await s2.create('/p/c', Buffer.from('c1'));
  t.is(c.modRevision, d.modRevision + 1);
});

test('sqlite: a second open of the same file fails with Unavailable while the first is open', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'state.db');
  const s1 = SqliteStorage.open(path);
  await s1.create('/k', Buffer.from('v'));
  const err = t.throws(() => SqliteStorage.open(path), { instanceOf: StorageError });
  t.is(err?.code, 'Unavailable');
  await s1.close();
  const s2 = SqliteStorage.open(path);
  t.is((await s2.get('/k'))?.value.toString(), 'v');
  await s2.close();
});

test('sqlite: close ends watchers with Unavailable and later calls fail with Unavailable', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const s = SqliteStorage.open(join(dir, 'state.db'));
  const it = s.watch('/', 0, new AbortController().signal)[Symbol.asyncIterator]();
  const waiting = it.next();
  await s.close();
  const werr = await t.throwsAsync(waiting, { instanceOf: StorageError });
  t.is(werr?.code, 'Unavailable');
  const err = await t.throwsAsync(s.get('/k'), { instanceOf: StorageError });
  t.is(err?.code, 'Unavailable');
  await s.close(); // idempotent
});

test('sqlite: writes issued before close are committed, not dropped', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'state.db');
  const s1 = SqliteStorage.open(path);
  const writes = [s1.create('/a', Buffer.from('1')), s1.create('/b', Buffer.from('1')), s1.create('/a', Buffer.from('2'))];
  await s1.close();
  const [a, bb, dup] = await Promise.allSettled(writes);
  t.is(a.status, 'fulfilled');
  t.is(bb.status, 'fulfilled');
  t.is(dup.status === 'rejected' && (dup.reason as StorageError).code, 'AlreadyExists');
  const s2 = SqliteStorage.open(path);
  t.teardown(() => s2.close());
  t.deepEqual(
    (await s2.list('/')).items.map((kv) => `${kv.key}@${kv.modRevision}`),
    ['/a@1', '/b@2'],
  );
});

test('sqlite: a burst larger than one commit batch keeps every write, in order', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const s = SqliteStorage.open(join(dir, 'state.db'), { synchronous: 'NORMAL' });
  t.teardown(() => s.close());
  const ac = new AbortController();
  t.teardown(() => ac.abort());
  const it = s.watch('/burst/', 0, ac.signal)[Symbol.asyncIterator]();
  const first = it.next();
  const n = 2500;
  const done = await Promise.all(Array.from({ length: n }, (_, i) => s.create(`/burst/${i}`, Buffer.from(String(i)))));
  t.deepEqual(
    done.map((kv) => kv.modRevision),
    Array.from({ length: n }, (_, i) => i + 1),
  );
  const revs = [((await first).value as StorageEvent).revision];
  while (revs.length < n) {
    const r = await it.next();
    if (r.done) break;
    revs.push(r.value.revision);
  }
  t.deepEqual(revs, Array.from({ length: n }, (_, i) => i + 1));
  t.is((await s.list('/burst/', { limit: 1 })).remaining, n - 1);
});

test('sqlite: oldestRevisionAfter maps write times to revisions for time-based compaction', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  let clock = 1000;
  const s = SqliteStorage.open(join(dir, 'state.db'), { now: () => clock });
  t.teardown(() => s.close());
  t.is(s.oldestRevisionAfter(0), 1); // empty store: the next revision
  const a = await s.create('/a', Buffer.from('1')); // rev 1 @1000
  clock = 2000;
  await s.create('/b', Buffer.from('1')); // rev 2 @2000
  await s.update('/a', Buffer.from('2'), a.modRevision); // rev 3 @2000
  clock = 3000;
  await s.create('/c', Buffer.from('1')); // rev 4 @3000
  t.is(s.oldestRevisionAfter(0), 1);
  t.is(s.oldestRevisionAfter(1500), 2);
  t.is(s.oldestRevisionAfter(2000), 2);
  t.is(s.oldestRevisionAfter(2500), 4);
  t.is(s.oldestRevisionAfter(9999), 5);
  // "Keep everything that was current within the window": here compacts at 3.
  await s.compact(s.oldestRevisionAfter(2500) - 1);
  t.is(await s.compactedRevision(), 3);
  t.is(s.oldestRevisionAfter(0), 4);
  t.is((await s.get('/a'))?.value.toString(), '2');
});

test('sqlite: a watcher that overflows its buffer catches up from the log without gaps', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const s = SqliteStorage.open(join(dir, 'state.db'), { watchBufferLimit: 4, synchronous: 'NORMAL' });
  t.teardown(() => s.close());
  const ac = new AbortController();
  t.teardown(() => ac.abort());
  const it = s.watch('/p/', 0, ac.signal)[Symbol.asyncIterator]();
  const first = it.next();
  let kv = await s.create('/p/a', Buffer.from('0'));
  for (let i = 1; i < 50; i++) {
    kv = await s.update('/p/a', Buffer.from(String(i)), kv.modRevision);
    await s.create(`/q/${i}`, Buffer.from('other prefix'));
  }
  const got: StorageEvent[] = [(await first).value as StorageEvent];
  while (got.length < 50) {
    const r = await it.next();
    if (r.done) break;
    got.push(r.value);
  }
  t.deepEqual(
    got.map((e) => e.value.toString()),
    Array.from({ length: 50 }, (_, i) => String(i)),
  );
  t.deepEqual(
    got.map((e) => e.revision),
    Array.from({ length: 50 }, (_, i) => (i === 0 ? 1 : 2 * i)),
  );
  // Back in live mode afterwards.
  const next = it.next();
  await s.delete('/p/a');
  t.is((await next).value?.type, 'delete');
});

test('sqlite: a watcher past its byte bound catches up from the log in pages bounded by bytes, without gaps', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // 100 bytes: every live event past the first overflows, and every page of the log holds one event.
  const s = SqliteStorage.open(join(dir, 'state.db'), { watchBufferBytes: 100, synchronous: 'NORMAL' });
  t.teardown(() => s.close());
  const ac = new AbortController();
  t.teardown(() => ac.abort());
  const it = s.watch('/p/', 0, ac.signal)[Symbol.asyncIterator]();
  const first = it.next();
  for (let i = 0; i < 20; i++) await s.create(`/p/${String(i).padStart(2, '0')}`, Buffer.alloc(80, 'v'));
  const got: number[] = [((await first).value as StorageEvent).revision];
  while (got.length < 20) got.push(((await it.next()).value as StorageEvent).revision);
  t.deepEqual(got, Array.from({ length: 20 }, (_, i) => i + 1));
  const next = it.next();
  await s.delete('/p/00');
  t.is((await next).value?.type, 'delete', 'live again afterwards');
});

test('sqlite: an overflowed watcher whose history was compacted away gets Compacted', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const s = SqliteStorage.open(join(dir, 'state.db'), { watchBufferLimit: 2, synchronous: 'NORMAL' });
  t.teardown(() => s.close());
  const ac = new AbortController();
  t.teardown(() => ac.abort());
  const it = s.watch('/p/', 0, ac.signal)[Symbol.asyncIterator]();
  const first = it.next();
  let kv = await s.create('/p/a', Buffer.from('0'));
  t.is((await first).value?.revision, 1);
  for (let i = 1; i < 10; i++) kv = await s.update('/p/a', Buffer.from(String(i)), kv.modRevision);
  await s.compact(kv.modRevision);
  const err = await t.throwsAsync(it.next(), { instanceOf: StorageError });
  t.is(err?.code, 'Compacted');
});

test('sqlite: every acknowledged write survives kill -9 of the writer', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'state.db');
  const writer = join(__dirname, '../../../fixtures/storage/writer.js');
  const child = spawn(process.execPath, [writer, path, '1000000', '8'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let killed = false;
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, signal) => resolve(signal)));
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    // Kill mid-stream once a few hundred writes were acknowledged.
    if (!killed && out.split('\n').length > 300) {
      killed = true;
      child.kill('SIGKILL');
    }
  });
  const signal = await exited;
  t.is(signal, 'SIGKILL', `writer ended on its own: ${err}`);

  // Only complete lines count: a line cut by the kill was not an acknowledgement we saw.
  const lines = out.split('\n').slice(0, -1);
  const acks = lines.map((l) => {
    const m = /^ack (\S+) (\d+)$/.exec(l);
    if (!m) throw new Error(`bad writer line ${JSON.stringify(l)}`);
    return { key: m[1], rev: Number(m[2]) };
  });
  t.true(acks.length >= 300);

  const s = SqliteStorage.open(path);
  t.teardown(() => s.close());
  const head = await s.currentRevision();
  t.true(head >= Math.max(...acks.map((a) => a.rev)));
  const lost: string[] = [];
  for (const a of acks) {
    const kv = await s.get(a.key);
    if (!kv || kv.modRevision !== a.rev || kv.value.toString() !== `value-of-${a.key}`) lost.push(`${a.key}@${a.rev}`);
  }
  t.deepEqual(lost, []);
  // Only creates were written, so the surviving log is dense: one key per revision up to the head.
  const listed = await s.list('/durable/');
  t.deepEqual(
    listed.items.map((kv) => kv.modRevision).sort((x, y) => x - y),
    Array.from({ length: head }, (_, i) => i + 1),
  );
});
