import test from 'ava';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RELOAD_TIMESTAMP_METRIC } from '../../../apiserver/authn/authentication-config-controller';
import { call, type JsonResponse } from '../../helpers/http';
import { startHarness, type Harness } from './harness';
import { OidcProvider, providerKey, type ProviderKey } from './oidc-provider';

// The server's clock runs ahead of real time by `skew` ms so tests can pass the JWKS refetch rate limit without waiting.
let skew = 0;
const now = () => new Date(Date.now() + skew);

let idp: OidcProvider;
let k1: ProviderKey;
let k2: ProviderKey;
let ec: ProviderKey;
let h: Harness;

test.before(async () => {
  idp = new OidcProvider();
  await idp.start();
  [k1, k2, ec] = await Promise.all([providerKey('k1'), providerKey('k2'), providerKey('ec1', 'ES384')]);
  idp.keys = [k1, ec];
  h = await startHarness({
    now,
    oidc: { issuerUrl: idp.url, clientId: 'svc', usernameClaim: 'email', groupsClaim: 'groups', groupsPrefix: 'oidc:', requiredClaims: { hd: 'example.com' }, caFile: idp.caFile, signingAlgs: ['RS256'] },
  });
});
test.after.always(async () => {
  await h?.close();
  await idp?.stop();
});

const base = { aud: 'svc', sub: '42', email: 'ann@example.com', hd: 'example.com', groups: ['dev', 'ops'] };

async function whoami(harness: Harness, token: string) {
  return call(harness.anonymous, 'POST', `${harness.url}/apis/authentication.svc.io/v1/selfsubjectreviews`, { apiVersion: 'authentication.svc.io/v1', kind: 'SelfSubjectReview' }, { authorization: `Bearer ${token}` });
}

test.serial('an id_token from the provider authenticates with the configured claims and prefixes', async (t) => {
  const r = await whoami(h, await idp.token(k1, base, now().getTime()));
  t.is(r.status, 201, r.text);
  t.deepEqual(r.body.status.userInfo, { username: 'ann@example.com', groups: ['oidc:dev', 'oidc:ops', 'system:authenticated'] });
  t.true(idp.requests.includes('/.well-known/openid-configuration'));
  t.true(idp.requests.includes('/keys'));
});

test.serial('bad id_tokens are 401: expired, not yet valid, wrong audience, missing required claim, unverified email, disallowed algorithm, foreign issuer', async (t) => {
  const ms = now().getTime();
  const s = Math.floor(ms / 1000);
  const cases: Record<string, string> = {
    expired: await idp.token(k1, { ...base, exp: s - 60 }, ms),
    'not yet valid': await idp.token(k1, { ...base, nbf: s + 3600, exp: s + 7200 }, ms),
    'wrong audience': await idp.token(k1, { ...base, aud: 'other' }, ms),
    'missing hd': await idp.token(k1, { ...base, hd: undefined }, ms),
    'email not verified': await idp.token(k1, { ...base, email_verified: false }, ms),
    'ES384 not in --oidc-signing-algs': await idp.token(ec, base, ms),
    'other issuer': await idp.token(k1, { ...base, iss: 'https://127.0.0.1:1' }, ms),
  };
  for (const [what, token] of Object.entries(cases)) t.is((await whoami(h, token)).status, 401, what);
});

test.serial('key rotation: a new key id is fetched (rate-limited); a provider that is down leaves the cached keys working', async (t) => {
  idp.keys = [k1, k2];
  const fetchesBefore = idp.requests.filter((r) => r === '/keys').length;
  skew += 11_000;
  const r = await whoami(h, await idp.token(k2, base, now().getTime()));
  t.is(r.status, 201, r.text);
  t.is(idp.requests.filter((x) => x === '/keys').length, fetchesBefore + 1);
  idp.down = true;
  skew += 11_000;
  const k3 = await providerKey('k3');
  t.is((await whoami(h, await idp.token(k3, base, now().getTime()))).status, 401);
  t.is((await whoami(h, await idp.token(k1, base, now().getTime()))).status, 201);
  t.is((await whoami(h, await idp.token(k2, base, now().getTime()))).status, 201);
  t.true(h.lines.some((l) => l.includes('OIDC provider unreachable or invalid; keeping the signing keys fetched before')));
  idp.down = false;
});

