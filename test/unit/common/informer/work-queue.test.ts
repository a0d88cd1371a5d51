import test from 'ava';
import { BucketRateLimiter, ItemExponentialFailureRateLimiter, MaxOfRateLimiter } from '../../../../common/informer/rate-limiter';
import { runWorkers, WorkQueue } from '../../../../common/informer/work-queue';
import { FakeClock, flush } from '../../../helpers/fake-clock';

test('a key added several times before it is taken is processed once, in the order keys came', async (t) => {
  const q = new WorkQueue({ clock: new FakeClock() });
  for (const k of ['a', 'b', 'a', 'c', 'b']) q.add(k);
  t.is(q.len(), 3);
  t.deepEqual([await q.get(), await q.get(), await q.get()], ['a', 'b', 'c']);
  t.is(q.len(), 0);
});

test('a key re-added while processing is handed out again only after done(), never to a second worker meanwhile', async (t) => {
  const q = new WorkQueue({ clock: new FakeClock() });
  q.add('a');
  t.is(await q.get(), 'a');
  q.add('a');
  q.add('a');
  t.is(q.len(), 0, 'not queued while processing');
  let second: string | undefined;
  void q.get().then((k) => (second = k));
  await flush(2);
  t.is(second, undefined);
  q.done('a');
  await flush(2);
  t.is(second, 'a', 'processed again after, once');
  q.done('a');
  t.is(q.len(), 0);
});

test('N workers: every key is reconciled, never twice at the same time, and again when changed while in flight', async (t) => {
  const q = new WorkQueue({ clock: new FakeClock() });
  const active = new Set<string>();
  const runs = new Map<string, number>();
  let overlap = false;
  const gates: Array<() => void> = [];
  const ac = new AbortController();
  const done = runWorkers(
    q,
    async (key) => {
      if (active.has(key)) overlap = true;
      active.add(key);
      runs.set(key, (runs.get(key) ?? 0) + 1);
      await new Promise<void>((r) => gates.push(r));
      active.delete(key);
    },
    ac.signal,
    { workers: 3 },
  );
  for (const k of ['a', 'b', 'c', 'd']) q.add(k);
  await flush(2);
  t.is(active.size, 3, 'three workers busy');
  q.add('a'); // changed while in flight
  q.add('a');
  while (gates.length > 0 || q.len() > 0) {
    gates.shift()?.();
    await flush(2);
  }
  t.false(overlap);
  t.deepEqual(Object.fromEntries(runs), { a: 2, b: 1, c: 1, d: 1 });
  ac.abort();
  await done;
});

test('addAfter: the key comes after the delay; of two delays the earlier wins', async (t) => {
  const clock = new FakeClock();
  const q = new WorkQueue({ clock });
  q.addAfter('a', 1000);
  q.addAfter('a', 300);
  q.addAfter('a', 2000);
  q.addAfter('b', 0);
  t.is(q.len(), 1);
  t.is(await q.get(), 'b');
  await clock.advance(299);
  t.is(q.len(), 0);
  await clock.advance(1);
  t.is(q.len(), 1);
  await clock.advance(5000);
  t.is(q.len(), 1, 'the later delays were dropped');
});

test('addRateLimited: per-key back-off of 5 ms doubling, reset by forget; each key counts alone', async (t) => {
  const clock = new FakeClock();
  const q = new WorkQueue({ clock });
  const delays: number[] = [];
  for (let i = 0; i < 5; i++) {
    q.addRateLimited('a');
    delays.push(clock.delays()[0]);
    await clock.advance(delays[delays.length - 1]);
    t.is(await q.get(), 'a');
    q.done('a');
  }
  t.deepEqual(delays, [5, 10, 20, 40, 80]);
  t.is(q.numRequeues('a'), 5);
  q.addRateLimited('b');
  t.deepEqual(clock.delays(), [5], 'another key starts at the base');
  q.forget('a');
  t.is(q.numRequeues('a'), 0);
  q.addRateLimited('a');
  t.deepEqual(clock.delays(), [5, 5]);
});

test('the per-key limiter caps at its maximum (client-go default 1000 s)', (t) => {
  const l = new ItemExponentialFailureRateLimiter(5, 1000_000);
  let last = 0;
  for (let i = 0; i < 40; i++) last = l.when('k');
  t.is(last, 1000_000);
  for (let i = 0; i < 2000; i++) last = l.when('k');
  t.is(last, 1000_000, 'no overflow to NaN or Infinity');
});

test('the overall bucket: a burst passes at once, then retries are paced at qps', async (t) => {
  const clock = new FakeClock();
  const bucket = new BucketRateLimiter(10, 100, clock);
  const first = Array.from({ length: 100 }, () => bucket.when());
  t.true(first.every((d) => d === 0));
  t.is(bucket.when(), 100);
  t.is(bucket.when(), 200);
  await clock.advance(1000);
  // Ten tokens came back; two were owed: eight go at once, the ninth waits for the next one.
  t.deepEqual(Array.from({ length: 9 }, () => bucket.when()), [0, 0, 0, 0, 0, 0, 0, 0, 100]);
  const both = new MaxOfRateLimiter(new ItemExponentialFailureRateLimiter(5, 1000), new BucketRateLimiter(1, 1, clock));
  t.is(both.when('x'), 5);
  t.is(both.when('y'), 1000, 'the bucket is the longer wait');
  t.is(both.numRequeues('x'), 1);
});

test('runWorkers: a failing key is retried with back-off and forgotten once it succeeds; shut down on abort', async (t) => {
  const clock = new FakeClock();
  const q = new WorkQueue({ clock });
  let failuresLeft = 3;
  const errors: string[] = [];
  let succeeded = 0;
  const ac = new AbortController();
  const done = runWorkers(
    q,
    () => {
      if (failuresLeft-- > 0) return Promise.reject(new Error('not yet'));
      succeeded++;
      return Promise.resolve();
    },
    ac.signal,
    { onError: (key, err) => errors.push(`${key}: ${(err as Error).message}`) },
  );
  q.add('k');
  const waits: number[] = [];
  while (succeeded === 0) {
    await flush();
    const [d] = clock.delays();
    if (d === undefined) continue;
    waits.push(d);
    await clock.advance(d);
  }
  t.deepEqual(waits, [5, 10, 20]);
  t.is(errors.length, 3);
  t.is(q.numRequeues('k'), 0, 'forgotten after the success');
  ac.abort();
  await done;
  t.true(q.isShuttingDown());
  q.add('later');
  t.is(q.len(), 0, 'adds after shutdown are ignored');
  t.is(await q.get(), undefined);
});

test('shutDown drops queued and delayed keys and wakes waiting getters', async (t) => {
  const clock = new FakeClock();
  const q = new WorkQueue({ clock });
  const waiting = q.get();
  q.shutDown();
  t.is(await waiting, undefined);
  const q2 = new WorkQueue({ clock });
  q2.add('a');
  q2.addAfter('b', 100);
  q2.shutDown();
  t.is(q2.len(), 0);
  t.deepEqual(clock.delays(), []);
  t.is(await q2.get(), undefined);
});
