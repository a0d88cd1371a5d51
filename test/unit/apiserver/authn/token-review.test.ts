import test from 'ava';
import type { IncomingMessage } from 'node:http';
import { ApiError, errors } from '../../../../apiserver/api/errors';
import type { Authenticator } from '../../../../apiserver/authn/authenticator';
import { RequestAuthenticator } from '../../../../apiserver/authn/request-authenticator';
import { AudienceAgnosticToken, BearerTokenAuthenticator, TokenAuthenticatorUnion, type TokenAuthenticator } from '../../../../apiserver/authn/token-authenticator';
import { TokenDecisionCache } from '../../../../apiserver/authn/token-cache';
import { TokenFileAuthenticator } from '../../../../apiserver/authn/token-file';
import { TokenReviewer } from '../../../../apiserver/authn/token-reviewer';

const API = ['https://svc.default.svc'];
const file = new TokenFileAuthenticator([{ token: 'static-1', user: { username: 'ops', uid: '7', groups: ['admins'] } }]);

/** A token method that knows one token, refuses tokens starting with "bad", and fails on "boom". */
const scoped: TokenAuthenticator = {
  name: 'scoped',
  authenticateToken(token, audiences) {
    if (token === 'boom') return Promise.reject(new Error('store unreachable'));
    if (token.startsWith('bad')) return Promise.reject(errors.unauthorized('invalid bearer token, signature mismatch'));
    if (token !== 'scoped-1') return Promise.resolve(null);
    const auds = audiences.filter((a) => a === 'vault' || API.includes(a));
    if (auds.length === 0) return Promise.reject(errors.unauthorized('token audiences do not match the requested audiences'));
    return Promise.resolve({ user: { username: 'svc-user', groups: [] }, audiences: auds });
  },
};

const union = new TokenAuthenticatorUnion(() => [new AudienceAgnosticToken(file, API), scoped]);
const reviewer = new TokenReviewer(union, API);

test('TokenReview: accepted tokens carry the user with system:authenticated and the audiences', async (t) => {
  t.deepEqual(await reviewer.review('static-1'), { authenticated: true, user: { username: 'ops', uid: '7', groups: ['admins', 'system:authenticated'] }, audiences: API });
  t.deepEqual(await reviewer.review('scoped-1', ['vault']), { authenticated: true, user: { username: 'svc-user', groups: ['system:authenticated'] }, audiences: ['vault'] });
});

test('TokenReview: audience-less tokens are valid for the API audiences only', async (t) => {
  t.deepEqual(await reviewer.review('static-1', ['vault']), { authenticated: false });
  t.deepEqual(await reviewer.review('static-1', ['vault', ...API]), { authenticated: true, user: { username: 'ops', uid: '7', groups: ['admins', 'system:authenticated'] }, audiences: API });
});

test('TokenReview: unknown tokens are unauthenticated; method errors become status.error', async (t) => {
  t.deepEqual(await reviewer.review('who-knows'), { authenticated: false });
  t.deepEqual(await reviewer.review('bad-sig'), { authenticated: false, error: 'invalid bearer token, signature mismatch' });
  t.deepEqual(await reviewer.review('boom'), { authenticated: false, error: 'store unreachable' });
});

test('the union lets a later method accept a token an earlier one refused', async (t) => {
  const lenient: TokenAuthenticator = { name: 'lenient', authenticateToken: (tok) => Promise.resolve(tok === 'bad-but-known' ? { user: { username: 'x', groups: [] }, audiences: API } : null) };
  const u = new TokenAuthenticatorUnion(() => [scoped, lenient]);
  t.is((await u.authenticateToken('bad-but-known', API))!.user.username, 'x');
  await t.throwsAsync(u.authenticateToken('bad-other', API), { message: /signature mismatch/ });
});

function req(headers: Record<string, string>, url = '/api'): IncomingMessage {
  return { headers, url, socket: {} } as unknown as IncomingMessage;
}

test('requests: a bearer token nobody accepts is a plain 401; store failures are 401 too', async (t) => {
  const rejected: unknown[] = [];
  const bearer = new BearerTokenAuthenticator(union, API, (e) => rejected.push(e));
  const chain = new RequestAuthenticator(() => [bearer], () => ({ enabled: true }));
  t.deepEqual(await chain.authenticate(req({ authorization: 'Bearer static-1' })), { username: 'ops', uid: '7', groups: ['admins', 'system:authenticated'] });
  t.deepEqual(await chain.authenticate(req({})), { username: 'system:anonymous', groups: ['system:unauthenticated'] });
  for (const tok of ['unknown', 'bad-sig', 'boom']) {
    const e = await t.throwsAsync(chain.authenticate(req({ authorization: `Bearer ${tok}` })));
    t.is((e as ApiError).code, 401);
    t.is(e.message, 'Unauthorized');
  }
  t.is(rejected.length, 2);
});

test('requests: anonymous off means 401 without credentials; a method error does not hide a later success', async (t) => {
  const failing: Authenticator = { name: 'f', authenticate: async () => Promise.reject(errors.unauthorized('x509: certificate signed by unknown authority')) };
  const ok: Authenticator = { name: 'ok', authenticate: (r) => Promise.resolve(r.headers['x-ok'] ? { username: 'u', groups: [] } : null) };
  const chain = new RequestAuthenticator(() => [failing, ok], () => ({ enabled: false }));
  t.is((await chain.authenticate(req({ 'x-ok': '1' }))).username, 'u');
  await t.throwsAsync(chain.authenticate(req({})), { message: /unknown authority/ });
  const none = new RequestAuthenticator(() => [], () => ({ enabled: false }));
  const e = await t.throwsAsync(none.authenticate(req({})));
  t.true(e instanceof ApiError && e.code === 401);
});

test('the decision cache shares one call among concurrent callers and honours the TTL', async (t) => {
  let now = 0;
  let calls = 0;
  const c = new TokenDecisionCache<string>(() => now, 2);
  const compute = async () => {
    calls++;
    await new Promise((r) => setImmediate(r));
    return { value: `v${calls}`, ttlMs: 100 };
  };
  const all = await Promise.all([c.get('a', compute), c.get('a', compute), c.get('a', compute)]);
  t.deepEqual(all, ['v1', 'v1', 'v1']);
  t.is(calls, 1);
  now = 150;
  t.is(await c.get('a', compute), 'v2');
  await c.get('b', compute);
  await c.get('c', compute);
  t.is(c.size, 2); // bounded: the oldest went
  await t.throwsAsync(c.get('d', async () => Promise.reject(new Error('no'))));
  t.is(await c.get('d', () => Promise.resolve({ value: 'later', ttlMs: 0 })), 'later'); // errors are not cached
});
