import { mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStorage } from '../apiserver/storage/sqlite';
import type { ListResult, Storage } from '../apiserver/storage/storage';
import { ListSnapshots } from '../apiserver/store/list-snapshots';
import { WatchCache } from '../apiserver/store/watch-cache';
import type { Cleanup } from './lib/cleanup';
import { progress } from './lib/progress';

/** How many ConfigMaps per namespace, in how many namespaces; how many updates after the listed revision. */
const DEFAULTS = { perNamespace: 1000, namespaces: 5, updates: 2000, page: 500, rounds: 15 };

/**
 * ListFromCacheSnapshot (issue 23 item 6): the paged list of one resource at an exact older
 * revision (every continue page of a 5,000-object chunked list after 2,000 later writes), read
 * from the list snapshots against the SQLite store's MVCC read of the same pages, in process (no
 * HTTP: the part the gate changes), rounds alternating A-B-B-A; plus what the snapshots hold.
 * `--quick`: a tenth of the objects and rounds.
 */
export async function runListSnapshotsBench(args: readonly string[], cleanup: Cleanup): Promise<object> {
  const quick = args.includes('--quick');
  const o = quick ? { ...DEFAULTS, perNamespace: 100, updates: 200, rounds: 4 } : DEFAULTS;
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-snap-'));
  const storage = SqliteStorage.open(join(dir, 'db'), { synchronous: 'NORMAL' });
  const ac = new AbortController();
  let running: Promise<void> | undefined;
  cleanup.dir(dir);
  cleanup.add('stop the watch cache and close the store', async () => {
    ac.abort();
    await running?.catch(() => undefined);
    await storage.close();
  });
  const snaps = new ListSnapshots(storage, { now: Date.now });
  const cache = new WatchCache(storage, { retainMs: 5 * 60_000, now: Date.now, follower: snaps });
  const value = (ns: string, i: number, gen: number) =>
    Buffer.from(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: ns, labels: { app: 'bench' } }, data: { gen: String(gen), payload: 'x'.repeat(600) } }));
  progress(`creating ${o.perNamespace * o.namespaces} ConfigMaps`);
  const keys: string[] = [];
  for (let n = 0; n < o.namespaces; n++) {
    for (let i = 0; i < o.perNamespace; i++) {
      const key = `/core/configmaps/ns-${n}/cm-${String(i).padStart(5, '0')}`;
      await storage.create(key, value(`ns-${n}`, i, 0));
      keys.push(key);
    }
  }
  running = cache.run(ac.signal);
  await cache.whenReady();
  const listedAt = await storage.currentRevision();
  progress(`listed at revision ${listedAt}; ${o.updates} updates after it`);
  for (let u = 0; u < o.updates; u++) {
    const key = keys[(u * 7919) % keys.length];
    const cur = (await storage.get(key))!;
    await storage.update(key, value('ns', u, u + 1), cur.modRevision);
  }
  const latest = await storage.currentRevision();
  await cache.waitForRevision(latest, 60_000);
  for (let i = 0; i < 10_000 && !(snaps.window() && snaps.window()!.to >= latest); i++) await new Promise((r) => setTimeout(r, 10));
  if (!snaps.answers(listedAt)) throw new Error(`the snapshots do not answer revision ${listedAt}: ${JSON.stringify(snaps.window())}`);

  /** Reads every page of /core/configmaps/ at listedAt; returns milliseconds and the items read. */
  const pagedList = async (from: Pick<Storage, 'list'>): Promise<{ ms: number; items: number }> => {
    const t0 = performance.now();
    let items = 0;
    let startAfter: string | undefined;
    for (;;) {
      const res: ListResult = await from.list('/core/configmaps/', { revision: listedAt, limit: o.page, startAfter });
      items += res.items.length;
      if (res.remaining === 0 || res.items.length === 0) break;
      startAfter = res.items[res.items.length - 1].key;
    }
    return { ms: performance.now() - t0, items };
  };
  // Warm-up, and a check that both read the same number of objects.
  const [a, b] = [await pagedList(storage), await pagedList(snaps)];
  if (a.items !== b.items) throw new Error(`store read ${a.items} objects, snapshots ${b.items}`);
  const store: number[] = [];
  const memory: number[] = [];
  for (let r = 0; r < o.rounds; r++) {
    const order = r % 2 === 0 ? ([storage, snaps] as const) : ([snaps, storage] as const);
    for (const from of order) (from === storage ? store : memory).push((await pagedList(from)).ms);
    progress(`round ${r + 1}/${o.rounds}: store ${store[store.length - 1].toFixed(1)} ms, snapshots ${memory[memory.length - 1].toFixed(1)} ms`);
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  return {
    objects: a.items,
    page: o.page,
    updates_after: o.updates,
    load_1m: loadavg()[0],
    store_ms_per_paged_list: { median: +median(store).toFixed(2), all: store.map((x) => +x.toFixed(2)) },
    snapshots_ms_per_paged_list: { median: +median(memory).toFixed(2), all: memory.map((x) => +x.toFixed(2)) },
    ratio_snapshots_to_store: +(median(memory) / median(store)).toFixed(3),
    held: snaps.size(),
    window: snaps.window(),
  };
}
