import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import type { ResourceRef } from '../../../../agent/client/resources';
import { alwaysAllow, CachedAuthorizer, MastersBypass, SubjectAccessReviewAuthorizer, type Authorizer } from '../../../../agent/server/authorizer';
import { requestAttributes } from '../../../../agent/server/request-attributes';
import type { UserInfo } from '../../../../agent/server/user-info';

const bob: UserInfo = { username: 'bob', uid: 'b1', groups: ['devs', 'system:authenticated'] };
const attrs = requestAttributes('POST', '/checkpoint/default/web/c', 'node-1');

test('the SubjectAccessReview asks for nodes/<subresource> of the node with the caller as subject', async (t) => {
  const sent: { r: ResourceRef; obj: KObject }[] = [];
  let allowed = true;
  const client = {
    create<T extends KObject>(r: ResourceRef, obj: T): Promise<T> {
      sent.push({ r, obj });
      return Promise.resolve({ ...obj, status: { allowed, reason: allowed ? 'rbac' : 'no' } });
    },
  };
  const a = new SubjectAccessReviewAuthorizer(client);
  t.deepEqual(await a.authorize(bob, attrs), { allowed: true, reason: 'rbac' });
  t.is(sent[0].r.group, 'authorization.svc.io');
  t.is(sent[0].r.resource, 'subjectaccessreviews');
  t.deepEqual((sent[0].obj as unknown as { spec: unknown }).spec, {
    user: 'bob',
    uid: 'b1',
    groups: ['devs', 'system:authenticated'],
    resourceAttributes: { verb: 'create', group: '', version: 'v1', resource: 'nodes', subresource: 'checkpoint', name: 'node-1' },
  });
  allowed = false;
  t.false((await a.authorize(bob, attrs)).allowed);
});

test('CachedAuthorizer keeps allowed for the authorized TTL and denied for the unauthorized TTL, per user and attributes', async (t) => {
  let now = 0;
  const calls: string[] = [];
  const answers = new Map<string, boolean>([['bob', true], ['eve', false]]);
  const inner: Authorizer = {
    authorize(u, a) {
      calls.push(`${u.username}:${a.verb}:${a.subresource}`);
      return Promise.resolve({ allowed: answers.get(u.username) ?? false, reason: '' });
    },
  };
  const c = new CachedAuthorizer(inner, { authorizedTtlMs: 300_000, unauthorizedTtlMs: 30_000, now: () => now });
  const eve: UserInfo = { username: 'eve', groups: [] };
  t.true((await c.authorize(bob, attrs)).allowed);
  t.false((await c.authorize(eve, attrs)).allowed);
  await c.authorize(bob, attrs);
  await c.authorize(eve, attrs);
  t.is(calls.length, 2);
  await c.authorize(bob, requestAttributes('GET', '/containerLogs/a/b/c', 'node-1'));
  t.is(calls.length, 3, 'different attributes are a different entry');
  now = 30_000;
  answers.set('eve', true);
  t.true((await c.authorize(eve, attrs)).allowed, 'denial expired after 30 s');
  await c.authorize(bob, attrs);
  t.is(calls.filter((x) => x.startsWith('bob:create')).length, 1, 'allowed still cached');
  now = 300_000;
  await c.authorize(bob, attrs);
  t.is(calls.filter((x) => x.startsWith('bob:create')).length, 2);
});

test('system:masters is allowed without consulting the reviewer; others are deferred', async (t) => {
  let asked = 0;
  const inner: Authorizer = {
    authorize() {
      asked++;
      return Promise.resolve({ allowed: false, reason: 'no' });
    },
  };
  const m = new MastersBypass(inner);
  t.true((await m.authorize({ username: 'svc-apiserver-kubelet-client', groups: ['system:masters'] }, attrs)).allowed);
  t.is(asked, 0);
  t.false((await m.authorize(bob, attrs)).allowed);
  t.is(asked, 1);
  t.true((await alwaysAllow.authorize(bob, attrs)).allowed);
});
