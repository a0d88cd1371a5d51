import test from 'ava';
import { Backoff, jittered } from '../../../../agent/node/backoff';

test('doubles from the initial delay up to the cap, and reset starts over', (t) => {
  const b = new Backoff({ initialMs: 200, maxMs: 7000 });
  const seq = Array.from({ length: 8 }, () => b.next());
  t.deepEqual(seq, [200, 400, 800, 1600, 3200, 6400, 7000, 7000]);
  b.reset();
  t.is(b.next(), 200);
});

test('jitter adds at most the given fraction and never exceeds the cap', (t) => {
  const b = new Backoff({ initialMs: 1000, maxMs: 1500, jitter: 0.5, random: () => 0.99 });
  t.is(b.next(), 1495);
  t.is(b.next(), 1500);
  t.is(jittered(10_000, 0.04, () => 0.5), 10_200);
  t.is(jittered(10_000, 0.04, () => 0), 10_000);
});
