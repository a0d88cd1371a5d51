import test from 'ava';
import fc from 'fast-check';
import { parseGoBool, readQueryBool } from '../../../common/query-bool';

test("parseGoBool accepts exactly Go's strconv.ParseBool spellings", (t) => {
  for (const v of ['1', 't', 'T', 'TRUE', 'true', 'True']) t.true(parseGoBool(v), v);
  for (const v of ['0', 'f', 'F', 'FALSE', 'false', 'False']) t.false(parseGoBool(v), v);
  for (const v of ['', 'yes', 'no', 'tRUE', 'fAlse', ' true', 'true ', '2', '-1', 'on']) t.is(parseGoBool(v), undefined, JSON.stringify(v));
});

test('readQueryBool: absent is the default, empty is true, a value outside the Go spellings is an error naming the parameter', (t) => {
  const q = (s: string) => new URLSearchParams(s);
  t.false(readQueryBool(q(''), 'follow'));
  t.true(readQueryBool(q(''), 'follow', true));
  t.true(readQueryBool(q('follow'), 'follow'));
  t.true(readQueryBool(q('follow=True'), 'follow'));
  t.false(readQueryBool(q('follow=FALSE'), 'follow'));
  t.deepEqual(readQueryBool(q('follow=maybe'), 'follow'), { error: 'follow: invalid boolean "maybe": must be one of 1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False' });
});

test('property: every string is either one of the twelve spellings or refused', (t) => {
  const spellings = new Set(['1', 't', 'T', 'TRUE', 'true', 'True', '0', 'f', 'F', 'FALSE', 'false', 'False']);
  t.notThrows(() =>
    fc.assert(
    fc.property(fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom(...spellings)), (s) => {
      const b = parseGoBool(s);
      return spellings.has(s) ? typeof b === 'boolean' : b === undefined;
    }),
    { numRuns: 500 },
  ),
  );
});
