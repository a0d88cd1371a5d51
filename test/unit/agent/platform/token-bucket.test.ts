import test from 'ava';
import { TokenBucket } from '../../../../agent/platform/token-bucket';
import { DEFAULT_BURST, DEFAULT_QPS } from '../../../../agent/podresources/pod-resources-server';

test('defaults are upstream\'s: 100 QPS, burst 10', (t) => {
  t.is(DEFAULT_QPS, 100);
  t.is(DEFAULT_BURST, 10);
});

test('a full bucket lets the burst through, then refuses until time refills it', (t) => {
  let now = 1000;
  const b = new TokenBucket(100, 10, () => now);
  const first = Array.from({ length: 15 }, () => b.allow());
  t.deepEqual(first, [...Array(10).fill(true), ...Array(5).fill(false)]);
  now += 10; // 100 QPS: one token per 10 ms
  t.true(b.allow());
  t.false(b.allow());
  now += 25;
  t.true(b.allow());
  t.true(b.allow());
  t.false(b.allow());
});

test('refill never exceeds the burst', (t) => {
  let now = 0;
  const b = new TokenBucket(100, 10, () => now);
  for (let i = 0; i < 10; i++) b.allow();
  now += 60_000;
  let allowed = 0;
  while (b.allow()) allowed++;
  t.is(allowed, 10);
});

test('a clock stepping back neither adds nor removes tokens', (t) => {
  let now = 5000;
  const b = new TokenBucket(100, 2, () => now);
  t.true(b.allow());
  now = 0;
  t.true(b.allow());
  t.false(b.allow());
  now = 5010; // only time past the latest reading counts
  t.true(b.allow());
});

test('msUntilToken says when the next token is due and takes nothing', (t) => {
  let now = 0;
  const b = new TokenBucket(100, 1, () => now);
  t.is(b.msUntilToken(), 0);
  t.true(b.allow());
  t.is(b.msUntilToken(), 10);
  now = 4;
  t.is(b.msUntilToken(), 6);
  now = 10;
  t.is(b.msUntilToken(), 0);
  t.true(b.allow());
});

test('invalid limits are refused', (t) => {
  t.throws(() => new TokenBucket(0, 10), { message: /invalid rate limit/ });
  t.throws(() => new TokenBucket(10, 0), { message: /invalid rate limit/ });
});
