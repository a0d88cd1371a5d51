import test from 'ava';
import { SchedulingQueue } from '../../../../apiserver/scheduler/scheduling-queue';
import { FakeClock } from '../controllers/store-fixture';
import { FakeTimers } from './fake-timers';

function setup() {
  const clock = new FakeClock();
  const timers = new FakeTimers(clock);
  const q = new SchedulingQueue(timers);
  const ac = new AbortController();
  return { q, timers, ac };
}

test('keys come out once each, in the order they were added', async (t) => {
  const { q, ac } = setup();
  q.add('a');
  q.add('b');
  q.add('a');
  t.is(await q.next(ac.signal), 'a');
  t.is(await q.next(ac.signal), 'b');
  const waiting = q.next(ac.signal);
  q.add('c');
  t.is(await waiting, 'c');
});

test('addAfter holds the key until its timer fires', async (t) => {
  const { q, timers, ac } = setup();
  q.addAfter('a', 1000);
  t.true(q.has('a'));
  t.deepEqual(timers.delays(), [1000]);
  q.addAfter('a', 5000); // already waiting: unchanged
  t.deepEqual(timers.delays(), [1000]);
  const next = q.next(ac.signal);
  timers.advance(999);
  q.add('b');
  t.is(await next, 'b');
  timers.advance(1);
  t.is(await q.next(ac.signal), 'a');
  t.false(q.has('a'));
});

test('add ends a back-off early; forget drops the key', async (t) => {
  const { q, timers, ac } = setup();
  q.addAfter('a', 1000);
  q.add('a');
  t.deepEqual(timers.delays(), []);
  t.is(await q.next(ac.signal), 'a');
  q.addAfter('b', 1000);
  q.add('c');
  q.forget('b');
  q.forget('c');
  t.deepEqual(timers.delays(), []);
  t.false(q.has('b'));
  const next = q.next(ac.signal);
  ac.abort();
  t.is(await next, undefined);
});
