import test from 'ava';
import { applyMergePatch, mergePatchInPlace } from '../../../../apiserver/patch/merge-patch';

// Vectors written from the rules and examples of RFC 7386 (section 2 and appendix A).
const vectors: Array<[unknown, unknown, unknown]> = [
  [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
  [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
  [{ a: 'b' }, { a: null }, {}],
  [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
  [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
  [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
  [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
  [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
  [['a', 'b'], ['c', 'd'], ['c', 'd']],
  [{ a: 'b' }, ['c'], ['c']],
  [{ a: 'foo' }, null, null],
  [{ a: 'foo' }, 'bar', 'bar'],
  [{ e: null }, { a: 1 }, { e: null, a: 1 }],
  [[1, 2], { a: 'b', c: null }, { a: 'b' }],
  [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
];

for (const [i, [doc, patch, want]] of vectors.entries()) {
  test(`RFC 7386 vector ${i + 1}: ${JSON.stringify(doc)} + ${JSON.stringify(patch)}`, (t) => {
    t.deepEqual(applyMergePatch(doc, patch), want);
  });
}

test('the RFC section 3 example merges a nested document', (t) => {
  const doc = { title: 'Goodbye!', author: { givenName: 'John', familyName: 'Doe' }, tags: ['example', 'sample'], content: 'This will be unchanged' };
  const patch = { title: 'Hello!', phoneNumber: '+01-123-456-7890', author: { familyName: null }, tags: ['example'] };
  t.deepEqual(applyMergePatch(doc, patch), {
    title: 'Hello!',
    author: { givenName: 'John' },
    tags: ['example'],
    content: 'This will be unchanged',
    phoneNumber: '+01-123-456-7890',
  });
});

test('arrays are replaced whole and nulls inside arrays are kept', (t) => {
  t.deepEqual(applyMergePatch({ a: [1, 2, 3] }, { a: [null, { x: null }] }), { a: [null, { x: null }] });
});

test('inputs are not mutated and the result does not alias the patch', (t) => {
  const doc = { a: { b: 1, c: [1] }, d: 1 };
  const patch = { a: { b: null, e: { f: [1] } }, d: null };
  const out = applyMergePatch(doc, patch) as { a: { e: { f: number[] } } };
  t.deepEqual(out, { a: { c: [1], e: { f: [1] } } });
  t.deepEqual(doc, { a: { b: 1, c: [1] }, d: 1 });
  out.a.e.f.push(2);
  t.deepEqual(patch, { a: { b: null, e: { f: [1] } }, d: null });
});

test('mergePatchInPlace mutates the owned target', (t) => {
  const target = { a: 1, b: { c: 1 } };
  const out = mergePatchInPlace(target, { b: { d: 2 } });
  t.is(out, target);
  t.deepEqual(target, { a: 1, b: { c: 1, d: 2 } });
});

test('a __proto__ key merges as data', (t) => {
  const out = applyMergePatch({}, JSON.parse('{"__proto__": {"x": 1}}')) as Record<string, unknown>;
  t.deepEqual(Object.keys(out), ['__proto__']);
  t.is(Object.getPrototypeOf(out), Object.prototype);
});
