import test from 'ava';
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStorage } from '../../../../apiserver/storage/sqlite';
import { StorageError, type ListOptions, type ListResult, type Storage, type StorageEvent } from '../../../../apiserver/storage/storage';
import { compareKeys as byteOrder } from '../../../../apiserver/storage/key-range';
import { COMPACTION_POLL_MS, compareKeys, ListSnapshots, SNAPSHOT_RETAIN_MS } from '../../../../apiserver/store/list-snapshots';
import { WatchCache } from '../../../../apiserver/store/watch-cache';

/**
 * SQLite storage whose store watch the test can break and keep broken (watch() fails at once)
 * until healed, so that writes meanwhile are missed and the watch cache must start over.
 */
function breakable(inner: SqliteStorage) {
  const breakers = new Set<() => void>();
  let down = false;
  async function* watch(prefix: string, from: number, signal: AbortSignal): AsyncGenerator<StorageEvent> {
    if (down) throw new StorageError('Unavailable', 'watch broken by the test');
    const ac = new AbortController();
    const stop = () => ac.abort();
    signal.addEventListener('abort', stop, { once: true });
    breakers.add(stop);
    try {
      for await (const ev of inner.watch(prefix, from, ac.signal)) yield ev;
      if (down) throw new StorageError('Unavailable', 'watch broken by the test');
    } finally {
      breakers.delete(stop);
      signal.removeEventListener('abort', stop);
    }
  }
  const lists: Array<{ prefix: string; opts?: ListOptions }> = [];
  const storage: Storage = {
    get: (k, o) => inner.get(k, o),
    list: (prefix, opts) => {
      lists.push({ prefix, opts });
      return inner.list(prefix, opts);
    },
    create: (k, v) => inner.create(k, v),
    update: (k, v, r) => inner.update(k, v, r),
    delete: (k, r) => inner.delete(k, r),
    currentRevision: () => inner.currentRevision(),
    compactedRevision: () => inner.compactedRevision(),
    compact: (r) => inner.compact(r),
    close: () => inner.close(),
    watch,
  };
  return {
    storage,
    /** Every list the storage was asked (the snapshots' own load included). */
    lists,
    breakWatch() {
      down = true;
      for (const b of [...breakers]) b();
    },
    heal() {
      down = false;
    },
  };
}

/** A SQLite store, and the watch cache (maxEvents of history) feeding list snapshots over it; nothing runs until start(). */
function setup(maxEvents = 1000) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-snap-'));
  const sqlite = SqliteStorage.open(join(dir, 'db'), { synchronous: 'NORMAL' });
  const b = breakable(sqlite);
  const served: string[] = [];
  const clock = { now: 0 };
  const snaps = new ListSnapshots(b.storage, { now: () => clock.now, onServed: (p) => served.push(p) });
  const cache = new WatchCache(b.storage, { retainMs: 3_600_000, maxEvents, now: Date.now, follower: snaps });
  const ac = new AbortController();
  let running: Promise<void> | undefined;
  return {
    sqlite,
    snaps,
    cache,
    served,
    clock,
    ...b,
    start() {
      running = cache.run(ac.signal);
    },
    /** Resolves once the snapshots have loaded and applied every write up to the store's revision. */
    async caughtUp(): Promise<number> {
      const rev = await sqlite.currentRevision();
      await until(() => (snaps.window()?.to ?? -1) >= rev);
      return rev;
    },
    /** Puts (creates or updates) or deletes (when present) a key, straight in the store. */
    async write(op: Op): Promise<void> {
      clock.now += op.dt ?? 0;
      const cur = await sqlite.get(op.key);
      if (op.del) {
        if (cur) await sqlite.delete(op.key);
      } else if (cur) await sqlite.update(op.key, val(op.key, op.n), cur.modRevision);
      else await sqlite.create(op.key, val(op.key, op.n));
    },
    async close() {
      ac.abort();
      await running?.catch(() => undefined);
      await sqlite.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface Op {
  key: string;
  del: boolean;
  n: number;
  /** Milliseconds the clock moves on before the write. */
  dt?: number;
}

const val = (key: string, n: number) => Buffer.from(JSON.stringify({ metadata: { name: key.split('/').pop() }, data: { n: String(n) } }));

/** Waits (turn by turn, bounded by count) for a condition the code under test makes true asynchronously. */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 20_000 && !cond(); i++) await new Promise((r) => setTimeout(r, 1));
  if (!cond()) throw new Error('condition not reached');
}

