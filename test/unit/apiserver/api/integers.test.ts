import test from 'ava';
import { clampToSafeInteger, INT64_MAX, INT64_MIN, int64TextError, parseInt64 } from '../../../../apiserver/api/integers';

test('parseInt64 accepts what Go strconv.ParseInt(s, 10, 64) accepts', (t) => {
  t.is(parseInt64('0'), 0n);
  t.is(parseInt64('+5'), 5n);
  t.is(parseInt64('-5'), -5n);
  t.is(parseInt64('007'), 7n);
  t.is(parseInt64('9223372036854775807'), INT64_MAX);
  t.is(parseInt64('-9223372036854775808'), INT64_MIN);
  t.is(parseInt64(`000000000000000000000000${'9223372036854775807'}`), INT64_MAX, 'leading zeros do not count');
  for (const bad of ['', '+', '-', ' 1', '1 ', '1.0', '1e3', '0x10', '1_000', '١']) t.is(parseInt64(bad), undefined, JSON.stringify(bad));
  for (const big of ['9223372036854775808', '-9223372036854775809', '99999999999999999999', '9'.repeat(5000)]) t.is(parseInt64(big), undefined, big.slice(0, 30));
});

test('int64TextError words the failure as strconv does', (t) => {
  t.is(int64TextError('12'), undefined);
  t.is(int64TextError('ten'), 'invalid syntax');
  t.is(int64TextError('99999999999999999999'), 'value out of range');
});

test('clampToSafeInteger keeps safe values and clamps the rest', (t) => {
  t.is(clampToSafeInteger(42n), 42);
  t.is(clampToSafeInteger(INT64_MAX), Number.MAX_SAFE_INTEGER);
  t.is(clampToSafeInteger(INT64_MIN), Number.MIN_SAFE_INTEGER);
  t.is(clampToSafeInteger(BigInt(Number.MAX_SAFE_INTEGER)), Number.MAX_SAFE_INTEGER);
});
