import test from 'ava';
import { FlagError, parseFlags } from '../../../../apiserver/config/flags';

test('--watch-cache-max-bytes: 32 MiB by default, a non-negative integer when given', (t) => {
  t.is(parseFlags([]).watchCacheMaxBytes, 32 * 1024 * 1024);
  t.is(parseFlags(['--watch-cache-max-bytes=1048576']).watchCacheMaxBytes, 1048576);
  t.is(parseFlags(['--watch-cache-max-bytes', '0']).watchCacheMaxBytes, 0);
  for (const bad of ['32Mi', '-1', '']) {
    const err = t.throws(() => parseFlags([`--watch-cache-max-bytes=${bad}`]), { instanceOf: FlagError });
    t.regex(err?.message ?? '', /--watch-cache-max-bytes: must be a non-negative integer/);
  }
});

test('--event-ttl: 1h by default (upstream\'s), a positive duration when given', (t) => {
  t.is(parseFlags([]).eventTtlMs, 3600_000);
  t.is(parseFlags(['--event-ttl=90s']).eventTtlMs, 90_000);
  t.regex(t.throws(() => parseFlags(['--event-ttl=0s']), { instanceOf: FlagError })?.message ?? '', /--event-ttl must be positive/);
  t.regex(t.throws(() => parseFlags(['--event-ttl=soon']), { instanceOf: FlagError })?.message ?? '', /invalid argument "soon" for --event-ttl/);
});