/** What a list answered, comparable (values as text). */
const plain = (r: ListResult) => ({
  revision: r.revision,
  remaining: r.remaining,
  items: r.items.map((kv) => ({ key: kv.key, value: kv.value.toString(), createRevision: kv.createRevision, modRevision: kv.modRevision })),
});

const PREFIXES = ['/core/configmaps/a/', '/core/configmaps/b/', '/apps/deployments/a/'];
// Names in and around ASCII, U+E000–FFFF and above U+FFFF: the byte order the stores sort by.
const NAMES = ['n0', 'n1', 'n2', 'n10', 'é', '\uFFFD', '𝔘', 'z'];
const opArb = fc.record({
  key: fc.tuple(fc.constantFrom(...PREFIXES), fc.constantFrom(...NAMES)).map(([p, n]) => p + n),
  del: fc.boolean(),
  n: fc.nat(99),
  // Now and then long enough for earlier writes to leave the retention.
  dt: fc.constantFrom(0, 0, 0, 1000, SNAPSHOT_RETAIN_MS / 2),
});
const queryArb = fc.record({
  at: fc.double({ min: 0, max: 1, noNaN: true }),
  prefix: fc.constantFrom('/', '', '/core/', '/core/configmaps/', ...PREFIXES, '/core/configmaps/a/n1', '/none/'),
  limit: fc.constantFrom(0, 1, 2, 3, 5, 100),
  startAfter: fc.option(
    fc.oneof(
      fc.tuple(fc.constantFrom(...PREFIXES), fc.constantFrom(...NAMES, '', 'n', 'n15')).map(([p, n]) => p + n),
      fc.constantFrom('', '/', '/a', '/core/configmaps/', '/zzz'),
    ),
    { nil: undefined },
  ),
});

test('compareKeys orders as the stores do (UTF-8 bytes), also across U+E000–FFFF and code points above U+FFFF', (t) => {
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme', maxLength: 6 }), fc.string({ unit: 'grapheme', maxLength: 6 }), (a, b) => {
      t.is(Math.sign(compareKeys(a, b)), Math.sign(byteOrder(a, b)));
    }),
    { numRuns: 3000 },
  );
  t.true(compareKeys('\uFFFD', '𝔘') < 0, 'U+FFFD sorts before U+1D518 in UTF-8, unlike UTF-16');
});

test('lists at any revision in the window answer exactly as the SQLite store does, with history trimmed or aged and pruned as it goes', async (t) => {
  let runs = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(opArb, { maxLength: 12 }),
      fc.array(opArb, { minLength: 10, maxLength: 40 }),
      // Mostly a history shorter than the writes, so that it trims and the snapshots prune as they go.
      fc.oneof(fc.integer({ min: 1, max: 8 }), fc.constant(1000)),
      fc.array(queryArb, { minLength: 1, maxLength: 25 }),
      async (before, after, maxEvents, queries) => {
        const s = setup(maxEvents);
        try {
          for (const op of before) await s.write(op);
          s.start();
          for (const op of after) await s.write(op);
          await s.caughtUp();
          const w = s.snaps.window()!;
          const lo = Math.max(w.from, 1); // revision 0 is "latest", never answered from memory
          for (const q of lo <= w.to ? queries : []) {
            // A random revision of the window, and its oldest (where pruning could go wrong).
            for (const revision of [Math.min(w.to, lo + Math.floor(q.at * (w.to - lo + 1))), lo]) {
              t.true(s.snaps.answers(revision));
              const served = s.served.length;
              const opts = { revision, limit: q.limit, startAfter: q.startAfter };
              const mine = await s.snaps.list(q.prefix, opts);
              t.is(s.served.length, served + 1, 'answered from memory');
              t.deepEqual(plain(mine), plain(await s.sqlite.list(q.prefix, opts)), JSON.stringify({ prefix: q.prefix, ...opts }));
            }
          }
          runs++;
        } finally {
          await s.close();
        }
      },
    ),
    { numRuns: 40 },
  );
  t.is(runs, 40);
});

