import test from 'ava';
import fc from 'fast-check';
import { isObject } from '../../../../apiserver/api/types';
import { diffPaths, isZero, semanticEqual } from '../../../../apiserver/registry/semantic-equal';

/** The definition, written plainly (zero-check first at every level): what semanticEqual must agree with. */
function reference(a: unknown, b: unknown): boolean {
  if (isZero(a) && isZero(b)) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => reference(x, b[i]));
  if (isObject(a) && isObject(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) if (!reference(a[k], b[k])) return false;
    return true;
  }
  return a === b;
}

test('Go zero values equal their absence', (t) => {
  t.true(semanticEqual({ a: '', b: 0, c: false, d: [], e: {}, f: null }, {}));
  t.true(semanticEqual({}, { x: { y: [] } }));
  t.true(semanticEqual(undefined, {}));
  t.false(semanticEqual({ a: 1 }, {}));
  t.false(semanticEqual([0], []));
  t.false(semanticEqual({ a: { b: 'x' } }, { a: { b: 'y' } }));
});

test('diffPaths names the fields that differ, and nothing for semantically equal values', (t) => {
  t.deepEqual(diffPaths({ a: { b: 1, c: [1, 2] }, d: '' }, { a: { b: 2, c: [1, 3] } }), ['a.b', 'a.c[1]']);
  t.deepEqual(diffPaths({ a: [], b: {} }, { c: null }), []);
  t.deepEqual(diffPaths({ a: [1] }, { a: [1, 2] }), ['a']);
});

const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom(undefined, null, '', 0, false, 'x', 1, true),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('a', 'b', 'c'), tie('value'), { maxKeys: 3 }),
  ),
})).value;

test('agrees with the plain definition on random values', (t) => {
  t.notThrows(() =>
    fc.assert(
    fc.property(json, json, (a, b) => semanticEqual(a, b) === reference(a, b) && semanticEqual(a, b) === semanticEqual(b, a) && (diffPaths(a, b).length === 0) === semanticEqual(a, b)),
    { numRuns: 2000 },
  ),
  );
});
