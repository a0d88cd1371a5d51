import test from 'ava';
import type { IncomingMessage } from 'node:http';
import { ApiError } from '../../../../apiserver/api/errors';
import { BootstrapTokenAuthenticator } from '../../../../apiserver/authn/bootstrap-token';
import { RequestAuthenticator } from '../../../../apiserver/authn/request-authenticator';
import { StoreObjectGetter } from '../../../../apiserver/authn/store-object-getter';
import { adminCtx, openFixture, type Fixture } from '../controllers/store-fixture';

const ID = 'abcdef';
const SECRET = '0123456789abcdef';
const TOKEN = `${ID}.${SECRET}`;

function request(token?: string): IncomingMessage {
  return { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } } as IncomingMessage;
}

async function tokenSecret(f: Fixture, data: Record<string, string>, opts: { id?: string; type?: string } = {}): Promise<void> {
  const id = opts.id ?? ID;
  const b64: Record<string, string> = {};
  for (const [k, v] of Object.entries(data)) b64[k] = Buffer.from(v).toString('base64');
  await f.store.create(
    f.type('', 'v1', 'secrets'),
    'svc-system',
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: `bootstrap-token-${id}` }, type: opts.type ?? 'bootstrap.svc.io/token', data: b64 },
    adminCtx,
  );
}

function valid(extra: Record<string, string> = {}): Record<string, string> {
  return { 'token-id': ID, 'token-secret': SECRET, 'usage-bootstrap-authentication': 'true', expiration: '2025-03-02T12:00:00Z', ...extra };
}

async function setup(t: { teardown(fn: () => Promise<void>): void }) {
  const f = await openFixture();
  t.teardown(() => f.close());
  const authn = new BootstrapTokenAuthenticator(new StoreObjectGetter(f.store, f.registry), { now: f.clock.now, log: f.log });
  return { f, authn };
}

async function rejects401(p: Promise<unknown>): Promise<boolean> {
  try {
    await p;
    return false;
  } catch (err) {
    return err instanceof ApiError && err.code === 401;
  }
}

test('a valid token authenticates as system:bootstrap:<id> in system:bootstrappers plus valid extra groups', async (t) => {
  const { f, authn } = await setup(t);
  await tokenSecret(f, valid({ 'auth-extra-groups': 'system:bootstrappers:svc:default-node-token, system:masters,system:bootstrappers:worker' }));
  const user = await authn.authenticate(request(TOKEN));
  t.deepEqual(user, {
    username: 'system:bootstrap:abcdef',
    groups: ['system:bootstrappers', 'system:bootstrappers:svc:default-node-token', 'system:bootstrappers:worker'],
  });
  // The entry outside system:bootstrappers: is dropped with a log line naming it.
  t.true(f.lines.some((l) => l.includes('system:masters') && l.includes('ignored')));
});

test('through the chain the bootstrapper also gets system:authenticated', async (t) => {
  const { f, authn } = await setup(t);
  await tokenSecret(f, valid());
  const user = await new RequestAuthenticator(() => [authn], () => ({ enabled: true })).authenticate(request(TOKEN));
  t.is(user.username, 'system:bootstrap:abcdef');
  t.deepEqual(user.groups, ['system:bootstrappers', 'system:authenticated']);
});

test('an expired token is rejected with 401, and accepted just before its expiration', async (t) => {
  const { f, authn } = await setup(t);
  await tokenSecret(f, valid({ expiration: '2025-03-01T12:00:30Z' }));
  f.clock.advance(29_000);
  t.truthy(await authn.authenticate(request(TOKEN)));
  f.clock.advance(1_000);
  t.true(await rejects401(authn.authenticate(request(TOKEN))));
});

test('an unparseable expiration counts as expired', async (t) => {
  const { f, authn } = await setup(t);
  await tokenSecret(f, valid({ expiration: 'next tuesday' }));
  t.true(await rejects401(authn.authenticate(request(TOKEN))));
});

test('a token without expiration does not expire', async (t) => {
  const { f, authn } = await setup(t);
  const data = valid();
  delete data.expiration;
  await tokenSecret(f, data);
  f.clock.advance(10 * 365 * 24 * 3600_000);
  t.truthy(await authn.authenticate(request(TOKEN)));
});

test('a forged secret part is rejected with 401 and never logged', async (t) => {
  const { f, authn } = await setup(t);
  await tokenSecret(f, valid());
  const forged = `${ID}.ffffffffffffffff`;
  t.true(await rejects401(authn.authenticate(request(forged))));
  t.true(f.lines.length > 0);
  for (const l of f.lines) {
    t.false(l.includes('ffffffffffffffff'));
    t.false(l.includes(SECRET));
  }
  t.true(f.lines.some((l) => l.includes('bootstrap-token-abcdef') && l.includes('token-secret')));
});

test('a token whose Secret is missing is rejected with 401, not passed on', async (t) => {
  const { authn } = await setup(t);
  t.true(await rejects401(authn.authenticate(request('zzzzzz.0123456789abcdef'))));
});

test('usage-bootstrap-authentication must be "true"', async (t) => {
  const { f, authn } = await setup(t);
  await tokenSecret(f, valid({ 'usage-bootstrap-authentication': 'false' }));
  t.true(await rejects401(authn.authenticate(request(TOKEN))));
  const { f: f2, authn: authn2 } = await setup(t);
  const data = valid();
  delete data['usage-bootstrap-authentication'];
  await tokenSecret(f2, data);
  t.true(await rejects401(authn2.authenticate(request(TOKEN))));
});

test('a Secret of another type, or whose token-id differs, does not authenticate', async (t) => {
  const { f, authn } = await setup(t);
  await tokenSecret(f, valid(), { type: 'Opaque' });
  t.true(await rejects401(authn.authenticate(request(TOKEN))));
  await tokenSecret(f, valid(), { id: 'rrrrrr' }); // token-id abcdef inside Secret rrrrrr
  t.true(await rejects401(authn.authenticate(request(`rrrrrr.${SECRET}`))));
});

test('bearer tokens of another form and requests without a token are not this method\'s', async (t) => {
  const { authn } = await setup(t);
  t.is(await authn.authenticate(request()), null);
  t.is(await authn.authenticate(request('some-static-token')), null);
  t.is(await authn.authenticate(request('ABCDEF.0123456789ABCDEF')), null);
  t.is(await authn.authenticate(request('abcdef.0123456789abcde')), null);
});