test('revision 0, a revision before the load or after the latest applied, and lists before loading go to the store', async (t) => {
  const s = setup();
  try {
    for (let i = 0; i < 3; i++) await s.write({ key: `/core/configmaps/a/k${i}`, del: false, n: i });
    const beforeLoad = await s.sqlite.currentRevision();
    // Not loaded (the cache has not started): the store answers.
    t.deepEqual(plain(await s.snaps.list('/core/', { revision: beforeLoad })), plain(await s.sqlite.list('/core/', { revision: beforeLoad })));
    t.is(s.served.length, 0);
    s.start();
    await s.caughtUp();
    const since = s.snaps.window()!.from;
    t.is(since, beforeLoad);
    await s.write({ key: '/core/configmaps/a/k0', del: true, n: 0 });
    await s.write({ key: '/core/configmaps/a/k9', del: false, n: 9 });
    const latest = await s.caughtUp();
    const asked = s.lists.length;
    // Latest (a consistent read) is the store's.
    t.deepEqual(plain(await s.snaps.list('/core/', {})), plain(await s.sqlite.list('/core/', {})));
    t.deepEqual(plain(await s.snaps.list('/core/', { revision: 0 })), plain(await s.sqlite.list('/core/', {})));
    // Before the load: the store's history answers.
    t.deepEqual(plain(await s.snaps.list('/core/', { revision: since - 1 })), plain(await s.sqlite.list('/core/', { revision: since - 1 })));
    // Later than the store: its FutureRevision error, unchanged.
    await t.throwsAsync(s.snaps.list('/core/', { revision: latest + 5 }), { instanceOf: StorageError, message: /./ });
    t.is(s.lists.length - asked, 4, 'each went to the store');
    t.is(s.served.length, 0);
    // In the window: from memory, and right.
    const old = await s.snaps.list('/core/configmaps/', { revision: since });
    t.deepEqual(old.items.map((kv) => kv.key), ['/core/configmaps/a/k0', '/core/configmaps/a/k1', '/core/configmaps/a/k2']);
    t.deepEqual(s.served, ['/core/configmaps']);
    t.is(s.lists.length - asked, 4, 'not asked again');
  } finally {
    await s.close();
  }
});

test('when the watch cache starts over after missing events, the snapshots are dropped and loaded again', async (t) => {
  const s = setup();
  try {
    await s.write({ key: '/core/configmaps/a/one', del: false, n: 1 });
    s.start();
    const first = await s.caughtUp();
    const loads = () => s.lists.filter((l) => l.prefix === '/' && !l.opts?.revision).length;
    t.is(loads(), 1);
    s.breakWatch();
    // Written while the cache cannot follow: no event will ever carry it.
    await s.write({ key: '/core/configmaps/a/missed', del: false, n: 2 });
    await s.write({ key: '/core/configmaps/a/one', del: true, n: 0 });
    s.heal();
    const now = await s.sqlite.currentRevision();
    await until(() => loads() >= 2 && (s.snaps.window()?.from ?? 0) === now);
    await s.write({ key: '/core/configmaps/a/after', del: false, n: 3 });
    const latest = await s.caughtUp();
    const served = s.served.length;
    const got = await s.snaps.list('/core/configmaps/a/', { revision: latest });
    t.is(s.served.length, served + 1);
    t.deepEqual(plain(got), plain(await s.sqlite.list('/core/configmaps/a/', { revision: latest })));
    t.deepEqual(got.items.map((kv) => kv.key), ['/core/configmaps/a/after', '/core/configmaps/a/missed']);
    // Revisions before the new load are the store's again.
    t.false(s.snaps.answers(first));
  } finally {
    await s.close();
  }
});

