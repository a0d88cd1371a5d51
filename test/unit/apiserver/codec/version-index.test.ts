import test from 'ava';
import fc from 'fast-check';
import { VersionIndex } from '../../../../apiserver/codec/version-index';

test('the index answers as a Map under any sequence of adds and deletes (collisions, wrap-around, growth, backward shift)', (t) => {
  // Few distinct keys over a small table: long probe runs, runs that wrap past the end, and
  // deletions inside them; negative keys (the k8s.io name's entries) and keys beyond 32 bits too.
  const key = fc.oneof(fc.integer({ min: -40, max: 40 }), fc.constantFrom(2 ** 32 + 1, -(2 ** 40) - 3, 2 ** 52 + 7), fc.constantFrom('a', 'b'));
  const op = fc.tuple(fc.boolean(), key, fc.nat({ max: 2 ** 31 - 1 }));
  fc.assert(
    fc.property(fc.array(op, { maxLength: 300 }), (ops) => {
      const index = new VersionIndex(4);
      const model = new Map<string | number, number>();
      for (const [add, k, v] of ops) {
        if (add && !model.has(k)) {
          index.add(k, v);
          model.set(k, v);
        } else if (!add) {
          index.delete(k);
          model.delete(k);
        }
        if (index.size !== model.size) return false;
      }
      for (let k = -41; k <= 41; k++) if (index.get(k) !== (model.get(k) ?? -1)) return false;
      for (const k of [2 ** 32 + 1, -(2 ** 40) - 3, 2 ** 52 + 7, 'a', 'b']) if (index.get(k) !== (model.get(k) ?? -1)) return false;
      return true;
    }),
    { numRuns: 500 },
  );
  t.pass('fast-check found no sequence where the index and the Map differ');
});

test('a sliding window of revisions, as the cache uses it: each key found while held, gone once deleted', (t) => {
  const index = new VersionIndex(8);
  const window = 1000;
  let wrong = 0;
  for (let rev = 1; rev <= 20_000; rev++) {
    index.add(rev, rev % 997);
    index.add(-rev, rev % 991);
    if (rev > window) {
      index.delete(rev - window);
      index.delete(-(rev - window));
    }
    if (index.get(rev) !== rev % 997 || index.get(-rev) !== rev % 991 || (rev > window && index.get(rev - window) !== -1)) wrong++;
  }
  t.is(wrong, 0);
  t.is(index.size, 2 * window);
  t.is(index.get(20_000 - window + 1), (20_000 - window + 1) % 997);
});
