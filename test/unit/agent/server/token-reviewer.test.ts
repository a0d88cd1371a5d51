import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import type { ResourceRef } from '../../../../agent/client/resources';
import { ApiTokenReviewer, CachedTokenReviewer, userFromTokenReview, type TokenReviewer } from '../../../../agent/server/token-reviewer';

test('ApiTokenReviewer creates an authentication.svc.io/v1 TokenReview and reads status.user', async (t) => {
  const sent: { r: ResourceRef; obj: KObject }[] = [];
  const client = {
    create<T extends KObject>(r: ResourceRef, obj: T): Promise<T> {
      sent.push({ r, obj });
      return Promise.resolve({ ...obj, status: { authenticated: true, user: { username: 'system:serviceaccount:default:sa', uid: 'u1', groups: ['system:serviceaccounts'], extra: { k: ['v'] } } } });
    },
  };
  const user = await new ApiTokenReviewer(client).review('tok');
  t.deepEqual(user, { username: 'system:serviceaccount:default:sa', uid: 'u1', groups: ['system:serviceaccounts'], extra: { k: ['v'] } });
  t.is(sent[0].r.group, 'authentication.svc.io');
  t.is(sent[0].r.resource, 'tokenreviews');
  t.deepEqual((sent[0].obj as unknown as { spec: unknown }).spec, { token: 'tok' });
});

test('userFromTokenReview: not authenticated or no username is undefined', (t) => {
  t.is(userFromTokenReview({ status: { authenticated: false } } as unknown as KObject), undefined);
  t.is(userFromTokenReview({ status: { authenticated: true, user: {} } } as unknown as KObject), undefined);
  t.is(userFromTokenReview({} as KObject), undefined);
});

test('CachedTokenReviewer keeps positive and negative answers for the TTL and not after; errors are not cached', async (t) => {
  let now = 1000;
  const calls: string[] = [];
  let fail = false;
  const inner: TokenReviewer = {
    review(token) {
      calls.push(token);
      if (fail) return Promise.reject(new Error('down'));
      return Promise.resolve(token === 'good' ? { username: 'u', groups: [] } : undefined);
    },
  };
  const c = new CachedTokenReviewer(inner, 120_000, () => now);
  t.is((await c.review('good'))?.username, 'u');
  t.is((await c.review('good'))?.username, 'u');
  t.is(await c.review('bad'), undefined);
  t.is(await c.review('bad'), undefined);
  t.deepEqual(calls, ['good', 'bad']);
  now += 120_000;
  await c.review('good');
  t.deepEqual(calls, ['good', 'bad', 'good']);
  fail = true;
  await t.throwsAsync(c.review('other'), { message: 'down' });
  await t.throwsAsync(c.review('other'), { message: 'down' });
  t.is(calls.filter((x) => x === 'other').length, 2);
});
