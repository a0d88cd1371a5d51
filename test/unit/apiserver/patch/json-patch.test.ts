import test, { type ExecutionContext } from 'ava';
import { ApiError } from '../../../../apiserver/api/errors';
import { applyJsonPatch, maxJsonPatchOperations, parsePointer } from '../../../../apiserver/patch/json-patch';

function apiError(t: ExecutionContext, fn: () => unknown): ApiError {
  const e = t.throws(fn, { instanceOf: ApiError });
  if (!e) throw new Error('expected an ApiError');
  return e;
}

// Vectors written from the descriptions of RFC 6902 appendix A.

test('A.1 add an object member', (t) => {
  t.deepEqual(applyJsonPatch({ foo: 'bar' }, [{ op: 'add', path: '/baz', value: 'qux' }]), { foo: 'bar', baz: 'qux' });
});

test('A.2 add an array element inserts before the index', (t) => {
  t.deepEqual(applyJsonPatch({ foo: ['bar', 'baz'] }, [{ op: 'add', path: '/foo/1', value: 'qux' }]), { foo: ['bar', 'qux', 'baz'] });
});

test('A.3 remove an object member', (t) => {
  t.deepEqual(applyJsonPatch({ baz: 'qux', foo: 'bar' }, [{ op: 'remove', path: '/baz' }]), { foo: 'bar' });
});

test('A.4 remove an array element shifts the rest', (t) => {
  t.deepEqual(applyJsonPatch({ foo: ['bar', 'qux', 'baz'] }, [{ op: 'remove', path: '/foo/1' }]), { foo: ['bar', 'baz'] });
});

test('A.5 replace a value', (t) => {
  t.deepEqual(applyJsonPatch({ baz: 'qux', foo: 'bar' }, [{ op: 'replace', path: '/baz', value: 'boo' }]), { baz: 'boo', foo: 'bar' });
});

test('A.6 move a value between objects', (t) => {
  const doc = { foo: { bar: 'baz', waldo: 'fred' }, qux: { corge: 'grault' } };
  t.deepEqual(applyJsonPatch(doc, [{ op: 'move', from: '/foo/waldo', path: '/qux/thud' }]), {
    foo: { bar: 'baz' },
    qux: { corge: 'grault', thud: 'fred' },
  });
});

test('A.7 move an array element', (t) => {
  const doc = { foo: ['all', 'grass', 'cows', 'eat'] };
  t.deepEqual(applyJsonPatch(doc, [{ op: 'move', from: '/foo/1', path: '/foo/3' }]), { foo: ['all', 'cows', 'eat', 'grass'] });
});

test('A.8 test succeeds on equal values', (t) => {
  const doc = { baz: 'qux', foo: ['a', 2, 'c'] };
  const patch = [
    { op: 'test', path: '/baz', value: 'qux' },
    { op: 'test', path: '/foo/1', value: 2 },
  ];
  t.deepEqual(applyJsonPatch(doc, patch), doc);
});

test('A.9 a failed test is 422 Invalid naming the path', (t) => {
  const e = apiError(t, () => applyJsonPatch({ baz: 'qux' }, [{ op: 'test', path: '/baz', value: 'bar' }]));
  t.is(e.code, 422);
  t.is(e.reason, 'Invalid');
  t.is(e.message, 'testing value /baz failed: test failed');
  t.is(e.details?.causes?.[0]?.field, '/baz');
});

test('A.10 add a nested member object', (t) => {
  t.deepEqual(applyJsonPatch({ foo: 'bar' }, [{ op: 'add', path: '/child', value: { grandchild: {} } }]), {
    foo: 'bar',
    child: { grandchild: {} },
  });
});

test('A.11 unrecognized members of an operation are ignored', (t) => {
  t.deepEqual(applyJsonPatch({ foo: 'bar' }, [{ op: 'add', path: '/baz', value: 'qux', xyz: 123 }]), { foo: 'bar', baz: 'qux' });
});

test('A.12 add to a nonexistent parent is 422', (t) => {
  const e = apiError(t, () => applyJsonPatch({ foo: 'bar' }, [{ op: 'add', path: '/baz/bat', value: 'qux' }]));
  t.is(e.code, 422);
  t.regex(e.message, /add operation does not apply: doc is missing path: "\/baz\/bat"/);
});

