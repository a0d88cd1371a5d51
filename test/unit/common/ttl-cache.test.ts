import test from 'ava';
import { TtlCache } from '../../../common/ttl-cache';

test('entries live for their own TTL on the injected clock; a TTL of 0 stores nothing', (t) => {
  let now = 1000;
  const c = new TtlCache<string>(() => now);
  c.set('a', 'x', 100);
  c.set('b', 'y', 300);
  c.set('zero', 'z', 0);
  t.is(c.get('a'), 'x');
  t.is(c.get('zero'), undefined);
  now = 1100;
  t.is(c.get('a'), undefined, 'expired at its deadline');
  t.is(c.get('b'), 'y');
  t.is(c.size, 1, 'an expired entry is dropped when read');
});

test('bounded: the oldest entry goes first; setting a key again makes it the newest', (t) => {
  const c = new TtlCache<number>(() => 0, 2);
  c.set('a', 1, 10);
  c.set('b', 2, 10);
  c.set('a', 3, 10);
  c.set('c', 4, 10);
  t.is(c.size, 2);
  t.is(c.get('b'), undefined);
  t.is(c.get('a'), 3);
  t.is(c.get('c'), 4);
});
