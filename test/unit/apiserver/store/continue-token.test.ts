import test from 'ava';
import { ApiError } from '../../../../apiserver/api/errors';
import { decodeContinue, encodeContinue } from '../../../../apiserver/store/continue-token';

const forge = (body: unknown) => Buffer.from(JSON.stringify(body)).toString('base64url');
const V = 'meta.svc.io/v1';

test('a token decodes to what was encoded', (t) => {
  const tok = { revision: 9007199254740991, startAfter: '/core/pods/ns/a' };
  t.deepEqual(decodeContinue(encodeContinue(tok)), tok);
});

test('tokens this server cannot have issued are 400 "continue key is not valid", worded as upstream', (t) => {
  const cases: Array<[string, string, RegExp]> = [
    ['not base64 JSON', 'garbage', /^continue key is not valid: incorrect encoded start resourceVersion \(version meta\.svc\.io\/v1\)$/],
    ['JSON null', forge(null), /incorrect encoded start resourceVersion/],
    ['a JSON array', forge([1]), /server does not recognize this encoded version/],
    ['another version', forge({ v: 'meta.k8s.io/v1', rv: 5, start: '/a/b' }), /^continue key is not valid: server does not recognize this encoded version$/],
    ['revision 0', forge({ v: V, rv: 0, start: '/a/b' }), /incorrect encoded start resourceVersion/],
    ['a negative revision', forge({ v: V, rv: -3, start: '/a/b' }), /incorrect encoded start resourceVersion/],
    ['a fractional revision', forge({ v: V, rv: 2.5, start: '/a/b' }), /incorrect encoded start resourceVersion/],
    ['a revision past 2^53', forge({ v: V, rv: 2 ** 60, start: '/a/b' }), /incorrect encoded start resourceVersion/],
    ['a string revision', forge({ v: V, rv: '5', start: '/a/b' }), /incorrect encoded start resourceVersion/],
    ['an empty key', forge({ v: V, rv: 5, start: '' }), /^continue key is not valid: encoded start key empty \(version meta\.svc\.io\/v1\)$/],
    ['a key that is no string', forge({ v: V, rv: 5, start: 7 }), /encoded start key empty/],
    ['a relative key', forge({ v: V, rv: 5, start: 'a/b' }), /^continue key is not valid$/],
    ['a .. segment', forge({ v: V, rv: 5, start: '/a/../b' }), /^continue key is not valid$/],
    ['a . segment', forge({ v: V, rv: 5, start: '/a/./b' }), /^continue key is not valid$/],
    ['a doubled slash', forge({ v: V, rv: 5, start: '/a//b' }), /^continue key is not valid$/],
  ];
  for (const [what, token, want] of cases) {
    const err = t.throws(() => decodeContinue(token), { instanceOf: ApiError }, what);
    t.is(err?.code, 400, what);
    t.regex(err?.message ?? '', want, what);
  }
});