test('A.14 ~01 unescapes to ~1, not /', (t) => {
  const doc = { '/': 9, '~1': 10 };
  t.deepEqual(applyJsonPatch(doc, [{ op: 'test', path: '/~01', value: 10 }]), doc);
  t.deepEqual(applyJsonPatch(doc, [{ op: 'replace', path: '/~1', value: 1 }]), { '/': 1, '~1': 10 });
});

test('A.15 a string never equals a number', (t) => {
  const e = apiError(t, () => applyJsonPatch({ '/': 9, '~1': 10 }, [{ op: 'test', path: '/~01', value: '10' }]));
  t.is(e.code, 422);
});

test('A.16 add an array value appends it as one element with -', (t) => {
  t.deepEqual(applyJsonPatch({ foo: ['bar'] }, [{ op: 'add', path: '/foo/-', value: ['abc', 'def'] }]), {
    foo: ['bar', ['abc', 'def']],
  });
});

test('add replaces an existing member and may append at index == length', (t) => {
  t.deepEqual(applyJsonPatch({ a: 1 }, [{ op: 'add', path: '/a', value: 2 }]), { a: 2 });
  t.deepEqual(applyJsonPatch({ a: [1] }, [{ op: 'add', path: '/a/1', value: 2 }]), { a: [1, 2] });
  t.deepEqual(applyJsonPatch({ a: 1 }, [{ op: 'add', path: '/b', value: null }]), { a: 1, b: null });
});

test('whole-document operations use the empty pointer', (t) => {
  t.deepEqual(applyJsonPatch({ a: 1 }, [{ op: 'replace', path: '', value: { b: 2 } }]), { b: 2 });
  t.deepEqual(applyJsonPatch({ a: 1 }, [{ op: 'add', path: '', value: [1] }]), [1]);
  t.deepEqual(applyJsonPatch({ a: 1 }, [{ op: 'test', path: '', value: { a: 1 } }]), { a: 1 });
  t.is(apiError(t, () => applyJsonPatch({ a: 1 }, [{ op: 'remove', path: '' }])).code, 422);
});

test('copy deep-copies: later changes to the copy do not touch the source', (t) => {
  const out = applyJsonPatch({ a: { x: [1] } }, [
    { op: 'copy', from: '/a', path: '/b' },
    { op: 'add', path: '/b/x/-', value: 2 },
  ]);
  t.deepEqual(out, { a: { x: [1] }, b: { x: [1, 2] } });
});

test('test compares objects regardless of key order and arrays by order', (t) => {
  const doc = { o: { a: 1, b: [1, { c: true }] } };
  t.notThrows(() => applyJsonPatch(doc, [{ op: 'test', path: '/o', value: { b: [1, { c: true }], a: 1 } }]));
  t.throws(() => applyJsonPatch(doc, [{ op: 'test', path: '/o/b', value: [{ c: true }, 1] }]), { instanceOf: ApiError });
  t.throws(() => applyJsonPatch(doc, [{ op: 'test', path: '/o', value: { a: 1 } }]), { instanceOf: ApiError });
  t.notThrows(() => applyJsonPatch({ n: 1 }, [{ op: 'test', path: '/n', value: 1.0 }]));
});

test('test on a missing path fails with 422', (t) => {
  t.is(apiError(t, () => applyJsonPatch({}, [{ op: 'test', path: '/a', value: null }])).code, 422);
});

test('application errors are 422: missing members, bad indices', (t) => {
  const cases: unknown[][] = [
    [{ op: 'remove', path: '/missing' }],
    [{ op: 'replace', path: '/missing', value: 1 }],
    [{ op: 'move', from: '/missing', path: '/b' }],
    [{ op: 'copy', from: '/missing', path: '/b' }],
    [{ op: 'add', path: '/arr/5', value: 1 }],
    [{ op: 'remove', path: '/arr/2' }],
    [{ op: 'remove', path: '/arr/-' }],
    [{ op: 'replace', path: '/arr/01', value: 1 }],
    [{ op: 'add', path: '/arr/x', value: 1 }],
    [{ op: 'add', path: '/s/x', value: 1 }],
    [{ op: 'move', from: '/o', path: '/o/child' }],
  ];
  for (const patch of cases) {
    const e = apiError(t, () => applyJsonPatch({ arr: [1, 2], s: 'str', o: {} }, patch));
    t.is(e.code, 422, JSON.stringify(patch));
    t.is(e.reason, 'Invalid');
  }
});

