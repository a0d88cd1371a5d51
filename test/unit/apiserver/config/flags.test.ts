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
