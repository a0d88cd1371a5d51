import test from 'ava';
import type { StorageEvent } from '../../../../apiserver/storage/storage';
import { eventBytes, WatchHub, type WatchLog } from '../../../../apiserver/storage/watch-hub';

/** A log in memory that records every page it is asked for and honours its bounds. */
function memoryLog() {
  const events: StorageEvent[] = [];
  const pages: Array<{ after: number; maxBytes: number; count: number; bytes: number }> = [];
  const log: WatchLog = {
    readAfter(prefix, after, limit, maxBytes) {
      const out: StorageEvent[] = [];
      let bytes = 0;
      for (const e of events) {
        if (e.revision <= after || !e.key.startsWith(prefix)) continue;
        if (out.length === limit) break;
        if (out.length > 0 && bytes + eventBytes(e) > maxBytes) break;
        bytes += eventBytes(e);
        out.push(e);
      }
      const complete = !events.some((e) => e.revision > (out.at(-1)?.revision ?? after) && e.key.startsWith(prefix));
      pages.push({ after, maxBytes, count: out.length, bytes });
      return { events: out, complete };
    },
    compactedRevision: () => 0,
  };
  const commit = (hub: WatchHub, size: number) => {
    const ev: StorageEvent = { type: 'put', key: `/p/${events.length}`, value: Buffer.alloc(size), revision: events.length + 1, createRevision: events.length + 1 };
    events.push(ev);
    hub.publish(ev);
  };
  return { log, pages, commit };
}

test('a watcher whose queued events pass the byte bound drops them and re-reads the log in pages within the bound, without gaps', async (t) => {
  const m = memoryLog();
  const hub = new WatchHub(m.log, 1000, 1000);
  const ac = new AbortController();
  const it = hub.watch('/p/', 0, ac.signal)[Symbol.asyncIterator]();
  const first = it.next(); // reaches the head (an empty, complete page) and goes live
  m.commit(hub, 100);
  t.is((await first).value?.revision, 1);
  // The consumer stops asking: 30 events of 100 bytes pass its 1,000-byte bound while it is away.
  for (let i = 0; i < 30; i++) m.commit(hub, 100);
  const pagesBefore = m.pages.length;
  const got: number[] = [];
  while (got.length < 30) got.push(((await it.next()).value as StorageEvent).revision);
  t.deepEqual(got, Array.from({ length: 30 }, (_, i) => i + 2));
  const pages = m.pages.slice(pagesBefore);
  t.true(pages.length >= 2, 'caught up from the log, in more than one page');
  t.true(pages.every((p) => p.bytes <= 1000 && p.maxBytes === 1000));
  ac.abort();
  await it.return?.();
});

test('one event larger than the byte bound still gets through', async (t) => {
  const m = memoryLog();
  const hub = new WatchHub(m.log, 1000, 50);
  const ac = new AbortController();
  const it = hub.watch('/p/', 0, ac.signal)[Symbol.asyncIterator]();
  const first = it.next();
  m.commit(hub, 500);
  m.commit(hub, 500);
  t.is((await first).value?.revision, 1);
  t.is((await it.next()).value?.revision, 2);
  ac.abort();
  await it.return?.();
});
