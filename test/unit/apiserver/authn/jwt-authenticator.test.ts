import test from 'ava';
import { createHmac, generateKeyPairSync, type KeyObject } from 'node:crypto';
import pino from 'pino';
import { ApiError } from '../../../../apiserver/api/errors';
import { compileAuthenticationConfiguration, compileOidcFlags, parseAuthenticationConfiguration, type CompiledJwtAuthenticator } from '../../../../apiserver/authn/authentication-config';
import { exportJWK, SignJWT, type JWK } from '../../../../apiserver/authn/jose';
import { JwtAuthenticator, JwtAuthenticatorSet } from '../../../../apiserver/authn/jwt-authenticator';
import { OidcKeySource } from '../../../../apiserver/authn/oidc-keys';
import { FakeClock } from '../controllers/store-fixture';

const ISS = 'https://idp.example.com';
const API = ['https://svc.default.svc'];
const log = pino({ level: 'silent' });

interface Key {
  kid: string;
  alg: string;
  priv: KeyObject;
  jwk: JWK;
}
async function key(kid: string, kind: 'rsa' | 'ec' = 'rsa'): Promise<Key> {
  const { privateKey, publicKey } = kind === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const alg = kind === 'rsa' ? 'RS256' : 'ES256';
  return { kid, alg, priv: privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

/** An in-memory identity provider: discovery and JWKS documents, counting fetches, switchable off. */
class FakeProvider {
  keys: Key[] = [];
  fetches = 0;
  down = false;
  issuer = ISS;
  fetchJson(url: string): Promise<unknown> {
    this.fetches++;
    if (this.down) return Promise.reject(new Error('connect ECONNREFUSED'));
    if (url === `${ISS}/.well-known/openid-configuration`) return Promise.resolve({ issuer: this.issuer, jwks_uri: `${ISS}/keys` });
    if (url === `${ISS}/keys`) return Promise.resolve({ keys: this.keys.map((k) => k.jwk) });
    return Promise.reject(new Error(`GET ${url}: HTTP 404`));
  }
}

async function sign(k: Key, claims: Record<string, unknown>, clock: FakeClock, opts: { exp?: number; nbf?: number } = {}): Promise<string> {
  const now = Math.floor(clock.ms / 1000);
  const j = new SignJWT(claims).setProtectedHeader({ alg: k.alg, kid: k.kid }).setIssuedAt(now).setExpirationTime(opts.exp ?? now + 600);
  if (opts.nbf !== undefined) j.setNotBefore(opts.nbf);
  return j.sign(k.priv);
}

function compile(yaml: string): CompiledJwtAuthenticator {
  return compileAuthenticationConfiguration(parseAuthenticationConfiguration(yaml, 'auth.yaml'), 'auth.yaml').jwt[0];
}

function make(spec: CompiledJwtAuthenticator, p: FakeProvider, clock: FakeClock) {
  const keys = new OidcKeySource({ issuerUrl: ISS, fetchJson: (u) => p.fetchJson(u), now: () => clock.ms, log });
  return new JwtAuthenticator(spec, { keys, apiAudiences: API, now: clock.now, log });
}

async function fails(t: { true(v: boolean, m?: string): void }, p: Promise<unknown>, why: RegExp): Promise<void> {
  try {
    await p;
    t.true(false, 'expected 401');
  } catch (err) {
    t.true(err instanceof ApiError && err.code === 401, String(err));
    t.true(why.test((err as Error).message), (err as Error).message);
  }
}

const structured = `apiVersion: apiserver.config.svc.io/v1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: ${ISS}
    audiences: [svc]
  claimValidationRules:
  - claim: hd
    requiredValue: example.com
  - expression: "!has(claims.banned)"
    message: banned tokens are refused
  claimMappings:
    username:
      expression: "claims.email_verified ? claims.email : 'sub:' + claims.sub"
    groups:
      expression: "has(claims.groups) ? claims.groups.map(g, 'oidc:' + g) : []"
    uid:
      claim: sub
    extra:
    - key: example.com/tenant
      valueExpression: "has(claims.tenant) ? claims.tenant : ''"
  userValidationRules:
  - expression: "!user.username.startsWith('system:')"
    message: reserved prefix
`;

test('structured configuration: claim rules and CEL mappings shape the user', async (t) => {
  const clock = new FakeClock();
  const p = new FakeProvider();
  const k = await key('k1');
  p.keys = [k];
  const a = make(compile(structured), p, clock);
  const base = { iss: ISS, aud: 'svc', sub: '42', hd: 'example.com' };
  const r = await a.authenticateToken(await sign(k, { ...base, email: 'ann@example.com', email_verified: true, groups: ['dev', 'ops'], tenant: 't1' }, clock), API);
  t.deepEqual(r, { user: { username: 'ann@example.com', uid: '42', groups: ['oidc:dev', 'oidc:ops'], extra: { 'example.com/tenant': ['t1'] } }, audiences: API });
  const r2 = await a.authenticateToken(await sign(k, { ...base, email: 'ann@example.com', email_verified: false }, clock), API);
  t.deepEqual(r2!.user, { username: 'sub:42', uid: '42', groups: [] });
  await fails(t, a.authenticateToken(await sign(k, { ...base, hd: 'other.com' }, clock), API), /required claim hd value does not match/);
  await fails(t, a.authenticateToken(await sign(k, { iss: ISS, aud: 'svc', sub: '42' }, clock), API), /required claim hd not present/);
  await fails(t, a.authenticateToken(await sign(k, { ...base, banned: true }, clock), API), /banned tokens are refused/);
  await fails(t, a.authenticateToken(await sign(k, { ...base, email: 'system:admin', email_verified: true }, clock), API), /reserved prefix/);
  // A mapping expression that fails (no email_verified claim) fails the token.
  await fails(t, a.authenticateToken(await sign(k, { ...base }, clock), API), /email_verified/);
  // Valid for the API audiences only: a TokenReview for another audience is not accepted.
  t.is(await a.authenticateToken(await sign(k, { ...base, email_verified: false }, clock), ['vault']), null);
});

test('flags: username and groups claims with prefixes, email needs email_verified', async (t) => {
  const clock = new FakeClock();
  const p = new FakeProvider();
  const k = await key('k1');
  p.keys = [k];
  const a = make(compileOidcFlags({ issuerUrl: ISS, clientId: 'svc', groupsClaim: 'groups', groupsPrefix: 'g:' }), p, clock);
  const r = await a.authenticateToken(await sign(k, { iss: ISS, aud: ['svc', 'x'], sub: '42', groups: 'solo' }, clock), API);
  t.deepEqual(r!.user, { username: `${ISS}#42`, groups: ['g:solo'] });
  const e = make(compileOidcFlags({ issuerUrl: ISS, clientId: 'svc', usernameClaim: 'email' }), p, clock);
  t.is((await e.authenticateToken(await sign(k, { iss: ISS, aud: 'svc', email: 'a@b.c' }, clock), API))!.user.username, 'a@b.c');
  await fails(t, e.authenticateToken(await sign(k, { iss: ISS, aud: 'svc', email: 'a@b.c', email_verified: false }, clock), API), /email not verified/);
  await fails(t, e.authenticateToken(await sign(k, { iss: ISS, aud: 'svc', sub: 'x' }, clock), API), /claim not present/);
});

test('bad tokens: expired, not yet valid, wrong audience, wrong signature, disallowed algorithms', async (t) => {
  const clock = new FakeClock();
  const p = new FakeProvider();
  const rsa = await key('rsa');
  const ec = await key('ec', 'ec');
  p.keys = [rsa, ec];
  const a = make(compileOidcFlags({ issuerUrl: ISS, clientId: 'svc' }), p, clock);
  const claims = { iss: ISS, aud: 'svc', sub: '42' };
  const now = Math.floor(clock.ms / 1000);
  t.truthy(await a.authenticateToken(await sign(rsa, claims, clock), API));
  await fails(t, a.authenticateToken(await sign(rsa, claims, clock, { exp: now - 1 }), API), /exp/);
  await fails(t, a.authenticateToken(await sign(rsa, claims, clock, { nbf: now + 3600 }), API), /nbf/);
  await fails(t, a.authenticateToken(await sign(rsa, { ...claims, aud: 'other' }, clock), API), /aud/);
  await fails(t, a.authenticateToken(await sign(rsa, { iss: ISS, aud: 'svc', sub: '42' }, clock, { exp: 0 }).then((tok) => tok), API), /exp/);
  // ES256 is a valid signature but not in --oidc-signing-algs (default RS256).
  await fails(t, a.authenticateToken(await sign(ec, claims, clock), API), /alg/);
  const forger = await key('rsa');
  await fails(t, a.authenticateToken(await sign(forger, claims, clock), API), /signature/);
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const payload = b64({ ...claims, exp: now + 600 });
  await fails(t, a.authenticateToken(`${b64({ alg: 'none' })}.${payload}.`, API), /./);
  const head = b64({ alg: 'HS256', kid: 'rsa' });
  const sig = createHmac('sha256', JSON.stringify(rsa.jwk)).update(`${head}.${payload}`).digest('base64url');
  await fails(t, a.authenticateToken(`${head}.${payload}.${sig}`, API), /./);
});

test('key rotation: an unknown key id refetches the keys, at most once per interval', async (t) => {
  const clock = new FakeClock();
  const p = new FakeProvider();
  const k1 = await key('k1');
  const k2 = await key('k2');
  const k3 = await key('k3');
  p.keys = [k1];
  const a = make(compileOidcFlags({ issuerUrl: ISS, clientId: 'svc' }), p, clock);
  const claims = { iss: ISS, aud: 'svc', sub: '42' };
  t.truthy(await a.authenticateToken(await sign(k1, claims, clock), API));
  t.is(p.fetches, 2); // discovery + JWKS
  p.keys = [k1, k2];
  clock.advance(11_000);
  t.truthy(await a.authenticateToken(await sign(k2, claims, clock), API));
  t.is(p.fetches, 4);
  // Within the rate limit a further unknown key does not cause another fetch.
  p.keys = [k1, k2, k3];
  await fails(t, a.authenticateToken(await sign(k3, claims, clock), API), /./);
  t.is(p.fetches, 4);
  clock.advance(11_000);
  t.truthy(await a.authenticateToken(await sign(k3, claims, clock), API));
  t.is(p.fetches, 6);
  // Known keys never cause a fetch.
  for (let i = 0; i < 3; i++) await a.authenticateToken(await sign(k1, claims, clock), API);
  t.is(p.fetches, 6);
});

test('provider down: cached keys keep working; never fetched means 401', async (t) => {
  const clock = new FakeClock();
  const p = new FakeProvider();
  const k1 = await key('k1');
  p.keys = [k1];
  const a = make(compileOidcFlags({ issuerUrl: ISS, clientId: 'svc' }), p, clock);
  const claims = { iss: ISS, aud: 'svc', sub: '42' };
  t.truthy(await a.authenticateToken(await sign(k1, claims, clock), API));
  p.down = true;
  clock.advance(60_000);
  const k2 = await key('k2');
  await fails(t, a.authenticateToken(await sign(k2, claims, clock), API), /./); // refetch fails, unknown key
  t.truthy(await a.authenticateToken(await sign(k1, claims, clock), API));
  const fresh = make(compileOidcFlags({ issuerUrl: ISS, clientId: 'svc' }), p, clock);
  await fails(t, fresh.authenticateToken(await sign(k1, claims, clock), API), /not initialized.*ECONNREFUSED/);
  // Discovery naming another issuer is refused.
  const liar = new FakeProvider();
  liar.keys = [k1];
  liar.issuer = 'https://evil.example.com';
  await fails(t, make(compileOidcFlags({ issuerUrl: ISS, clientId: 'svc' }), liar, clock).authenticateToken(await sign(k1, claims, clock), API), /issuer did not match/);
});

test('the set routes by issuer and ignores tokens of unknown issuers', async (t) => {
  const clock = new FakeClock();
  const p = new FakeProvider();
  const k1 = await key('k1');
  p.keys = [k1];
  const set = new JwtAuthenticatorSet();
  t.is(await set.authenticateToken('a.b.c', API), null);
  set.replace([make(compileOidcFlags({ issuerUrl: ISS, clientId: 'svc' }), p, clock)]);
  t.truthy(await set.authenticateToken(await sign(k1, { iss: ISS, aud: 'svc', sub: '1' }, clock), API));
  t.is(await set.authenticateToken(await sign(k1, { iss: 'https://other', aud: 'svc', sub: '1' }, clock), API), null);
  t.is(await set.authenticateToken('opaque-token', API), null);
});
