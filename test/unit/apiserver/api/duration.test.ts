import test from 'ava';
import { formatDuration, parseDuration } from '../../../../apiserver/api/duration';

test('parses Go duration strings to milliseconds', (t) => {
  t.is(parseDuration('10s'), 10_000);
  t.is(parseDuration('5m0s'), 300_000);
  t.is(parseDuration('1h30m'), 5_400_000);
  t.is(parseDuration('1.5h'), 5_400_000);
  t.is(parseDuration('300ms'), 300);
  t.is(parseDuration('1m30.5s'), 90_500);
  t.is(parseDuration('.5s'), 500);
  t.is(parseDuration('2000us'), 2);
  t.is(parseDuration('1500µs'), 1.5);
  t.is(parseDuration('0'), 0);
  t.is(parseDuration('-2s'), -2000);
  t.is(parseDuration('+2s'), 2000);
});

test('rejects malformed durations with a reason naming the text', (t) => {
  t.throws(() => parseDuration(''), { message: 'invalid duration ""' });
  t.throws(() => parseDuration('10'), { message: 'missing unit in duration "10"' });
  t.throws(() => parseDuration('10x'), { message: 'unknown unit "x" in duration "10x"' });
  t.throws(() => parseDuration('1d'), { message: 'unknown unit "d" in duration "1d"' });
  t.throws(() => parseDuration('s'), { message: 'invalid duration "s"' });
  t.throws(() => parseDuration('1s5'), { message: 'missing unit in duration "1s5"' });
  t.throws(() => parseDuration('.s'), { message: 'invalid duration ".s"' });
  t.throws(() => parseDuration(' 1s'), { message: 'invalid duration " 1s"' });
});

test('formats milliseconds as Go prints durations', (t) => {
  t.is(formatDuration(0), '0s');
  t.is(formatDuration(300_000), '5m0s');
  t.is(formatDuration(10_000), '10s');
  t.is(formatDuration(3_600_000), '1h0m0s');
  t.is(formatDuration(5_400_000), '1h30m0s');
  t.is(formatDuration(1_500), '1.5s');
  t.is(formatDuration(250), '250ms');
  t.is(formatDuration(-2000), '-2s');
  for (const ms of [0, 250, 1500, 90_500, 5_400_000, 86_400_000]) t.is(parseDuration(formatDuration(ms)), ms);
});
