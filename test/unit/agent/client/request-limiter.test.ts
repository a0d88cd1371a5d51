import test from 'ava';
import { TokenBucketLimiter } from '../../../../agent/client/request-limiter';

/** Lets pending promise callbacks run. */
const settle = () => new Promise((r) => setImmediate(r));

test('the burst passes at once; later requests wait for tokens and go in the order they asked', async (t) => {
  let now = 0;
  const limiter = new TokenBucketLimiter(1000, 3, () => now);
  for (let i = 0; i < 3; i++) await limiter.wait();
  const order: number[] = [];
  const waits = [0, 1, 2].map((i) => limiter.wait().then(() => order.push(i)));
  await settle();
  t.deepEqual(order, [], 'no token left: nobody may pass before time moves');
  now = 2; // two tokens refilled (1 per ms): exactly the first two get through
  while (order.length < 2) await new Promise((r) => setTimeout(r, 2));
  await new Promise((r) => setTimeout(r, 10));
  t.deepEqual(order, [0, 1]);
  now = 10;
  await Promise.all(waits);
  t.deepEqual(order, [0, 1, 2]);
});

test('an aborted waiter rejects with AbortError and does not use up a token', async (t) => {
  let now = 0;
  const limiter = new TokenBucketLimiter(1000, 1, () => now);
  await limiter.wait();
  const ac = new AbortController();
  const aborted = limiter.wait(ac.signal);
  const after: string[] = [];
  const next = limiter.wait().then(() => after.push('next'));
  ac.abort();
  await t.throwsAsync(aborted, { name: 'AbortError' });
  now = 1; // exactly one token: it goes to the waiter still queued
  await next;
  t.deepEqual(after, ['next']);
  await t.throwsAsync(limiter.wait(ac.signal), { name: 'AbortError' });
});

test('0 means client-go defaults: a burst of 10', async (t) => {
  const limiter = new TokenBucketLimiter(0, 0, () => 0);
  let passed = 0;
  const ac = new AbortController();
  const waits = Array.from({ length: 11 }, () => limiter.wait(ac.signal).then(() => passed++));
  await settle();
  t.is(passed, 10);
  // The clock is frozen, so the 11th never gets a token: end it, or it would keep the limiter's timer going.
  ac.abort();
  const outcomes = await Promise.allSettled(waits);
  t.is(outcomes.filter((o) => o.status === 'rejected').length, 1);
});
