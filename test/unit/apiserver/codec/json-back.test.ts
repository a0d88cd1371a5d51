import test from 'ava';
import fc from 'fast-check';
import { BackWriter } from '../../../../apiserver/codec/back-writer';
import { writeJson } from '../../../../apiserver/codec/json-back';

/** What writeJson wrote, with a tiny first buffer so that every value makes the writer grow. */
function written(v: unknown, initial = 1): Buffer {
  const w = new BackWriter(initial);
  // Something before it (written after, backwards): the fallback must rewind to its own start only.
  w.raw(Buffer.from('>>'));
  writeJson(w, v);
  w.raw(Buffer.from('<<'));
  const out = w.finish();
  return Buffer.from(out.subarray(2, out.length - 2));
}

function same(t: { deepEqual(a: unknown, b: unknown, m?: string): void }, v: unknown, message?: string): void {
  t.deepEqual(written(v), Buffer.from(JSON.stringify(v)), message);
}

test('the bytes are those of JSON.stringify for any JSON value (property)', (t) => {
  t.notThrows(() => fc.assert(fc.property(fc.jsonValue(), (v) => written(v).equals(Buffer.from(JSON.stringify(v)))), { numRuns: 300 }));
  // Strings of any UTF-16 units, lone surrogates included, as keys and values.
  const text = fc.string({ unit: 'binary', maxLength: 40 });
  const fields = fc.dictionary(text, fc.oneof(text, fc.dictionary(text, fc.constant({}))));
  t.notThrows(() => fc.assert(fc.property(fields, (v) => written(v).equals(Buffer.from(JSON.stringify(v)))), { numRuns: 300 }));
});

test('FieldsV1 as the server writes it, and the strings a key or value may hold', (t) => {
  same(t, { 'f:data': { '.': {}, 'f:config.yaml': {}, 'f:token': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } });
  same(t, { 'k:{"name":"web","port":80}': { '.': {}, 'f:image': {} } }, 'quotes inside a key are escaped');
  same(t, { '': '', 'back\\slash': 'tab\there', 'new\nline': '\u0000\u001f\u007f' }, 'empty strings, escapes, control characters, DEL');
  same(t, { héllo: 'wörld', 日本: '語', emoji: '😀 a surrogate pair' }, 'non-ASCII keys and values as UTF-8');
  same(t, { lone: '\ud800 high, \udc00 low, \udbff\udfff a pair' }, 'lone surrogates as JSON.stringify escapes them');
  same(t, { long: 'x'.repeat(300), longer: `${'é'.repeat(5000)}"`, edge: 'y'.repeat(256), past: 'z'.repeat(257) }, 'strings longer than the copy loop');
  same(t, { n: [0, -0, 1.5, -2, 1e21, 1e-7, 2 ** 53, Number.MAX_VALUE], b: [true, false], z: null, e: [], o: {} }, 'numbers, booleans, null, empty containers');
  same(t, { 2: 'b', 1: 'a', x: 'c', '10': 'd' }, 'integer-like keys first, as JSON.stringify orders them');
});

test('values JSON.stringify treats specially are left to it: the bytes stay the same', (t) => {
  same(t, { a: undefined, b: 1 }, 'an undefined value is omitted');
  same(t, { f: () => 1, b: 2 }, 'a function value is omitted');
  same(t, [1, undefined, () => 1], 'undefined and functions in a list are null');
  // eslint-disable-next-line no-sparse-arrays -- the hole is the case
  same(t, [1, , 3], 'a hole is null');
  same(t, { d: new Date(0) }, 'a Date by its toJSON');
  same(t, { x: { toJSON: () => 'replaced' } }, 'an own toJSON');
  same(t, { n: NaN, i: Infinity }, 'non-finite numbers are null');
  same(t, { m: new Map([['a', 1]]), s: new Set([1]) }, 'class instances');
  const list = Object.assign([1, 2], { toJSON: () => 'list' });
  same(t, { list }, "a list's own toJSON");
  same(t, Object.assign(Object.create(null) as object, { a: 1 }), 'an object without a prototype is a plain object');
  let deep: unknown = { leaf: 'é' };
  for (let i = 0; i < 150; i++) deep = { [`f:${i}`]: deep };
  same(t, deep, 'nesting deeper than the walk goes');
});

test('utf8: the fast path and the native one write the same bytes and count them', (t) => {
  for (const s of ['', 'a', 'x'.repeat(48), 'x'.repeat(49), 'é', `${'a'.repeat(47)}é`, '😀', '\ud800', 'a\udc00b', 'x'.repeat(100000)]) {
    const w = new BackWriter(1);
    const n = w.utf8(s);
    const want = Buffer.from(s, 'utf8');
    t.deepEqual(w.finish(), want, JSON.stringify(s.slice(0, 60)));
    t.is(n, want.length);
  }
});
