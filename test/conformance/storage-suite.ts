import test, { type ExecutionContext } from 'ava';
import { StorageError, type KeyValue, type Storage, type StorageErrorCode, type StorageEvent } from '../../apiserver/storage/storage';

/**
 * The contract of apiserver/storage/storage.ts, run against every backend (SQLite now, etcd later).
 * It uses only the Storage interface. Each test opens a fresh store and also works under its own key
 * prefix, and all tests are serial, so a backend that shares one server between tests (etcd, whose
 * revision counter and compaction are global) still sees one test at a time.
 */
/** A store to run the suite against, and how to throw it away. */
type StorageUnderTest = { storage: Storage; cleanup: () => Promise<void> };

export function storageConformance(name: string, open: () => StorageUnderTest | Promise<StorageUnderTest>): void {
  let seq = 0;
  const it = (title: string, body: (t: ExecutionContext, s: Storage, p: string) => Promise<void>): void => {
    test.serial(`${name}: ${title}`, async (t) => {
      // A guard against a watch that never delivers, not an assertion on speed.
      t.timeout(60_000);
      const { storage, cleanup } = await open();
      t.teardown(cleanup);
      seq += 1;
      await body(t, storage, `/conformance-${process.pid}-${seq}/`);
    });
  };

  // ---- create / get ----

  it('create then get returns the value with createRevision = modRevision = the new revision', async (t, s, p) => {
    const r0 = await s.currentRevision();
    const kv = await s.create(`${p}a`, b('one'));
    t.deepEqual(show(kv), { key: `${p}a`, value: 'one', createRevision: r0 + 1, modRevision: r0 + 1 });
    t.is(await s.currentRevision(), r0 + 1);
    t.deepEqual(show(await s.get(`${p}a`)), show(kv));
    t.is(await s.get(`${p}missing`), null);
  });

  it('create of an existing key fails with AlreadyExists and changes nothing', async (t, s, p) => {
    const kv = await s.create(`${p}a`, b('one'));
    await rejects(t, s.create(`${p}a`, b('two')), 'AlreadyExists');
    t.is(await s.currentRevision(), kv.modRevision);
    t.deepEqual(show(await s.get(`${p}a`)), show(kv));
  });

  it('values are stored byte for byte, including empty ones', async (t, s, p) => {
    const bytes = Buffer.from([0, 1, 0xff, 0xfe, 0x80, 0xc3, 0x28, 0]);
    await s.create(`${p}bin`, bytes);
    await s.create(`${p}empty`, Buffer.alloc(0));
    t.true(bytes.equals(await value(s, `${p}bin`)));
    t.is((await value(s, `${p}empty`)).length, 0);
    const listed = await s.list(p);
    t.true(bytes.equals(listed.items[0].value));
  });

  // ---- update ----

  it('update at the current revision replaces the value and keeps createRevision', async (t, s, p) => {
    const c = await s.create(`${p}a`, b('v1'));
    const u1 = await s.update(`${p}a`, b('v2'), c.modRevision);
    t.deepEqual(show(u1), { key: `${p}a`, value: 'v2', createRevision: c.modRevision, modRevision: c.modRevision + 1 });
    const u2 = await s.update(`${p}a`, b('v3'), u1.modRevision);
    t.is(u2.createRevision, c.createRevision);
    t.is(u2.modRevision, u1.modRevision + 1);
    t.deepEqual(show(await s.get(`${p}a`)), show(u2));
  });

  it('update with a stale revision fails with Conflict carrying the current value', async (t, s, p) => {
    const c = await s.create(`${p}a`, b('v1'));
    const u = await s.update(`${p}a`, b('v2'), c.modRevision);
    const err = await rejects(t, s.update(`${p}a`, b('v3'), c.modRevision), 'Conflict');
    t.deepEqual(show(err.current), show(u));
    t.is(await s.currentRevision(), u.modRevision);
    t.is(str(await value(s, `${p}a`)), 'v2');
  });

  it('update of a missing or deleted key fails with NotFound', async (t, s, p) => {
    await rejects(t, s.update(`${p}none`, b('x'), 1), 'NotFound');
    const c = await s.create(`${p}a`, b('v1'));
    await s.delete(`${p}a`);
    await rejects(t, s.update(`${p}a`, b('v2'), c.modRevision), 'NotFound');
    t.is(await s.get(`${p}a`), null);
  });

  // ---- delete ----

  it('delete returns the deleted value with the deletion revision as modRevision', async (t, s, p) => {
    const c = await s.create(`${p}a`, b('v1'));
    const u = await s.update(`${p}a`, b('v2'), c.modRevision);
    const d = await s.delete(`${p}a`);
    t.deepEqual(show(d), { key: `${p}a`, value: 'v2', createRevision: c.createRevision, modRevision: u.modRevision + 1 });
    t.is(await s.currentRevision(), d.modRevision);
    t.is(await s.get(`${p}a`), null);
  });

  it('delete with an expected revision deletes only when it matches', async (t, s, p) => {
    const c = await s.create(`${p}a`, b('v1'));
    const u = await s.update(`${p}a`, b('v2'), c.modRevision);
    const err = await rejects(t, s.delete(`${p}a`, c.modRevision), 'Conflict');
    t.deepEqual(show(err.current), show(u));
    t.deepEqual(show(await s.get(`${p}a`)), show(u));
    const d = await s.delete(`${p}a`, u.modRevision);
    t.is(d.modRevision, u.modRevision + 1);
    t.is(await s.get(`${p}a`), null);
  });

  it('delete of a missing or already deleted key fails with NotFound', async (t, s, p) => {
    await rejects(t, s.delete(`${p}none`), 'NotFound');
    await s.create(`${p}a`, b('v1'));
    await s.delete(`${p}a`);
    const r = await s.currentRevision();
    await rejects(t, s.delete(`${p}a`), 'NotFound');
    await rejects(t, s.delete(`${p}a`, r), 'NotFound');
    t.is(await s.currentRevision(), r);
  });

  it('a key created again after delete gets a new createRevision', async (t, s, p) => {
    const c1 = await s.create(`${p}a`, b('v1'));
    await s.delete(`${p}a`);
    const c2 = await s.create(`${p}a`, b('v2'));
    t.is(c2.createRevision, c2.modRevision);
    t.true(c2.createRevision > c1.createRevision);
    t.deepEqual(show(await s.get(`${p}a`)), show(c2));
  });

  // ---- revisions ----

  it('every successful write takes the next revision across all keys; failed writes take none', async (t, s, p) => {
    const r0 = await s.currentRevision();
    const revs: number[] = [];
    const a = await s.create(`${p}a`, b('1'));
    revs.push(a.modRevision);
    const z = await s.create(`${p}z`, b('1'));
    revs.push(z.modRevision);
    await rejects(t, s.create(`${p}a`, b('2')), 'AlreadyExists');
    await rejects(t, s.update(`${p}a`, b('2'), z.modRevision), 'Conflict');
    revs.push((await s.update(`${p}a`, b('2'), a.modRevision)).modRevision);
    revs.push((await s.delete(`${p}z`)).modRevision);
    await rejects(t, s.delete(`${p}z`), 'NotFound');
    revs.push((await s.create(`${p}m`, b('1'))).modRevision);
    t.deepEqual(revs, [r0 + 1, r0 + 2, r0 + 3, r0 + 4, r0 + 5]);
    t.is(await s.currentRevision(), r0 + 5);
  });

  it('concurrent writers get unique, dense revisions and lose no update', async (t, s, p) => {
    const keys = [`${p}k0`, `${p}k1`, `${p}k2`];
    for (const k of keys) await s.create(k, b('0'));
    const r0 = await s.currentRevision();
    const revs: number[] = [];
    // Four workers per key each add 1 five times with read-modify-write and retry on Conflict.
    const worker = async (key: string): Promise<void> => {
      for (let i = 0; i < 5; i++) {
        let cur = await s.get(key);
        for (;;) {
          if (!cur) throw new Error(`${key} vanished`);
          try {
            const u = await s.update(key, b(String(Number(str(cur.value)) + 1)), cur.modRevision);
            revs.push(u.modRevision);
            break;
          } catch (e) {
            if (!(e instanceof StorageError) || e.code !== 'Conflict' || !e.current) throw e;
            cur = e.current;
          }
        }
      }
    };
    const creates = Array.from({ length: 20 }, (_, i) => s.create(`${p}c${i}`, b('x')).then((kv) => revs.push(kv.modRevision)));
    await Promise.all([...keys.flatMap((k) => [worker(k), worker(k), worker(k), worker(k)]), ...creates]);
    revs.sort((x, y) => x - y);
    t.deepEqual(revs, Array.from({ length: 80 }, (_, i) => r0 + 1 + i));
    t.is(await s.currentRevision(), r0 + 80);
    for (const k of keys) t.is(str(await value(s, k)), '20');
  });

  it('of concurrent creates of one key exactly one wins; of concurrent updates at one revision too', async (t, s, p) => {
    const r0 = await s.currentRevision();
    const creates = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => s.create(`${p}one`, b(String(i)))));
    const won = creates.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    t.is(won.length, 1);
    t.is(won[0].modRevision, r0 + 1);
    for (const r of creates) if (r.status === 'rejected') t.is((r.reason as StorageError).code, 'AlreadyExists');
    t.is(str(await value(s, `${p}one`)), str(won[0].value));

    const updates = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => s.update(`${p}one`, b(`u${i}`), r0 + 1)));
    const updated = updates.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    t.is(updated.length, 1);
    t.is(updated[0].modRevision, r0 + 2);
    for (const r of updates) {
      if (r.status === 'fulfilled') continue;
      const e = r.reason as StorageError;
      t.is(e.code, 'Conflict');
      t.deepEqual(show(e.current), show(updated[0]));
    }
    t.is(await s.currentRevision(), r0 + 2);
  });

  it('get at an older revision sees the key as it was then', async (t, s, p) => {
    const before = await s.currentRevision();
    const c = await s.create(`${p}a`, b('v1'));
    const u = await s.update(`${p}a`, b('v2'), c.modRevision);
    await s.create(`${p}other`, b('x'));
    const d = await s.delete(`${p}a`);
    t.is(await s.get(`${p}a`, { revision: before }), null);
    t.deepEqual(show(await s.get(`${p}a`, { revision: c.modRevision })), show(c));
    t.deepEqual(show(await s.get(`${p}a`, { revision: d.modRevision - 1 })), show(u));
    t.is(await s.get(`${p}a`, { revision: d.modRevision }), null);
    await rejects(t, s.get(`${p}a`, { revision: d.modRevision + 1 }), 'FutureRevision');
  });

  // ---- list ----

  it('list returns exactly the keys with the prefix, in key order, at the current revision', async (t, s, p) => {
    const parent = p.slice(0, -1);
    for (const k of [`${p}b`, `${p}a/x`, `${p}ab/y`, `${p}a`, `${p}c`, parent, `${parent}0/x`, `${parent}-x/y`, `${p}a/`]) {
      await s.create(k, b(k));
    }
    const all = await s.list(p);
    t.deepEqual(keysOf(all.items), [`${p}a`, `${p}a/`, `${p}a/x`, `${p}ab/y`, `${p}b`, `${p}c`]);
    t.is(all.revision, await s.currentRevision());
    t.is(all.remaining, 0);
    for (const kv of all.items) t.is(str(kv.value), kv.key);
    // Prefixes are plain strings: "<p>a/" must not match "<p>ab/...".
    t.deepEqual(keysOf((await s.list(`${p}a/`)).items), [`${p}a/`, `${p}a/x`]);
    t.deepEqual(keysOf((await s.list(`${p}zz/`)).items), []);
  });

  it('list items carry createRevision and modRevision', async (t, s, p) => {
    const a = await s.create(`${p}a`, b('1'));
    const bb = await s.create(`${p}b`, b('1'));
    const a2 = await s.update(`${p}a`, b('2'), a.modRevision);
    const res = await s.list(p);
    t.deepEqual(res.items.map(show), [show(a2), show(bb)]);
    t.is(a2.createRevision, a.createRevision);
  });

  it('paging with limit and startAfter stays at the first page revision while writes happen', async (t, s, p) => {
    for (const k of ['a', 'b', 'c', 'd', 'e']) await s.create(p + k, b(`${k}1`));
    const page1 = await s.list(p, { limit: 2 });
    t.deepEqual(keysOf(page1.items), [`${p}a`, `${p}b`]);
    t.is(page1.remaining, 3);
    const rev = page1.revision;

    await s.create(`${p}bb`, b('new'));
    const c = await s.get(`${p}c`);
    await s.update(`${p}c`, b('c2'), c!.modRevision);
    await s.delete(`${p}d`);
    await s.create(`${p}f`, b('new'));

    const page2 = await s.list(p, { limit: 2, startAfter: `${p}b`, revision: rev });
    t.is(page2.revision, rev);
    t.deepEqual(page2.items.map((kv) => [kv.key, str(kv.value)]), [[`${p}c`, 'c1'], [`${p}d`, 'd1']]);
    t.is(page2.remaining, 1);
    const page3 = await s.list(p, { limit: 2, startAfter: `${p}d`, revision: rev });
    t.deepEqual(keysOf(page3.items), [`${p}e`]);
    t.is(page3.remaining, 0);

    const latest = await s.list(p);
    t.deepEqual(latest.items.map((kv) => [kv.key, str(kv.value)]), [
      [`${p}a`, 'a1'], [`${p}b`, 'b1'], [`${p}bb`, 'new'], [`${p}c`, 'c2'], [`${p}e`, 'e1'], [`${p}f`, 'new'],
    ]);
  });

  it('remaining counts only live keys after the page at the list revision', async (t, s, p) => {
    for (const k of ['a', 'b', 'c', 'd', 'e', 'f']) await s.create(p + k, b(k));
    await s.delete(`${p}c`);
    await s.delete(`${p}e`);
    await s.create(`${p}zz/outside`, b('x'));
    const first = await s.list(p, { limit: 1 });
    t.deepEqual(keysOf(first.items), [`${p}a`]);
    t.is(first.remaining, 4); // b d f zz/outside
    const exact = await s.list(`${p}`, { limit: 5 });
    t.is(exact.items.length, 5);
    t.is(exact.remaining, 0);
    const more = await s.list(p, { limit: 50 });
    t.is(more.items.length, 5);
    t.is(more.remaining, 0);
    const after = await s.list(p, { startAfter: `${p}b` });
    t.deepEqual(keysOf(after.items), [`${p}d`, `${p}f`, `${p}zz/outside`]);
    t.is(after.remaining, 0);
    const beforePrefix = await s.list(p, { startAfter: '/', limit: 2 });
    t.deepEqual(keysOf(beforePrefix.items), [`${p}a`, `${p}b`]);
  });

  it('list at an old revision shows the state of then after updates and deletes', async (t, s, p) => {
    const a = await s.create(`${p}a`, b('a1'));
    await s.create(`${p}b`, b('b1'));
    const r1 = await s.currentRevision();
    await s.update(`${p}a`, b('a2'), a.modRevision);
    await s.delete(`${p}b`);
    await s.create(`${p}c`, b('c1'));
    const r2 = await s.currentRevision();
    await s.delete(`${p}a`);
    await s.create(`${p}b`, b('b2'));

    const at1 = await s.list(p, { revision: r1 });
    t.is(at1.revision, r1);
    t.deepEqual(at1.items.map((kv) => [kv.key, str(kv.value)]), [[`${p}a`, 'a1'], [`${p}b`, 'b1']]);
    const at2 = await s.list(p, { revision: r2 });
    t.deepEqual(at2.items.map((kv) => [kv.key, str(kv.value)]), [[`${p}a`, 'a2'], [`${p}c`, 'c1']]);
    const now = await s.list(p);
    t.deepEqual(now.items.map((kv) => [kv.key, str(kv.value)]), [[`${p}b`, 'b2'], [`${p}c`, 'c1']]);
  });

  it('list beyond the current revision fails with FutureRevision', async (t, s, p) => {
    await s.create(`${p}a`, b('1'));
    const r = await s.currentRevision();
    await rejects(t, s.list(p, { revision: r + 1 }), 'FutureRevision');
    t.is((await s.list(p, { revision: r })).items.length, 1);
  });

  // ---- compaction ----

  it('compaction keeps every state from its revision on and fails older reads with Compacted', async (t, s, p) => {
    const a = await s.create(`${p}a`, b('a1'));
    await s.create(`${p}b`, b('b1'));
    const a2 = await s.update(`${p}a`, b('a2'), a.modRevision);
    await s.delete(`${p}b`);
    await s.create(`${p}c`, b('c1'));
    const r = await s.currentRevision();
    await s.update(`${p}a`, b('a3'), a2.modRevision);
    await s.delete(`${p}c`);
    await s.create(`${p}d`, b('d1'));
    const head = await s.currentRevision();
    const before: unknown[] = [];
    for (let rev = r; rev <= head; rev++) before.push((await s.list(p, { revision: rev })).items.map(show));

    await s.compact(r);
    t.is(await s.compactedRevision(), r);
    await rejects(t, s.list(p, { revision: r - 1 }), 'Compacted');
    await rejects(t, s.get(`${p}a`, { revision: r - 1 }), 'Compacted');
    const after: unknown[] = [];
    for (let rev = r; rev <= head; rev++) after.push((await s.list(p, { revision: rev })).items.map(show));
    t.deepEqual(after, before);
    t.is(str(await value(s, `${p}a`)), 'a3');
    t.deepEqual(show(await s.get(`${p}a`, { revision: r })), show(a2));
    t.is(await s.currentRevision(), head);
  });

  it('compaction at or below the compacted revision does nothing; beyond the head it fails', async (t, s, p) => {
    await s.create(`${p}a`, b('1'));
    await s.create(`${p}b`, b('1'));
    const r = await s.currentRevision();
    await s.compact(r);
    await s.compact(r - 1);
    await s.compact(r);
    t.is(await s.compactedRevision(), r);
    await rejects(t, s.compact(r + 1), 'FutureRevision');
    t.is(await s.compactedRevision(), r);
  });

  it('compaction at the head keeps live keys and the revision counter', async (t, s, p) => {
    const a = await s.create(`${p}a`, b('1'));
    await s.update(`${p}a`, b('2'), a.modRevision);
    await s.create(`${p}gone`, b('1'));
    const d = await s.delete(`${p}gone`);
    await s.compact(d.modRevision);
    t.is(await s.currentRevision(), d.modRevision);
    t.deepEqual(keysOf((await s.list(p)).items), [`${p}a`]);
    t.is(await s.get(`${p}gone`), null);
    const next = await s.create(`${p}gone`, b('again'));
    t.is(next.modRevision, d.modRevision + 1);
  });

  // ---- watch ----

  it('watch replays history after fromRevision, then streams live writes', async (t, s, p) => {
    const r0 = await s.currentRevision();
    const a = await s.create(`${p}a`, b('1'));
    await s.create(`${p}b`, b('1'));
    const it = watcher(t, s, p, a.modRevision);
    t.deepEqual((await take(it, 1)).map(brief), [`put ${p}b ${r0 + 2}`]);
    const pending = it.next();
    await s.update(`${p}a`, b('2'), a.modRevision);
    await s.delete(`${p}b`);
    const first = await pending;
    t.false(first.done);
    t.deepEqual([first.value as StorageEvent, ...(await take(it, 1))].map(brief), [`put ${p}a ${r0 + 3}`, `delete ${p}b ${r0 + 4}`]);
  });

  it('watch delivers only keys with the prefix', async (t, s, p) => {
    const r0 = await s.currentRevision();
    const it = watcher(t, s, `${p}in/`, r0);
    await s.create(`${p}in`, b('no'));
    await s.create(`${p}in0/x`, b('no'));
    await s.create(`${p}inx/y`, b('no'));
    await s.create(`${p}in/a`, b('yes'));
    await s.create(`${p}out/a`, b('no'));
    await s.create(`${p}in/b/c`, b('yes'));
    // Events arrive in revision order, so the two matching ones coming first proves the rest were skipped.
    t.deepEqual((await take(it, 2)).map(brief), [`put ${p}in/a ${r0 + 4}`, `put ${p}in/b/c ${r0 + 6}`]);
  });

  it('watch events carry values: create without prevValue, update and delete with prevValue', async (t, s, p) => {
    const r0 = await s.currentRevision();
    const c = await s.create(`${p}a`, b('v1'));
    await s.update(`${p}a`, b('v2'), c.modRevision);
    await s.delete(`${p}a`);
    const replayed = await take(watcher(t, s, p, r0), 3);
    const live = watcher(t, s, p, r0 + 3);
    const pending = take(live, 3);
    const c2 = await s.create(`${p}a`, b('v1'));
    await s.update(`${p}a`, b('v2'), c2.modRevision);
    await s.delete(`${p}a`);
    const streamed = await pending;
    const expected = (base: number, created: number): unknown[] => [
      { type: 'put', key: `${p}a`, value: 'v1', prevValue: undefined, revision: base + 1, createRevision: created },
      { type: 'put', key: `${p}a`, value: 'v2', prevValue: 'v1', revision: base + 2, createRevision: created },
      { type: 'delete', key: `${p}a`, value: 'v2', prevValue: 'v2', revision: base + 3, createRevision: created },
    ];
    t.deepEqual(replayed.map(showEvent), expected(r0, r0 + 1));
    t.deepEqual(streamed.map(showEvent), expected(r0 + 3, r0 + 4));
    // Replayed from history, the re-create after the delete has no prevValue either.
    const again = await take(watcher(t, s, p, r0), 6);
    t.deepEqual(again.map(showEvent), [...expected(r0, r0 + 1), ...expected(r0 + 3, r0 + 4)]);
  });

  it('watch from before the compacted revision throws Compacted; from it, replays what follows', async (t, s, p) => {
    const r0 = await s.currentRevision();
    const a = await s.create(`${p}a`, b('1'));
    const a2 = await s.update(`${p}a`, b('2'), a.modRevision);
    await s.update(`${p}a`, b('3'), a2.modRevision);
    await s.compact(a2.modRevision);
    const err = await t.throwsAsync(take(watcher(t, s, p, r0), 1), { instanceOf: StorageError });
    t.is(err?.code, 'Compacted');
    const ok = await take(watcher(t, s, p, a2.modRevision), 1);
    t.deepEqual(ok.map(showEvent), [
      { type: 'put', key: `${p}a`, value: '3', prevValue: '2', revision: a2.modRevision + 1, createRevision: a.modRevision },
    ]);
  });

  it('aborting the signal ends the iterator, also while it waits', async (t, s, p) => {
    const r0 = await s.currentRevision();
    const ac = new AbortController();
    const it = s.watch(p, r0, ac.signal)[Symbol.asyncIterator]();
    await s.create(`${p}a`, b('1'));
    t.is((await it.next()).value?.key, `${p}a`);
    const waiting = it.next();
    ac.abort();
    t.true((await waiting).done);
    t.true((await it.next()).done);

    const pre = new AbortController();
    pre.abort();
    const items: StorageEvent[] = [];
    for await (const ev of s.watch(p, r0, pre.signal)) items.push(ev);
    t.deepEqual(items, []);
    // The store keeps working after watchers went away.
    await s.create(`${p}b`, b('1'));
    t.is((await s.list(p)).items.length, 2);
  });

  it('breaking out of a watch loop releases it', async (t, s, p) => {
    const r0 = await s.currentRevision();
    await s.create(`${p}a`, b('1'));
    await s.create(`${p}b`, b('1'));
    const ac = new AbortController();
    t.teardown(() => ac.abort());
    const seen: string[] = [];
    for await (const ev of s.watch(p, r0, ac.signal)) {
      seen.push(ev.key);
      break;
    }
    t.deepEqual(seen, [`${p}a`]);
    await s.create(`${p}c`, b('1'));
    t.is(await s.currentRevision(), r0 + 3);
  });

  it('a watch started during a burst of writes sees each write once, in revision order', async (t, s, p) => {
    const r0 = await s.currentRevision();
    const writes: Promise<KeyValue>[] = [];
    for (let i = 0; i < 25; i++) writes.push(s.create(`${p}k${i}`, b('x')));
    const it = watcher(t, s, p, r0);
    const events = take(it, 50);
    for (let i = 25; i < 50; i++) writes.push(s.create(`${p}k${i}`, b('x')));
    const done = await Promise.all(writes);
    const got = await events;
    t.deepEqual(got.map((e) => e.revision), Array.from({ length: 50 }, (_, i) => r0 + 1 + i));
    const byRev = new Map(done.map((kv) => [kv.modRevision, kv.key]));
    for (const e of got) t.is(byRev.get(e.revision), e.key);
  });

  it('a watcher that does not read for a while still gets every event in order', async (t, s, p) => {
    const r0 = await s.currentRevision();
    const it = watcher(t, s, p, r0);
    const first = it.next();
    let kv = await s.create(`${p}a`, b('0'));
    for (let i = 1; i < 300; i++) kv = await s.update(`${p}a`, b(String(i)), kv.modRevision);
    const head = await first;
    const rest = await take(it, 299);
    const all = [head.value as StorageEvent, ...rest];
    t.deepEqual(all.map((e) => e.revision), Array.from({ length: 300 }, (_, i) => r0 + 1 + i));
    t.deepEqual(all.map((e) => str(e.value)), Array.from({ length: 300 }, (_, i) => String(i)));
  });

  it('several watchers each see the events of their own prefix', async (t, s, p) => {
    const r0 = await s.currentRevision();
    const wide = watcher(t, s, p, r0);
    const narrow = watcher(t, s, `${p}x/`, r0);
    const again = watcher(t, s, p, r0);
    const wideP = take(wide, 3);
    const narrowP = take(narrow, 1);
    const againP = take(again, 3);
    await s.create(`${p}a`, b('1'));
    await s.create(`${p}x/b`, b('1'));
    await s.create(`${p}c`, b('1'));
    const wants = [`put ${p}a ${r0 + 1}`, `put ${p}x/b ${r0 + 2}`, `put ${p}c ${r0 + 3}`];
    t.deepEqual((await wideP).map(brief), wants);
    t.deepEqual((await againP).map(brief), wants);
    t.deepEqual((await narrowP).map(brief), [`put ${p}x/b ${r0 + 2}`]);
  });

  it('a watch from a future revision delivers only writes after it', async (t, s, p) => {
    const r0 = await s.currentRevision();
    const it = watcher(t, s, p, r0 + 2);
    const pending = take(it, 1);
    await s.create(`${p}a`, b('1'));
    await s.create(`${p}b`, b('1'));
    await s.create(`${p}c`, b('1'));
    t.deepEqual((await pending).map(brief), [`put ${p}c ${r0 + 3}`]);
  });
}

