import test from 'ava';
import { Etcd3 } from 'etcd3';
import { EtcdStorage } from '../../../../apiserver/storage/etcd';
import { StorageError, type StorageEvent } from '../../../../apiserver/storage/storage';
import { storageConformance } from '../../../conformance/storage-suite';
import { startEtcd, type RunningEtcd } from '../../../helpers/etcd-process';

// One real etcd for the whole file. Its revision counter and compaction are global, so every test
// here is serial (the conformance suite's are too) and each storage gets its own key prefix.
let etcd: RunningEtcd;
let opened = 0;

test.before(async () => {
  etcd = await startEtcd();
});

test.after.always(async () => {
  await etcd?.stop();
});

async function open(extra: Partial<Parameters<typeof EtcdStorage.connect>[0]> = {}): Promise<EtcdStorage> {
  opened += 1;
  return EtcdStorage.connect({ endpoints: [etcd.endpoint], prefix: `/svc-test-${process.pid}-${opened}`, ...extra });
}

storageConformance('etcd', async () => {
  const storage = await open();
  return { storage, cleanup: () => storage.close() };
});

function b(s: string): Buffer {
  return Buffer.from(s, 'utf8');
}

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'resolved';
  } catch (e) {
    return e instanceof StorageError ? e.code : `not a StorageError: ${String(e)}`;
  }
}

test.serial('etcd: a 10,000-object list (over 4 MiB) succeeds whole and in pages', async (t) => {
  const prefix = `/svc-big-${process.pid}`;
  const s = await open({ prefix });
  t.teardown(() => s.close());
  // Written straight to etcd in multi-put txns (etcd allows 128 ops per txn) to keep the test fast.
  const raw = new Etcd3({ hosts: etcd.endpoint });
  t.teardown(() => raw.close());
  const n = 10_000;
  const key = (i: number): string => `/big/${String(i).padStart(5, '0')}`;
  const val = (i: number): Buffer => Buffer.alloc(1024, String(i % 10));
  for (let base = 0; base < n; base += 100) {
    const puts = Array.from({ length: 100 }, (_, j) => ({ request_put: { key: b(prefix + key(base + j)), value: val(base + j) } }));
    await raw.kv.txn({ compare: [], success: puts, failure: [] });
  }
  // The same range unpaged through a client left at grpc-js's 4 MiB default is refused: paging matters.
  const plain = new Etcd3({ hosts: etcd.endpoint });
  t.teardown(() => plain.close());
  const refused = await plain.getAll().prefix(prefix + '/big/').buffers().then(() => 'ok', (e: Error) => e.message);
  t.regex(refused, /larger than max/);

  const all = await s.list('/big/');
  t.is(all.items.length, n);
  t.is(all.remaining, 0);
  t.is(all.revision, await s.currentRevision());
  t.true(all.items.every((kv, i) => kv.key === key(i) && kv.value.equals(val(i))));

  const first = await s.list('/big/', { limit: 6000 });
  t.is(first.items.length, 6000);
  t.is(first.remaining, 4000);
  await s.create('/big/zzz', b('written between pages'));
  const rest = await s.list('/big/', { limit: 6000, startAfter: first.items[5999].key, revision: first.revision });
  t.is(rest.items.length, 4000);
  t.is(rest.remaining, 0);
  t.deepEqual([...first.items, ...rest.items].map((kv) => kv.key), all.items.map((kv) => kv.key));
});

test.serial('etcd: an over-limit response does not trip a breaker, and a list of big objects is fetched in smaller pages', async (t) => {
  // A 64 KiB receive limit and 1,000-key pages: 100 objects of 2 KiB cannot come back in one page.
  const s = await open({ maxReceiveMessageBytes: 64 * 1024 });
  t.teardown(() => s.close());
  for (let i = 0; i < 100; i++) await s.create(`/p/${String(i).padStart(3, '0')}`, Buffer.alloc(2048, 'x'));
  for (let i = 0; i < 5; i++) {
    const res = await s.list('/p/');
    t.is(res.items.length, 100);
  }
  // A single value over the limit fails that call with Unavailable...
  await s.create('/huge', Buffer.alloc(100 * 1024, 'y'));
  for (let i = 0; i < 5; i++) t.is(await code(s.get('/huge')), 'Unavailable');
  // ...and only that call: etcd3's default breaker would now refuse everything for 5 s.
  t.is((await s.get('/p/000'))?.value.length, 2048);
  t.is((await s.list('/p/', { limit: 3 })).remaining, 97);
});

