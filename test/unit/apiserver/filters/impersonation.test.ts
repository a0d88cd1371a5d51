import test from 'ava';
import type { IncomingMessage } from 'node:http';
import { ApiError } from '../../../../apiserver/api/errors';
import type { Attributes } from '../../../../apiserver/authz/authorizer';
import { impersonate } from '../../../../apiserver/filters/impersonation';
import type { UserInfo } from '../../../../apiserver/api/user';

function req(headers: Array<[string, string]>): IncomingMessage {
  const distinct: Record<string, string[]> = {};
  const flat: Record<string, string> = {};
  for (const [k, v] of headers) {
    const n = k.toLowerCase();
    (distinct[n] ??= []).push(v);
    flat[n] = flat[n] === undefined ? v : `${flat[n]}, ${v}`;
  }
  return { headers: flat, headersDistinct: distinct, url: '/api/v1/namespaces/default/pods?limit=1' } as unknown as IncomingMessage;
}

const caller: UserInfo = { username: 'alice', groups: ['dev', 'system:authenticated'] };

/** Allows impersonate on the listed "resource[/subresource]:name" pairs (namespace-qualified for service accounts); records every check. */
function policy(allowed: string[]) {
  const seen: Attributes[] = [];
  const authorize = (a: Attributes) => {
    seen.push(a);
    const i = a.info;
    const key = `${i.apiGroup}|${i.resource}${i.subresource ? '/' + i.subresource : ''}|${i.namespace ? i.namespace + '/' : ''}${i.name}`;
    return Promise.resolve(i.verb === 'impersonate' && allowed.includes(key));
  };
  return { seen, authorize };
}

async function forbidden(t: { true(v: boolean, m?: string): void }, p: Promise<unknown>, why: RegExp): Promise<void> {
  try {
    await p;
    t.true(false, 'expected 403');
  } catch (err) {
    t.true(err instanceof ApiError && err.code === 403, String(err));
    t.true(why.test((err as Error).message), (err as Error).message);
  }
}

test('no headers: the caller is unchanged and nothing is checked', async (t) => {
  const p = policy([]);
  t.is(await impersonate(req([]), caller, p.authorize), caller);
  t.is(p.seen.length, 0);
});

test('user, groups, extra and uid each need the impersonate verb on their resource', async (t) => {
  const p = policy(['|users|bob', '|groups|admins', '|groups|system:masters', 'authentication.svc.io|userextras/scopes|view', 'authentication.svc.io|userextras/acme.io/team|core', 'authentication.svc.io|uids|1234']);
  const u = await impersonate(
    req([
      ['Impersonate-User', 'bob'],
      ['Impersonate-Group', 'admins'],
      ['Impersonate-Group', 'system:masters'],
      ['Impersonate-Extra-Scopes', 'view'],
      ['Impersonate-Extra-acme.io%2fteam', 'core'],
      ['Impersonate-Uid', '1234'],
    ]),
    caller,
    p.authorize,
  );
  t.deepEqual(u, { username: 'bob', uid: '1234', groups: ['admins', 'system:masters', 'system:authenticated'], extra: { scopes: ['view'], 'acme.io/team': ['core'] } });
  t.is(p.seen.length, 6);
  t.true(p.seen.every((a) => a.user === caller && a.info.verb === 'impersonate'));
  const extraCheck = p.seen.find((a) => a.info.resource === 'userextras')!;
  t.is(extraCheck.info.apiGroup, 'authentication.svc.io');
  t.is(extraCheck.info.subresource, 'scopes');
});

test('a refused value is a 403 naming the resource in upstream wording', async (t) => {
  const p = policy(['|users|bob']);
  await forbidden(t, impersonate(req([['Impersonate-User', 'carol']]), caller, p.authorize), /^users "carol" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope$/);
  // resourceNames: bob allowed, but not with the group.
  await forbidden(t, impersonate(req([['Impersonate-User', 'bob'], ['Impersonate-Group', 'admins']]), caller, p.authorize), /groups "admins" is forbidden/);
  await forbidden(t, impersonate(req([['Impersonate-User', 'bob'], ['Impersonate-Uid', 'x']]), caller, p.authorize), /uids "x" is forbidden.*API group "authentication.svc.io"/);
});

test('service accounts are checked in their namespace and get their groups', async (t) => {
  const p = policy(['|serviceaccounts|ns1/builder']);
  const u = await impersonate(req([['Impersonate-User', 'system:serviceaccount:ns1:builder']]), caller, p.authorize);
  t.deepEqual(u, { username: 'system:serviceaccount:ns1:builder', groups: ['system:serviceaccounts', 'system:serviceaccounts:ns1', 'system:authenticated'] });
  t.is(p.seen[0].info.namespace, 'ns1');
  await forbidden(t, impersonate(req([['Impersonate-User', 'system:serviceaccount:ns2:builder']]), caller, p.authorize), /serviceaccounts "builder" is forbidden.*namespace "ns2"/);
});

test('anonymous gets system:unauthenticated; asking for it keeps system:authenticated out', async (t) => {
  const p = policy(['|users|system:anonymous', '|users|bob', '|groups|system:unauthenticated']);
  t.deepEqual(await impersonate(req([['Impersonate-User', 'system:anonymous']]), caller, p.authorize), { username: 'system:anonymous', groups: ['system:unauthenticated'] });
  t.deepEqual(await impersonate(req([['Impersonate-User', 'bob'], ['Impersonate-Group', 'system:unauthenticated']]), caller, p.authorize), { username: 'bob', groups: ['system:unauthenticated'] });
});

test('groups, extra or uid without a user is a 400', async (t) => {
  const p = policy(['|groups|admins']);
  for (const h of [['Impersonate-Group', 'admins'], ['Impersonate-Uid', '1'], ['Impersonate-Extra-Foo', 'x']] as Array<[string, string]>) {
    const e = await t.throwsAsync(impersonate(req([h]), caller, p.authorize));
    t.is((e as ApiError).code, 400);
  }
  t.is(p.seen.length, 0);
});
