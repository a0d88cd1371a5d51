import test from 'ava';
import fc from 'fast-check';
import { jsonEqual } from '../../../../apiserver/api/json-equal';

/** JSON with keys sorted: equal strings ⇔ equal JSON values. */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : x,
  );
}

test('undefined members are absent and undefined elements null, as in JSON', (t) => {
  t.true(jsonEqual({ a: 1, b: undefined }, { a: 1 }));
  t.true(jsonEqual([undefined, 1], [null, 1]));
  t.true(jsonEqual({ a: { x: [1, { y: 2 }] }, b: 'c' }, { b: 'c', a: { x: [1, { y: 2 }] } }));
  t.false(jsonEqual({ a: 1 }, { a: 1, b: 2 }));
  t.false(jsonEqual({ a: null }, {}));
  t.false(jsonEqual([1], { 0: 1 }));
  t.false(jsonEqual('1', 1));
});

const value = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom(undefined, null, 0, 1, '', 'a', true, false),
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('a', 'b', 'c'), tie('v'), { maxKeys: 3 }),
  ),
})).v;

test('agrees with comparing canonical JSON on random values', (t) => {
  t.notThrows(() =>
    fc.assert(
    fc.property(value, value, (a, b) => {
      if (a === undefined || b === undefined) return true; // not JSON documents
      return jsonEqual(a, b) === (canonical(a) === canonical(b));
    }),
    { numRuns: 3000 },
  ),
  );
});
