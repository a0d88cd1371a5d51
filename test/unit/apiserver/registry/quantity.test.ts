import test from 'ava';
import { canonicalQuantity, compareQuantities, parseQuantity } from '../../../../apiserver/registry/quantity';
import { canonicalizeQuantities } from '../../../../apiserver/registry/canonical-quantities';
import { obj, quantityMap, str } from '../../../../apiserver/registry/schema-builders';

test('canonical forms match upstream Quantity.String()', (t) => {
  const cases: Array<[string | number, string]> = [
    ['1024Mi', '1Gi'],
    ['1536Mi', '1536Mi'],
    ['1.5Gi', '1536Mi'],
    ['1000m', '1'],
    ['0.5', '500m'],
    ['1500', '1500'],
    ['2000', '2k'],
    ['100m', '100m'],
    ['0', '0'],
    ['1e3', '1e3'],
    ['12e2', '1200'],
    ['512Ki', '512Ki'],
    ['0.5Ki', '512'],
    ['1.0000000001', '1000000001n'],
    ['-2Ki', '-2Ki'],
    [2, '2'],
    [0.25, '250m'],
    ['1G', '1G'],
    ['1000M', '1G'],
  ];
  for (const [input, want] of cases) t.is(canonicalQuantity(input), want, String(input));
});

test('precision finer than nano rounds up', (t) => {
  t.is(canonicalQuantity('0.0000000001'), '1n');
});

test('invalid quantities are rejected', (t) => {
  for (const bad of ['', 'abc', '1K', '1.2.3', '1 Gi', 'Gi', '--1']) t.is(parseQuantity(bad), undefined, bad);
});

test('comparison is by value across formats', (t) => {
  const q = (s: string) => parseQuantity(s)!;
  t.is(compareQuantities(q('1Gi'), q('1024Mi')), 0);
  t.is(compareQuantities(q('100m'), q('0.1')), 0);
  t.is(compareQuantities(q('1'), q('999m')), 1);
  t.is(compareQuantities(q('1k'), q('1Ki')), -1);
});

test('canonicalizeQuantities rewrites only quantity fields', (t) => {
  const schema = obj({ name: str(), capacity: quantityMap() });
  const o = { name: '1000m', capacity: { cpu: '1000m', memory: 1073741824, bad: 'x' } };
  canonicalizeQuantities(schema, o);
  t.deepEqual(o, { name: '1000m', capacity: { cpu: '1', memory: '1073741824', bad: 'x' } });
});