test.serial('etcd: a watch from before the compacted revision throws Compacted; a second client sees the compaction', async (t) => {
  const s = await open();
  t.teardown(() => s.close());
  const r0 = await s.currentRevision();
  let kv = await s.create('/w/a', b('0'));
  for (let i = 1; i < 5; i++) kv = await s.update('/w/a', b(String(i)), kv.modRevision);
  await s.compact(kv.modRevision - 1);
  t.is(await s.compactedRevision(), kv.modRevision - 1);

  const ac = new AbortController();
  t.teardown(() => ac.abort());
  const err = await t.throwsAsync(async () => {
    for await (const _ of s.watch('/w/', r0, ac.signal)) t.fail('no event expected');
  });
  t.true(err instanceof StorageError && err.code === 'Compacted', String(err));
  const events: StorageEvent[] = [];
  for await (const ev of s.watch('/w/', kv.modRevision - 1, ac.signal)) {
    events.push(ev);
    break;
  }
  t.deepEqual(events.map((e) => [e.revision, e.value.toString(), e.prevValue?.toString()]), [[kv.modRevision, '4', '3']]);

  // Another replica learns the compacted revision from etcd alone (no key records it).
  const other = await open();
  t.teardown(() => other.close());
  t.is(await other.compactedRevision(), kv.modRevision - 1);
  await s.compact(kv.modRevision);
  t.is(await other.compactedRevision(), kv.modRevision);
  t.is(await code(other.get('/w/a', { revision: kv.modRevision - 1 })), 'Compacted');
  t.is(await code(other.compact(kv.modRevision + 100)), 'FutureRevision');
});

