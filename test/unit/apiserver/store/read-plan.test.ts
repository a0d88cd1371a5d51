import test from 'ava';
import { ApiError } from '../../../../apiserver/api/errors';
import { encodeContinue } from '../../../../apiserver/store/continue-token';
import { planList } from '../../../../apiserver/store/read-plan';

// Every row of the list table in spec 4.6.
const token = encodeContinue({ revision: 7, startAfter: '/core/pods/a/b' });

const rows: Array<[string, Parameters<typeof planList>[0], ReturnType<typeof planList>['mode'] | number]> = [
  ['unset, no limit, rv unset → most recent', {}, 'latest'],
  ['unset, no limit, rv=0 → any', { resourceVersion: '0' }, 'any'],
  ['unset, no limit, rv=n → not older than', { resourceVersion: '5' }, 'notOlderThan'],
  ['unset, limit, rv unset → most recent', { limit: 10 }, 'latest'],
  ['unset, limit, rv=0 → any', { limit: 10, resourceVersion: '0' }, 'any'],
  ['unset, limit, rv=n → exact', { limit: 10, resourceVersion: '5' }, 'exact'],
  ['unset, limit and continue, rv unset → exact at token', { limit: 10, continue: token }, 'continue'],
  ['unset, limit and continue, rv=0 → treated as exact at token', { limit: 10, continue: token, resourceVersion: '0' }, 'continue'],
  ['unset, limit and continue, rv=n → 400', { limit: 10, continue: token, resourceVersion: '5' }, 400],
  ['Exact, rv unset → 400', { resourceVersionMatch: 'Exact' }, 400],
  ['Exact, rv=0 → 400', { resourceVersionMatch: 'Exact', resourceVersion: '0' }, 400],
  ['Exact, rv=n → exact', { resourceVersionMatch: 'Exact', resourceVersion: '5' }, 'exact'],
  ['Exact, limit, rv=n → exact', { resourceVersionMatch: 'Exact', resourceVersion: '5', limit: 3 }, 'exact'],
  ['NotOlderThan, rv unset → 400', { resourceVersionMatch: 'NotOlderThan' }, 400],
  ['NotOlderThan, rv=0 → any', { resourceVersionMatch: 'NotOlderThan', resourceVersion: '0' }, 'any'],
  ['NotOlderThan, rv=n → not older than', { resourceVersionMatch: 'NotOlderThan', resourceVersion: '5', limit: 2 }, 'notOlderThan'],
  ['unknown match → 400', { resourceVersionMatch: 'Newest', resourceVersion: '5' }, 400],
  ['non-numeric rv → 400', { resourceVersion: 'abc' }, 400],
  ['bad continue token → 400', { continue: 'garbage' }, 400],
];

for (const [title, params, want] of rows) {
  test(title, (t) => {
    if (typeof want === 'number') {
      const err = t.throws(() => planList(params), { instanceOf: ApiError });
      t.is(err?.code, want);
    } else {
      t.is(planList(params).mode, want);
    }
  });
}

test('continue carries the token revision and position', (t) => {
  const p = planList({ continue: token });
  t.deepEqual(p, { mode: 'continue', token: { revision: 7, startAfter: '/core/pods/a/b' } });
});

test('resourceVersion: any safe integer parses; larger, negative or non-decimal values are 400 without rounding', (t) => {
  t.deepEqual(planList({ resourceVersion: '9007199254740991', resourceVersionMatch: 'Exact' }), { mode: 'exact', revision: 9007199254740991 });
  t.deepEqual(planList({ resourceVersion: '0000000000000000007', limit: 1 }), { mode: 'exact', revision: 7 });
  for (const rv of ['9007199254740993', '99999999999999999999', '-1', '+1', '1.0', '1e3', ' 1', '0x1']) {
    const err = t.throws(() => planList({ resourceVersion: rv, resourceVersionMatch: 'NotOlderThan' }), { instanceOf: ApiError });
    t.is(err?.code, 400, rv);
    t.regex(err?.message ?? '', /^invalid resource version "/, rv);
  }
});
