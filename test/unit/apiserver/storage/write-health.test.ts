import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStorage } from '../../../../apiserver/storage/sqlite';
import { StorageError, type StorageEvent } from '../../../../apiserver/storage/storage';
import { StoreWriteHealth, WriteTrackingStorage, type WriteProbe } from '../../../../apiserver/storage/write-health';

const full = () => new StorageError('Unavailable', 'sqlite: database or disk is full');

function harness(o: { probe?: boolean; free?: number | undefined } = {}) {
  let now = 0;
  let free = o.free;
  let probeFails = true;
  const probes: number[] = [];
  const changes: (string | undefined)[] = [];
  const probe: WriteProbe = {
    probeWrite: () => {
      probes.push(now);
      return probeFails ? Promise.reject(full()) : Promise.resolve();
    },
  };
  const health = new StoreWriteHealth({
    now: () => now,
    ...(o.probe === false ? {} : { probe }),
    freeBytes: () => Promise.resolve(free),
    minFreeBytes: 100,
    probeIntervalMs: 1000,
    onChange: (f) => changes.push(f),
  });
  return {
    health,
    probes,
    changes,
    advance: (ms: number) => (now += ms),
    setFree: (n: number | undefined) => (free = n),
    probeWorks: () => (probeFails = false),
  };
}

test('healthy: the check passes and never probes; conflicts and missing keys are answers, not failures', async (t) => {
  const h = harness({ free: 0 });
  for (let i = 0; i < 5; i++) t.is(await h.health.check(), undefined);
  h.health.writeFailed(new StorageError('Conflict', 'x'));
  h.health.writeFailed(new StorageError('NotFound', 'x'));
  h.health.writeFailed(new Error('not a storage error'));
  t.is(await h.health.check(), undefined);
  t.deepEqual(h.probes, []);
  t.deepEqual(h.changes, []);
});

test('a failed write fails the check; it is probed at most once per interval and only with room for the largest write', async (t) => {
  const h = harness({ free: 10 });
  h.health.writeFailed(full());
  t.deepEqual(h.changes, ['sqlite: database or disk is full']);
  t.regex((await h.health.check()) ?? '', /store writes fail: 10 bytes free where the store writes, 100 needed/);
  t.deepEqual(h.probes, [], 'no probe write while the disk is full: a small one could squeeze into space the store owns');
  h.setFree(1000);
  t.truthy(await h.health.check(), 'within the interval nothing is tried');
  h.advance(1000);
  t.regex((await h.health.check()) ?? '', /store writes fail: sqlite: database or disk is full/);
  t.deepEqual(h.probes, [1000]);
  for (let i = 0; i < 10; i++) await h.health.check();
  t.deepEqual(h.probes, [1000], 'asking often does not write often');
  h.probeWorks();
  h.advance(1000);
  t.is(await h.health.check(), undefined);
  t.deepEqual(h.probes, [1000, 2000]);
  t.deepEqual(h.changes, ['sqlite: database or disk is full', undefined]);
});

test('a durable write clears the failure at once; without a probe (etcd) only a write does', async (t) => {
  const h = harness({ probe: false });
  h.health.writeFailed(full());
  h.advance(60_000);
  t.truthy(await h.health.check());
  h.health.writeSucceeded();
  t.is(await h.health.check(), undefined);
  t.deepEqual(h.changes, ['sqlite: database or disk is full', undefined]);
});

test('concurrent checks share one probe', async (t) => {
  const h = harness({ free: undefined });
  h.health.writeFailed(full());
  h.probeWorks();
  const results = await Promise.all([h.health.check(), h.health.check(), h.health.check()]);
  t.deepEqual(results, [undefined, undefined, undefined]);
  t.is(h.probes.length, 1);
});

test('WriteTrackingStorage reports each write outcome and passes results and errors through', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-write-health-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const sqlite = SqliteStorage.open(join(dir, 'state.db'));
  const h = harness({ free: 1000 });
  const s = new WriteTrackingStorage(sqlite, h.health);
  h.health.writeFailed(full());
  const kv = await s.create('/a', Buffer.from('1'));
  t.is(kv.modRevision, 1);
  t.deepEqual(h.changes, ['sqlite: database or disk is full', undefined], 'a durable write cleared it');
  await t.throwsAsync(s.create('/a', Buffer.from('2')), { instanceOf: StorageError, message: /already exists/ });
  t.is(await h.health.check(), undefined, 'AlreadyExists is not a store failure');
  await s.close();
  const err = await t.throwsAsync(s.update('/a', Buffer.from('3'), 1));
  t.is((err as StorageError).code, 'Unavailable');
  t.regex((await h.health.check()) ?? '', /store writes fail/);
});

test('sqlite probeWrite: durable, outside the revision log (no revision, no watch event); Unavailable once closed', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-write-probe-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const s = SqliteStorage.open(join(dir, 'state.db'));
  await s.create('/k', Buffer.from('v'));
  const ac = new AbortController();
  const seen: StorageEvent[] = [];
  const watching = (async () => {
    for await (const ev of s.watch('', 0, ac.signal)) seen.push(ev);
  })().catch(() => undefined);
  for (let i = 0; i < 3; i++) await s.probeWrite();
  t.is(await s.currentRevision(), 1);
  await s.create('/k2', Buffer.from('v'));
  t.is(await s.currentRevision(), 2, 'the next write takes the next revision');
  // The watcher saw the two writes and nothing of the probes.
  for (let i = 0; i < 100 && seen.length < 2; i++) await new Promise((r) => setImmediate(r));
  t.deepEqual(seen.map((e) => [e.key, e.revision]), [['/k', 1], ['/k2', 2]]);
  ac.abort();
  await watching;
  await s.close();
  const err = await t.throwsAsync(s.probeWrite());
  t.is((err as StorageError).code, 'Unavailable');
});