test.serial('etcd: the client survives etcd being killed -9 and restarted; a watch resumes without gaps', async (t) => {
  const s = await open();
  t.teardown(() => s.close());
  const before = await s.create('/k/a', b('1'));
  const ac = new AbortController();
  t.teardown(() => ac.abort());
  const it = s.watch('/k/', before.modRevision, ac.signal)[Symbol.asyncIterator]();
  const firstEvent = it.next();
  const b1 = await s.create('/k/b', b('1'));
  t.is((await firstEvent).value?.revision, b1.modRevision);

  etcd.kill9();
  // More failures than etcd3's default breaker allows (3): none of them may leave lasting state.
  for (let i = 0; i < 5; i++) {
    t.is(await code(s.get('/k/a')), 'Unavailable');
    t.is(await code(s.create(`/k/during-${i}`, b('x'))), 'Unavailable');
    t.is(await code(s.currentRevision()), 'Unavailable');
  }
  const pending = it.next(); // waits through the outage

  await etcd.restart();
  // The first calls after the restart may still race the reconnect; each attempt is bounded.
  let got = null;
  for (let i = 0; i < 100 && !got; i++) {
    try {
      got = await s.get('/k/a');
    } catch (e) {
      if (!(e instanceof StorageError) || e.code !== 'Unavailable') throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  t.is(got?.value.toString(), '1');
  t.is((await s.get('/k/b'))?.modRevision, b1.modRevision);
  const c = await s.create('/k/c', b('after restart'));
  t.is(c.modRevision, b1.modRevision + 1); // the failed creates took no revision
  const ev = (await pending).value as StorageEvent;
  t.deepEqual([ev.type, ev.key, ev.revision], ['put', '/k/c', c.modRevision]);
  t.deepEqual((await s.list('/k/')).items.map((kv) => kv.key), ['/k/a', '/k/b', '/k/c']);
});

test.serial('etcd: close ends watchers with Unavailable and later calls fail with Unavailable', async (t) => {
  const s = await open();
  const it = s.watch('/', await s.currentRevision(), new AbortController().signal)[Symbol.asyncIterator]();
  const waiting = it.next();
  await s.close();
  const err = await t.throwsAsync(waiting);
  t.true(err instanceof StorageError && err.code === 'Unavailable', String(err));
  t.is(await code(s.get('/k')), 'Unavailable');
  t.is(await code(s.create('/k', b('v'))), 'Unavailable');
  await s.close();
});

test.serial('etcd: keys live under the configured prefix and an unreachable cluster is Unavailable, not a hang', async (t) => {
  const s = await open({ prefix: '/registry-x' });
  t.teardown(() => s.close());
  await s.create('/pods/default/web', b('v'));
  const raw = new Etcd3({ hosts: etcd.endpoint });
  t.teardown(() => raw.close());
  t.is(await raw.get('/registry-x/pods/default/web').string(), 'v');

  const nowhere = await EtcdStorage.connect({ endpoints: ['http://127.0.0.1:1'], requestTimeoutMs: 2000 });
  t.teardown(() => nowhere.close());
  t.is(await code(nowhere.currentRevision()), 'Unavailable');
  await t.throwsAsync(EtcdStorage.connect({ endpoints: ['127.0.0.1:2379'] }), { message: /http/ });
  await t.throwsAsync(EtcdStorage.connect({ endpoints: ['http://127.0.0.1:2379'], caFile: '/nonexistent' }), { message: /TLS/ });
});

test.serial('etcd: a watcher that stops reading while thousands of writes happen gets each one, in order', async (t) => {
  const s = await open();
  t.teardown(() => s.close());
  const ac = new AbortController();
  t.teardown(() => ac.abort());
  const r0 = await s.currentRevision();
  const it = s.watch('/slow/', r0, ac.signal)[Symbol.asyncIterator]();
  const first = it.next();
  // More than the stream buffers before pausing (1,024 events), 50 in flight at a time.
  const n = 2500;
  for (let base = 0; base < n; base += 50) {
    await Promise.all(Array.from({ length: 50 }, (_, j) => s.create(`/slow/${base + j}`, b(String(base + j)))));
  }
  const revs = [((await first).value as StorageEvent).revision];
  while (revs.length < n) {
    const r = await it.next();
    if (r.done) break;
    revs.push(r.value.revision);
  }
  t.deepEqual(revs, Array.from({ length: n }, (_, i) => r0 + 1 + i));
});

test.serial('etcd: events of a multi-key txn by another etcd client share one revision and all arrive', async (t) => {
  const prefix = `/svc-txn-${process.pid}`;
  const s = await open({ prefix });
  t.teardown(() => s.close());
  const raw = new Etcd3({ hosts: etcd.endpoint });
  t.teardown(() => raw.close());
  const r0 = await s.currentRevision();
  const ac = new AbortController();
  t.teardown(() => ac.abort());
  const it = s.watch('/m/', r0, ac.signal)[Symbol.asyncIterator]();
  const pending = [it.next(), it.next(), it.next()];
  await raw.kv.txn({ compare: [], success: ['a', 'b', 'c'].map((k) => ({ request_put: { key: b(`${prefix}/m/${k}`), value: b(k) } })), failure: [] });
  const got = (await Promise.all(pending)).map((r) => r.value as StorageEvent);
  t.deepEqual(got.map((e) => `${e.key}@${e.revision - r0}`), ['/m/a@1', '/m/b@1', '/m/c@1']);
});

test.serial('etcd: TLS with client certificates (--etcd-cafile, --etcd-certfile, --etcd-keyfile)', async (t) => {
  const secure = await startEtcd({ tls: true });
  t.teardown(() => secure.stop());
  const files = secure.tls!;
  // By name, as a real deployment would (the certificate has both; grpc-js warns on IP server names).
  const endpoint = secure.endpoint.replace('127.0.0.1', 'localhost');
  const s = await EtcdStorage.connect({ endpoints: [endpoint], ...files });
  t.teardown(() => s.close());
  const kv = await s.create('/tls/a', b('v'));
  t.is((await s.get('/tls/a'))?.modRevision, kv.modRevision);
  // Without a client certificate the member refuses the handshake: Unavailable.
  const anonymous = await EtcdStorage.connect({ endpoints: [endpoint], caFile: files.caFile, requestTimeoutMs: 5000 });
  t.teardown(() => anonymous.close());
  t.is(await code(anonymous.currentRevision()), 'Unavailable');
});

test.serial('etcd: a watch replaying more history than one gRPC message holds gets it in fragments', async (t) => {
  const prefix = `/svc-frag-${process.pid}`;
  // The client keeps grpc-js's 4 MiB default; the replay below is one 8 MiB etcd response unless fragmented.
  const s = await open({ prefix, maxReceiveMessageBytes: 4 * 1024 * 1024 });
  t.teardown(() => s.close());
  const raw = new Etcd3({ hosts: etcd.endpoint });
  t.teardown(() => raw.close());
  const r0 = await s.currentRevision();
  for (let base = 0; base < 1000; base += 100) {
    const puts = Array.from({ length: 100 }, (_, j) => ({ request_put: { key: b(`${prefix}/f/${String(base + j).padStart(4, '0')}`), value: Buffer.alloc(8192, 'f') } }));
    await raw.kv.txn({ compare: [], success: puts, failure: [] });
  }
  const ac = new AbortController();
  t.teardown(() => ac.abort());
  const keys: string[] = [];
  for await (const ev of s.watch('/f/', r0, ac.signal)) {
    keys.push(ev.key);
    if (keys.length === 1000) break;
  }
  t.deepEqual(keys, Array.from({ length: 1000 }, (_, i) => `/f/${String(i).padStart(4, '0')}`));
});