test.serial('the structured configuration: CEL mappings, anonymous path conditions, reload on change with its metric', async (t) => {
  const file = join(h.dataDir, 'authn.yaml');
  const config = (prefix: string) => `apiVersion: apiserver.config.svc.io/v1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: ${idp.url}
    audiences: [svc, kubectl]
    audienceMatchPolicy: MatchAny
    certificateAuthority: |
${readFileSync(idp.caFile, 'utf8').trim().split('\n').map((l) => '      ' + l).join('\n')}
  claimValidationRules:
  - expression: "claims.hd == 'example.com'"
    message: wrong domain
  claimMappings:
    username:
      expression: "'${prefix}' + claims.sub"
    groups:
      expression: "claims.groups.filter(g, g != 'ops')"
    extra:
    - key: example.com/email
      valueExpression: claims.email
  userValidationRules:
  - expression: "!user.username.startsWith('system:')"
    message: reserved
anonymous:
  enabled: true
  conditions:
  - path: /livez
`;
  writeFileSync(file, config('idp:'));
  idp.keys = [k1];
  const s = await startHarness({ authenticationConfigFile: file, now });
  t.teardown(() => s.close());
  const r = await whoami(s, await idp.token(k1, base, now().getTime()));
  t.is(r.status, 201, r.text);
  t.deepEqual(r.body.status.userInfo, { username: 'idp:42', groups: ['dev', 'system:authenticated'], extra: { 'example.com/email': ['ann@example.com'] } });
  t.is((await whoami(s, await idp.token(k1, { ...base, hd: 'evil.com' }, now().getTime()))).status, 401);
  t.is((await whoami(s, await idp.token(k1, { ...base, sub: undefined }, now().getTime()))).status, 401);
  t.is((await call(s.anonymous, 'GET', `${s.url}/livez`)).status, 200);
  t.is((await call(s.anonymous, 'GET', `${s.url}/readyz`)).status, 401);
  // Change the file: the new mapping takes over without a restart, and the metric records it.
  writeFileSync(file, config('sso:'));
  let who: JsonResponse | undefined;
  for (let i = 0; i < 100; i++) {
    who = await whoami(s, await idp.token(k1, base, now().getTime()));
    if (who.body?.status?.userInfo?.username === 'sso:42') break;
    await new Promise((res) => setTimeout(res, 50));
  }
  t.is(who!.body.status.userInfo.username, 'sso:42');
  t.true(s.metrics.gauge(RELOAD_TIMESTAMP_METRIC, '').value({ status: 'success' }) > 0);
  t.regex(s.metrics.render(), /apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds\{status="success"\}/);
  // A broken edit is ignored; the running configuration stays.
  writeFileSync(file, config('x:').replace('audiences: [svc, kubectl]', 'audiences: []'));
  for (let i = 0; i < 100 && s.metrics.gauge(RELOAD_TIMESTAMP_METRIC, '').value({ status: 'failure' }) === 0; i++) await new Promise((res) => setTimeout(res, 50));
  t.true(s.metrics.gauge(RELOAD_TIMESTAMP_METRIC, '').value({ status: 'failure' }) > 0);
  t.is((await whoami(s, await idp.token(k1, base, now().getTime()))).body.status.userInfo.username, 'sso:42');
});

test.serial('a configuration file and --oidc-* flags together refuse to start; a bad file names the field', async (t) => {
  const file = join(h.dataDir, 'bad.yaml');
  writeFileSync(file, 'apiVersion: apiserver.config.svc.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: "http://x", audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ""}}\n');
  await t.throwsAsync(startHarness({ authenticationConfigFile: file, oidc: { issuerUrl: idp.url, clientId: 'svc' } }), { message: /mutually exclusive/ });
  await t.throwsAsync(startHarness({ authenticationConfigFile: file }), { message: /jwt\[0\]\.issuer\.url: .*https/ });
  writeFileSync(file, 'apiVersion: apiserver.config.svc.io/v1\nkind: AuthenticationConfiguration\nanonymous: {enabled: true}\n');
  await t.throwsAsync(startHarness({ authenticationConfigFile: file, anonymousAuth: false }), { message: /--anonymous-auth flag cannot be set/ });
});
