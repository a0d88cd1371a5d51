/** The forwarded-answer cache: TTL caps, RFC 2308 negative TTLs, what is never cached, and the size bound (least recently used first). */
import test from 'ava';
import fc from 'fast-check';
import type { Answer } from 'dns-packet';
import { AnswerCache, cacheKey, cacheSeconds, DEFAULT_CACHE_LIMITS } from '../../../../agent/dns/answer-cache';

const a = (name: string, ttl: number, ip = '192.0.2.1'): Answer => ({ type: 'A', name, ttl, class: 'IN', data: ip });
const soa = (ttl: number, minimum: number): Answer => ({ type: 'SOA', name: 'test', ttl, class: 'IN', data: { mname: 'ns', rname: 'h', serial: 1, refresh: 1, retry: 1, expire: 1, minimum } });
const ok = (answers: Answer[]) => ({ rcode: 'NOERROR', answers, authorities: [], additionals: [] });

test('cache lifetimes: smallest answer TTL capped at 30 s; negative answers min(SOA TTL, minimum) capped at 5 s; nothing for errors, zero TTLs, SOA-less negatives', (t) => {
  const L = DEFAULT_CACHE_LIMITS;
  t.is(cacheSeconds(ok([a('x', 300), a('x', 12)]), L), 12);
  t.is(cacheSeconds(ok([a('x', 3600)]), L), 30);
  t.is(cacheSeconds(ok([a('x', 0)]), L), 0);
  t.is(cacheSeconds({ rcode: 'NXDOMAIN', answers: [], authorities: [soa(60, 2)] }, L), 2);
  t.is(cacheSeconds({ rcode: 'NOERROR', answers: [], authorities: [soa(1, 60)] }, L), 1, 'NODATA uses the SOA too');
  t.is(cacheSeconds({ rcode: 'NXDOMAIN', answers: [], authorities: [soa(600, 600)] }, L), 5);
  t.is(cacheSeconds({ rcode: 'NXDOMAIN', answers: [], authorities: [] }, L), 0);
  t.is(cacheSeconds({ rcode: 'SERVFAIL', answers: [], authorities: [soa(60, 60)] }, L), 0);
  t.is(cacheSeconds({ rcode: 'REFUSED', answers: [], authorities: [] }, L), 0);
});

test('entries expire, age their TTLs, and the least recently used goes first when full', (t) => {
  let now = 0;
  const c = new AnswerCache({ maxEntries: 2, maxSuccessTtl: 30, maxDenialTtl: 5 }, () => now);
  t.is(c.put(cacheKey('a.test', 'A'), ok([a('a.test', 20)])), 20);
  c.put(cacheKey('b.test', 'A'), ok([a('b.test', 20)]));
  now = 5_500;
  t.is((c.get(cacheKey('A.TEST', 'A'))!.answers[0] as { ttl: number }).ttl, 15, 'keys ignore case; 5 whole seconds aged');
  c.put(cacheKey('c.test', 'A'), ok([a('c.test', 20)]));
  t.is(c.size, 2);
  t.is(c.get(cacheKey('b.test', 'A')), undefined, 'b was the least recently used');
  t.truthy(c.get(cacheKey('a.test', 'A')));
  now = 20_000;
  t.is(c.get(cacheKey('a.test', 'A')), undefined, 'expired');
  t.is(new AnswerCache({ maxEntries: 0, maxSuccessTtl: 30, maxDenialTtl: 5 }).put('k', ok([a('x', 10)])), 0, 'size 0: no cache');
});

test('property: the cache never holds more than maxEntries and never serves an expired entry', (t) => {
  t.notThrows(() =>
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 8 }), fc.array(fc.tuple(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 3000 })), { maxLength: 80 }), (max, ops) => {
      let now = 0;
      const c = new AnswerCache({ maxEntries: max, maxSuccessTtl: 30, maxDenialTtl: 5 }, () => now);
      const expiry = new Map<string, number>();
      for (const [n, ttl, dt] of ops) {
        now += dt;
        const key = cacheKey(`n${n}.test`, 'A');
        const hit = c.get(key);
        if (hit) {
          if (!(expiry.get(key)! > now)) return false;
        }
        const secs = c.put(key, ok([a(`n${n}.test`, ttl)]));
        if (secs > 0) expiry.set(key, now + secs * 1000);
        if (c.size > max) return false;
      }
      return true;
    }),
  ),
  );
});
