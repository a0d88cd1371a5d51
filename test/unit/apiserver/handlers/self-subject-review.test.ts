import test from 'ava';
import { handleSelfSubjectReview } from '../../../../apiserver/handlers/self-subject-review';
import { selfSubjectReviewTypes } from '../../../../apiserver/registry/types/authentication-selfsubjectreviews';
import { openStore } from '../store/fixture';
import { call } from './fake-http';

const PATH = '/apis/authentication.svc.io/v1/selfsubjectreviews';

test('POST answers 201 with the caller’s own identity and stores nothing; other verbs are 405', async (t) => {
  const f = await openStore();
  // A virtual type: registered beside the built-ins, as main does.
  for (const type of selfSubjectReviewTypes) f.registry.register(type);
  try {
    const before = await f.storage.currentRevision();
    const user = { username: 'alice', uid: 'u-1', groups: ['dev', 'system:authenticated'], extra: { scopes: ['a'] } };
    const res = await call(f, handleSelfSubjectReview, 'POST', PATH, { body: { apiVersion: 'authentication.svc.io/v1', kind: 'SelfSubjectReview' }, user });
    t.is(res.statusCode, 201);
    t.like(res.body, { apiVersion: 'authentication.svc.io/v1', kind: 'SelfSubjectReview' });
    t.deepEqual(res.body.status.userInfo, user);
    const empty = await call(f, handleSelfSubjectReview, 'POST', PATH, { raw: '', user: { username: 'bob', groups: [] } });
    t.is(empty.statusCode, 201);
    t.deepEqual(empty.body.status.userInfo, { username: 'bob', groups: [] });
    t.is(await f.storage.currentRevision(), before);
    const get = await call(f, handleSelfSubjectReview, 'GET', `${PATH}/x`);
    t.is(get.statusCode, 405);
  } finally {
    await f.close();
  }
});