test('versions older than the watch history are pruned, deleted keys forgotten, and revisions still in the window stay right', async (t) => {
  const s = setup(3);
  try {
    s.start();
    await s.caughtUp();
    for (let i = 0; i < 20; i++) await s.write({ key: '/core/configmaps/a/hot', del: false, n: i });
    for (let i = 0; i < 10; i++) await s.write({ key: `/core/configmaps/a/gone${i}`, del: false, n: i });
    for (let i = 0; i < 10; i++) await s.write({ key: `/core/configmaps/a/gone${i}`, del: true, n: i });
    await s.write({ key: '/core/configmaps/a/hot', del: false, n: 100 });
    await s.write({ key: '/core/configmaps/b/x', del: false, n: 0 });
    await s.write({ key: '/core/configmaps/b/y', del: false, n: 0 });
    const latest = await s.caughtUp();
    const w = s.snaps.window()!;
    // The history holds 3 events: the window is its last 3 writes (and the state before them).
    t.is(w.to, latest);
    t.is(w.from, latest - 3);
    // hot holds its value at the window's start and its last write; b/x and b/y one each; the deleted keys are gone.
    t.deepEqual(s.snaps.size(), { keys: 3, versions: 4 });
    for (let rev = w.from; rev <= w.to; rev++) {
      for (const prefix of ['/', '/core/configmaps/a/', '/core/configmaps/b/']) {
        t.deepEqual(plain(await s.snaps.list(prefix, { revision: rev, limit: 2 })), plain(await s.sqlite.list(prefix, { revision: rev, limit: 2 })));
      }
    }
    t.false(s.snaps.answers(w.from - 1));
  } finally {
    await s.close();
  }
});

test('a revision the store has compacted goes to the store (410 stays) once the compaction is read, at most COMPACTION_POLL_MS later', async (t) => {
  const s = setup();
  try {
    s.start();
    for (let i = 0; i < 6; i++) await s.write({ key: `/core/configmaps/a/k${i}`, del: false, n: i });
    const latest = await s.caughtUp();
    const from = s.snaps.window()!.from;
    t.is((await s.snaps.list('/core/', { revision: from + 1 })).items.length, 1);
    t.is(s.served.length, 1);
    await s.sqlite.compact(latest - 1);
    // Within the poll interval the compaction is not known yet: still from memory.
    s.clock.now += COMPACTION_POLL_MS - 1;
    t.is((await s.snaps.list('/core/', { revision: from + 1 })).items.length, 1);
    t.is(s.served.length, 2);
    s.clock.now += 1;
    await t.throwsAsync(s.snaps.list('/core/', { revision: from + 1 }), { instanceOf: StorageError, message: /compacted/i });
    t.is(s.served.length, 2);
    // At and after the compacted revision: from memory still.
    t.deepEqual(plain(await s.snaps.list('/core/', { revision: latest - 1 })), plain(await s.sqlite.list('/core/', { revision: latest - 1 })));
    t.is(s.served.length, 3);
  } finally {
    await s.close();
  }
});

test('a revision stays answerable SNAPSHOT_RETAIN_MS (75 s) after a later write replaced it, then goes to the store', async (t) => {
  const s = setup();
  try {
    s.start();
    await s.caughtUp();
    await s.write({ key: '/core/configmaps/a/x', del: false, n: 1 });
    const r1 = await s.caughtUp();
    await s.write({ key: '/core/configmaps/a/x', del: false, n: 2, dt: 10_000 });
    const r2 = await s.caughtUp();
    await s.write({ key: '/core/configmaps/a/y', del: false, n: 3, dt: SNAPSHOT_RETAIN_MS - 10_000 });
    const r3 = await s.caughtUp();
    // x's first write is 75 s old, not more: every revision is still answered.
    t.deepEqual(s.snaps.window(), { from: 0, to: r3 }); // loaded from the empty store, at 0
    t.is(r1, 1);
    s.clock.now += 1;
    // r1 was received more than 75 s ago: revisions before it go to the store; its own state was replaced (by r2) only 65 s ago.
    const atR2 = await s.snaps.list('/core/', { revision: r2 });
    t.deepEqual(s.snaps.window(), { from: r1, to: r3 });
    t.deepEqual(plain(atR2), plain(await s.sqlite.list('/core/', { revision: r2 })));
    s.clock.now += 10_000;
    const served = s.served.length;
    t.deepEqual(plain(await s.snaps.list('/core/', { revision: r1 })), plain(await s.sqlite.list('/core/', { revision: r1 })));
    t.is(s.served.length, served, 'r1 went to the store');
    t.deepEqual(s.snaps.window(), { from: r2, to: r3 });
    t.deepEqual(s.snaps.size(), { keys: 2, versions: 2 });
    t.deepEqual(plain(await s.snaps.list('/core/', { revision: r2 })), plain(await s.sqlite.list('/core/', { revision: r2 })));
    t.is(s.served.length, served + 1);
  } finally {
    await s.close();
  }
});