function b(s: string): Buffer {
  return Buffer.from(s, 'utf8');
}

function str(v: Uint8Array): string {
  return Buffer.from(v).toString('utf8');
}

async function value(s: Storage, key: string): Promise<Buffer> {
  const kv = await s.get(key);
  if (!kv) throw new Error(`${key} is missing`);
  return Buffer.from(kv.value);
}

function show(kv: KeyValue | null | undefined): unknown {
  return kv ? { key: kv.key, value: str(kv.value), createRevision: kv.createRevision, modRevision: kv.modRevision } : kv;
}

function showEvent(e: StorageEvent): unknown {
  return {
    type: e.type,
    key: e.key,
    value: str(e.value),
    prevValue: e.prevValue && str(e.prevValue),
    revision: e.revision,
    createRevision: e.createRevision,
  };
}

function brief(e: StorageEvent): string {
  return `${e.type} ${e.key} ${e.revision}`;
}

function keysOf(items: KeyValue[]): string[] {
  return items.map((kv) => kv.key);
}

async function rejects(t: ExecutionContext, p: Promise<unknown>, code: StorageErrorCode): Promise<StorageError> {
  const err = await t.throwsAsync(p, { instanceOf: StorageError });
  t.is(err?.code, code);
  if (!err) throw new Error(`expected StorageError ${code}`);
  return err;
}

/** An iterator over a watch that is aborted when the test ends. */
function watcher(t: ExecutionContext, s: Storage, prefix: string, from: number): AsyncIterator<StorageEvent> {
  const ac = new AbortController();
  t.teardown(() => ac.abort());
  return s.watch(prefix, from, ac.signal)[Symbol.asyncIterator]();
}

async function take(it: AsyncIterator<StorageEvent>, n: number): Promise<StorageEvent[]> {
  const out: StorageEvent[] = [];
  while (out.length < n) {
    const r = await it.next();
    if (r.done) throw new Error(`watch ended after ${out.length} of ${n} events`);
    out.push(r.value);
  }
  return out;
}
