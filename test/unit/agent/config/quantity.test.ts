import test from 'ava';
import { parseQuantity } from '../../../../agent/config/quantity';
import { parseThresholdValue, thresholdAmount } from '../../../../agent/config/eviction';

test('parses binary, decimal and exponent quantities', (t) => {
  t.is(parseQuantity('100Mi'), 100 * 2 ** 20);
  t.is(parseQuantity('1.5Gi'), 1.5 * 2 ** 30);
  t.is(parseQuantity('10G'), 10e9);
  t.is(parseQuantity('500m'), 0.5);
  t.is(parseQuantity('1e3'), 1000);
  t.is(parseQuantity('2k'), 2000);
  t.is(parseQuantity('42'), 42);
});

test('rejects quantities Kubernetes rejects', (t) => {
  for (const bad of ['', 'Mi', '10MB', '1K', '1.2.3', '10 Mi', 'abc']) {
    t.throws(() => parseQuantity(bad), { message: /^invalid quantity/ }, bad);
  }
});

test('eviction thresholds are quantities or percentages of capacity', (t) => {
  t.deepEqual(parseThresholdValue('100Mi'), { kind: 'quantity', value: 100 * 2 ** 20 });
  t.deepEqual(parseThresholdValue('10%'), { kind: 'percentage', fraction: 0.1 });
  t.is(thresholdAmount(parseThresholdValue('10%'), 500), 50);
  t.is(thresholdAmount(parseThresholdValue('1Ki'), 500), 1024);
  t.throws(() => parseThresholdValue('120%'), { message: 'invalid percentage "120%": must be between 0% and 100%' });
  t.throws(() => parseThresholdValue('-1Mi'), { message: 'eviction threshold "-1Mi" must be positive' });
  t.throws(() => parseThresholdValue('x%'), { message: /invalid percentage/ });
});
