import test, { type ExecutionContext } from 'ava';
import { ApiError } from '../../../../apiserver/api/errors';
import { bodyLimitBytes, measureJson } from '../../../../apiserver/patch/json-bounds';
import { applyJsonPatch } from '../../../../apiserver/patch/json-patch';

// The bounds of json-patch.ts (issue 16, defect 1): copies are limited by their accumulated size
// as upstream limits them, the work of shifting array elements is limited, and a patch may build
// a value of any depth without overflowing the stack (its result is checked by patch-by-format).

function apiError(t: ExecutionContext, fn: () => unknown): ApiError {
  const e = t.throws(fn, { instanceOf: ApiError });
  if (!e) throw new Error('expected an ApiError');
  return e;
}

/** The probe's body: an add, then n copies of the subtree into itself, each doubling it. */
function doublingPatch(n: number): unknown[] {
  const ops: unknown[] = [{ op: 'add', path: '/metadata/labels', value: { x: 'y'.repeat(500) } }];
  for (let i = 0; i < n; i++) ops.push({ op: 'copy', from: '/metadata/labels', path: `/metadata/labels/c${i}` });
  return ops;
}

const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'one', namespace: 'default' } };

test('an add and 21 copies of a subtree into itself (a 2 KB body) are refused with upstream’s copy limit', (t) => {
  const patch = doublingPatch(21);
  t.true(JSON.stringify(patch).length < 2100);
  const e = apiError(t, () => applyJsonPatch(configMap, patch));
  t.is(e.code, 422);
  t.regex(e.message, /^Unable to complete the copy, the accumulated size increase of copy is \d+, exceeding the limit 3145728$/);
  // The copy that passed the limit is named: the 12th doubles 500-byte labels past 3 MiB.
  t.is(e.details?.causes?.[0]?.field, '/metadata/labels/c12');
});

test('the refused copy is never paid for: 60 doublings (2^60 times the labels) stop at the same copy as 21', (t) => {
  // Without a bound measured before cloning, this never finishes (or runs out of memory).
  const e = apiError(t, () => applyJsonPatch(configMap, doublingPatch(60)));
  t.is(e.code, 422);
  t.is(e.details?.causes?.[0]?.field, '/metadata/labels/c12');
});

test('copies accumulate over the whole patch, each counted by its measured size', (t) => {
  const bounds = { maxCopyBytes: 1000, maxWork: 1e9 };
  const doc = { a: 'x'.repeat(398) };
  t.is(measureJson(doc.a).size, 400);
  const two = [
    { op: 'copy', from: '/a', path: '/b' },
    { op: 'copy', from: '/a', path: '/c' },
  ];
  t.deepEqual(Object.keys(applyJsonPatch(doc, two, bounds) as object), ['a', 'b', 'c']);
  const e = apiError(t, () => applyJsonPatch(doc, [...two, { op: 'copy', from: '/a', path: '/d' }], bounds));
  t.is(e.code, 422);
  t.regex(e.message, /accumulated size increase of copy is \d+, exceeding the limit 1000/);
  // add, replace and move insert the patch's own values or move existing ones: not copies.
  const cheap = [
    { op: 'add', path: '/b', value: 'y'.repeat(900) },
    { op: 'replace', path: '/b', value: 'z'.repeat(900) },
    { op: 'move', from: '/b', path: '/c' },
  ];
  t.deepEqual(Object.keys(applyJsonPatch(doc, cheap, bounds) as object), ['a', 'c']);
});

test('inserting at the head of a long array many times is refused (work bound), appending is not', (t) => {
  const doc = { a: new Array<number>(20_000).fill(0) };
  const heads = Array.from({ length: 10_000 }, () => ({ op: 'add', path: '/a/0', value: 1 }));
  // 10,000 inserts shifting 20,000..30,000 elements each: 2.5e8 moves, more than 4 x 3 MiB.
  const e = apiError(t, () => applyJsonPatch(doc, heads));
  t.is(e.code, 422);
  t.regex(e.message, /too costly to apply: its operations shift or compare more than 12582912 array elements/);
  const removals = Array.from({ length: 10_000 }, () => ({ op: 'remove', path: '/a/0' }));
  t.is(apiError(t, () => applyJsonPatch({ a: new Array<number>(30_000).fill(0) }, removals)).code, 422);
  const appends = Array.from({ length: 10_000 }, () => ({ op: 'add', path: '/a/-', value: 1 }));
  t.is((applyJsonPatch(doc, appends) as { a: number[] }).a.length, 30_000);
  // Removing from the tail shifts nothing.
  const tail = Array.from({ length: 10_000 }, (_, i) => ({ op: 'remove', path: `/a/${19_999 - i}` }));
  t.is((applyJsonPatch(doc, tail) as { a: number[] }).a.length, 10_000);
});

test('a patch may build a value deeper than the stack allows while it applies (clone and test are not recursive)', (t) => {
  let deep: unknown = 0;
  for (let i = 0; i < 400; i++) deep = { a: deep };
  const ops: unknown[] = [{ op: 'add', path: '/a', value: deep }];
  // Each copy of /a (a chain of n objects) into its own innermost object doubles the chain:
  // 400, 800, ... 25,600 objects.
  for (let n = 400; n < 20_000; n *= 2) ops.push({ op: 'copy', from: '/a', path: '/a' + '/a'.repeat(n) });
  const out = applyJsonPatch({}, ops) as { a: unknown };
  t.true(measureJson(out).depth > 20_000);
  // Cloning that object and comparing it with a value as deep: no RangeError either.
  t.deepEqual(Object.keys(applyJsonPatch(out, [{ op: 'test', path: '/a', value: out.a }]) as object), ['a']);
});

test('the default copy limit is the body limit', (t) => {
  t.is(bodyLimitBytes, 3 * 1024 * 1024);
});