test('malformed patch documents are 400 BadRequest', (t) => {
  const cases: unknown[] = [
    { op: 'add', path: '/a', value: 1 },
    'nope',
    null,
    [1],
    [{ path: '/a' }],
    [{ op: 'frobnicate', path: '/a' }],
    [{ op: 'add', value: 1 }],
    [{ op: 'add', path: 'a', value: 1 }],
    [{ op: 'add', path: '/a~2', value: 1 }],
    [{ op: 'add', path: '/a' }],
    [{ op: 'replace', path: '/a' }],
    [{ op: 'test', path: '/a' }],
    [{ op: 'move', path: '/a' }],
    [{ op: 'copy', path: '/a', from: 3 }],
  ];
  for (const patch of cases) {
    const e = apiError(t, () => applyJsonPatch({ a: 1 }, patch));
    t.is(e.code, 400, JSON.stringify(patch));
    t.is(e.reason, 'BadRequest');
  }
  t.is(apiError(t, () => applyJsonPatch({}, {})).message, 'json: cannot unmarshal object into Go value of type jsonpatch.Patch');
});

test('a malformed later operation rejects the patch before anything is applied', (t) => {
  const e = apiError(t, () =>
    applyJsonPatch({ a: 1 }, [
      { op: 'remove', path: '/missing' },
      { op: 'bogus', path: '/a' },
    ]),
  );
  t.is(e.code, 400);
});

test('more than the maximum number of operations is 413', (t) => {
  const patch = Array.from({ length: maxJsonPatchOperations + 1 }, () => ({ op: 'test', path: '', value: {} }));
  const e = apiError(t, () => applyJsonPatch({}, patch));
  t.is(e.code, 413);
  t.is(e.reason, 'RequestEntityTooLarge');
});

test('inputs are never mutated, even when a later operation fails', (t) => {
  const doc = { a: { b: [1, 2] }, c: 'x' };
  const patch = [
    { op: 'add', path: '/a/b/0', value: { z: 1 } },
    { op: 'remove', path: '/c' },
    { op: 'move', from: '/a/b/1', path: '/m' },
  ];
  const docCopy = structuredClone(doc);
  const patchCopy = structuredClone(patch);
  const out = applyJsonPatch(doc, patch) as Record<string, unknown>;
  t.deepEqual(out, { a: { b: [{ z: 1 }, 2] }, m: 1 });
  t.deepEqual(doc, docCopy);
  t.deepEqual(patch, patchCopy);
  // The result does not alias the patch's values.
  ((out.a as { b: Array<{ z: number }> }).b[0]).z = 99;
  t.deepEqual(patch, patchCopy);

  t.throws(() => applyJsonPatch(doc, [{ op: 'remove', path: '/c' }, { op: 'test', path: '/a', value: 0 }]));
  t.deepEqual(doc, docCopy);
});

test('keys such as __proto__ and constructor are plain data', (t) => {
  const out = applyJsonPatch({}, [
    { op: 'add', path: '/__proto__', value: { polluted: true } },
    { op: 'add', path: '/constructor', value: 1 },
  ]) as Record<string, unknown>;
  t.deepEqual(Object.keys(out), ['__proto__', 'constructor']);
  t.is(Object.getPrototypeOf(out), Object.prototype);
  t.is(({} as Record<string, unknown>).polluted, undefined);
  t.is(apiError(t, () => applyJsonPatch({}, [{ op: 'remove', path: '/toString' }])).code, 422);
});

test('parsePointer follows RFC 6901', (t) => {
  t.deepEqual(parsePointer(''), []);
  t.deepEqual(parsePointer('/'), ['']);
  t.deepEqual(parsePointer('/a~1b/m~0n/~01'), ['a/b', 'm~n', '~1']);
  t.is(parsePointer('a'), undefined);
  t.is(parsePointer('/a~'), undefined);
});
