import test from 'ava';
import { createHmac, createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { ensureClusterInfo, verifyDetachedSignature } from '../../../apiserver/authn/cluster-info';
import { BootstrapSigner } from '../../../apiserver/controllers/bootstrap-signer';
import { SignJWT } from '../../../apiserver/authn/jose';
import { parseSigningKey } from '../../../apiserver/authn/service-account-keys';
import { call, type JsonResponse } from '../../helpers/http';
import { startHarness, type Harness } from './harness';

let h: Harness;
const ISS = 'https://svc.default.svc';

test.before(async () => {
  h = await startHarness({ enableBootstrapTokenAuth: true });
});
test.after.always(async () => {
  await h?.close();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const withToken = (token: string) => ({ dispatcher: h.anonymous, headers: bearer(token) });

async function as(token: string, method: 'GET' | 'POST', path: string, body?: unknown) {
  const o = withToken(token);
  return call(o.dispatcher, method, h.url + path, body, o.headers);
}

async function requestToken(ns: string, sa: string, spec: Record<string, unknown> = {}, apiVersion = 'authentication.svc.io/v1') {
  return call(h.admin, 'POST', `${h.url}/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`, { apiVersion, kind: 'TokenRequest', spec });
}

async function whoami(token: string) {
  const r = await as(token, 'POST', '/apis/authentication.svc.io/v1/selfsubjectreviews', { apiVersion: 'authentication.svc.io/v1', kind: 'SelfSubjectReview' });
  return r;
}

async function review(token: string, audiences?: string[], version = 'v1') {
  return call(h.admin, 'POST', `${h.url}/apis/authentication.svc.io/${version}/tokenreviews`, { apiVersion: `authentication.svc.io/${version}`, kind: 'TokenReview', spec: { token, ...(audiences ? { audiences } : {}) } });
}

test.serial('the token sub-resource issues bound tokens that authenticate as the service account', async (t) => {
  t.is((await call(h.admin, 'POST', `${h.url}/api/v1/namespaces/team/serviceaccounts`, { metadata: { name: 'builder' } })).status, 201);
  const r = await requestToken('team', 'builder');
  t.is(r.status, 201, r.text);
  t.is(r.body.kind, 'TokenRequest');
  t.deepEqual(r.body.spec.audiences, [ISS]);
  t.is(r.body.spec.expirationSeconds, 3600);
  const exp = Date.parse(r.body.status.expirationTimestamp);
  t.true(Math.abs(exp - (Date.now() + 3600_000)) < 60_000);
  const token: string = r.body.status.token;
  const who = await whoami(token);
  t.is(who.status, 201, who.text);
  t.is(who.body.status.userInfo.username, 'system:serviceaccount:team:builder');
  t.deepEqual(who.body.status.userInfo.groups, ['system:serviceaccounts', 'system:serviceaccounts:team', 'system:authenticated']);
  t.is((await as(token, 'GET', '/api/v1/namespaces/team/serviceaccounts')).status, 200);
  // TokenReview of the same token, v1 and v1beta1.
  for (const v of ['v1', 'v1beta1']) {
    const rv = await review(token, undefined, v);
    t.is(rv.status, 201, rv.text);
    t.is(rv.body.apiVersion, `authentication.svc.io/${v}`);
    t.true(rv.body.status.authenticated);
    t.is(rv.body.status.user.username, 'system:serviceaccount:team:builder');
    t.deepEqual(rv.body.status.audiences, [ISS]);
  }
  // Other verbs on the virtual resources are not allowed.
  t.is((await call(h.admin, 'GET', `${h.url}/apis/authentication.svc.io/v1/tokenreviews`)).status, 405);
});

test.serial('audiences, expiry bounds and missing accounts', async (t) => {
  const r = await requestToken('team', 'builder', { audiences: ['vault'], expirationSeconds: 600 });
  t.is(r.status, 201, r.text);
  const token: string = r.body.status.token;
  // Not valid for the API server: a request with it is 401; a TokenReview for vault accepts it.
  t.is((await as(token, 'GET', '/api/v1/namespaces')).status, 401);
  const rv = await review(token, ['vault']);
  t.true(rv.body.status.authenticated);
  t.deepEqual(rv.body.status.audiences, ['vault']);
  const wrong = await review(token, ['elsewhere']);
  t.false(wrong.body.status.authenticated);
  t.regex(wrong.body.status.error, /audiences/);
  const short = await requestToken('team', 'builder', { expirationSeconds: 100 });
  t.is(short.status, 422);
  t.regex(short.body.message, /spec\.expirationSeconds.*less than 10 minutes/);
  t.is((await requestToken('team', 'nobody')).status, 404);
  // The body may name the group as upstream clients do (kubectl create token); the answer follows.
  const upstream = await requestToken('team', 'builder', {}, 'authentication.k8s.io/v1');
  t.is(upstream.status, 201, upstream.text);
  t.is(upstream.body.apiVersion, 'authentication.k8s.io/v1');
  t.is(upstream.body.kind, 'TokenRequest');
});

test.serial('lookup revokes tokens of deleted pods and accounts', async (t) => {
  const pod = await call(h.admin, 'POST', `${h.url}/api/v1/namespaces/team/pods`, {
    metadata: { name: 'web' },
    spec: { serviceAccountName: 'builder', nodeName: 'node-1', containers: [{ name: 'c', image: 'nginx' }] },
  });
  t.is(pod.status, 201, pod.text);
  const bound = await requestToken('team', 'builder', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web', uid: pod.body.metadata.uid } });
  t.is(bound.status, 201, bound.text);
  const podToken: string = bound.body.status.token;
  const who = await whoami(podToken);
  t.deepEqual(who.body.status.userInfo.extra['authentication.svc.io/pod-name'], ['web']);
  t.deepEqual(who.body.status.userInfo.extra['authentication.svc.io/node-name'], ['node-1']);
  // A pod running as another account cannot get a token bound to it for this one.
  const mismatch = await requestToken('team', 'builder', { boundObjectRef: { kind: 'Pod', name: 'web', uid: 'not-the-uid' } });
  t.is(mismatch.status, 409);
  const plain = (await requestToken('team', 'builder')).body.status.token as string;
  t.is((await call(h.admin, 'DELETE', `${h.url}/api/v1/namespaces/team/pods/web?gracePeriodSeconds=0`)).status, 200);
  await waitGone(`/api/v1/namespaces/team/pods/web`);
  // Lookups read a watch-fed cache: revocation takes effect once the watch delivers the deletion.
  t.is(await eventuallyStatus(podToken, 401), 401);
  t.is((await whoami(plain)).status, 201);
  t.is((await call(h.admin, 'DELETE', `${h.url}/api/v1/namespaces/team/serviceaccounts/builder`)).status, 200);
  t.is(await eventuallyStatus(plain, 401), 401);
  const rv = await review(plain);
  t.false(rv.body.status.authenticated);
  t.regex(rv.body.status.error, /deleted/);
});

/** whoami's status once it is the wanted one, or the last status seen after about 5 s. */
async function eventuallyStatus(token: string, want: number): Promise<number> {
  let status = 0;
  for (let i = 0; i < 100; i++) {
    status = (await whoami(token)).status;
    if (status === want) return status;
    await new Promise((r) => setTimeout(r, 50));
  }
  return status;
}

async function waitGone(path: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if ((await call(h.admin, 'GET', h.url + path)).status === 404) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${path} still exists`);
}

test.serial('bad tokens: expired, not yet valid, foreign key, wrong issuer, alg none, HS256 with the public key', async (t) => {
  t.is((await call(h.admin, 'POST', `${h.url}/api/v1/namespaces/team/serviceaccounts`, { metadata: { name: 'probe' } })).status, 201);
  const sa = (await call(h.admin, 'GET', `${h.url}/api/v1/namespaces/team/serviceaccounts/probe`)).body;
  const key = parseSigningKey(readFileSync(join(h.dataDir, 'pki', 'sa.key'), 'utf8'), 'sa.key');
  const now = Math.floor(Date.now() / 1000);
  const claim = { 'svc.io': { namespace: 'team', serviceaccount: { name: 'probe', uid: sa.metadata.uid } } };
  const mint = (o: { iss?: string; nbf?: number; exp?: number; aud?: string } = {}) =>
    new SignJWT(claim)
      .setProtectedHeader({ alg: key.alg, kid: key.kid })
      .setIssuer(o.iss ?? ISS)
      .setSubject('system:serviceaccount:team:probe')
      .setAudience(o.aud ?? ISS)
      .setIssuedAt(now - 10)
      .setNotBefore(o.nbf ?? now - 10)
      .setExpirationTime(o.exp ?? now + 600)
      .sign(key.privateKey);
  t.is((await whoami(await mint())).status, 201); // the control: a well-formed token works
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const payload = b64({ ...claim, iss: ISS, sub: 'system:serviceaccount:team:probe', aud: [ISS], iat: now, nbf: now, exp: now + 600 });
  const pubPem = createPublicKey(key.privateKey).export({ format: 'pem', type: 'spki' }).toString();
  const hsHead = b64({ alg: 'HS256', kid: key.kid });
  const bad: Record<string, string> = {
    expired: await mint({ exp: now - 3600 }),
    'not yet valid': await mint({ nbf: now + 3600 }),
    'wrong audience': await mint({ aud: 'someone-else' }),
    'alg none': `${b64({ alg: 'none', kid: key.kid })}.${payload}.`,
    'HS256 with public key': `${hsHead}.${payload}.${createHmac('sha256', pubPem).update(`${hsHead}.${payload}`).digest('base64url')}`,
    'foreign signature': `${(await mint()).split('.').slice(0, 2).join('.')}.${Buffer.alloc(256, 1).toString('base64url')}`,
    'wrong issuer': await mint({ iss: 'https://elsewhere.example' }),
    garbage: 'x'.repeat(40),
  };
  for (const [what, token] of Object.entries(bad)) {
    const r = await whoami(token);
    t.is(r.status, 401, what);
    t.is(r.body.reason, 'Unauthorized', what);
    t.is(r.headers['www-authenticate'], 'Bearer realm="svc"', what);
    const rv = await review(token);
    t.false(rv.body.status.authenticated, what);
  }
  // An empty token in a TokenReview is a 400.
  t.is((await review('')).status, 400);
});

test.serial('bootstrap tokens, cluster-info signatures and anonymous reads of cluster-info', async (t) => {
  await ensureClusterInfo(h.store, h.registry, { server: h.url, caPem: h.pki.ca.certPem });
  const data = { 'token-id': 'abcdef', 'token-secret': '0123456789abcdef', 'usage-bootstrap-signing': 'true', 'usage-bootstrap-authentication': 'true', 'auth-extra-groups': 'system:bootstrappers:workers' };
  const b64: Record<string, string> = {};
  for (const [k, v] of Object.entries(data)) b64[k] = Buffer.from(v).toString('base64');
  t.is((await call(h.admin, 'POST', `${h.url}/api/v1/namespaces/svc-system/secrets`, { metadata: { name: 'bootstrap-token-abcdef' }, type: 'bootstrap.svc.io/token', data: b64 })).status, 201);
  const ac = new AbortController();
  const signer = new BootstrapSigner(h.store, h.cache, h.registry, { now: () => new Date(), log: pino({ level: 'silent' }) });
  const run = signer.run(ac.signal);
  t.teardown(async () => {
    ac.abort();
    await run;
  });
  let cm: JsonResponse | undefined;
  for (let i = 0; i < 100; i++) {
    cm = await call(h.anonymous, 'GET', `${h.url}/api/v1/namespaces/svc-public/configmaps/cluster-info`);
    if (cm.body?.data?.['jws-kubeconfig-abcdef']) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  t.is(cm!.status, 200);
  t.true(verifyDetachedSignature(cm!.body.data.kubeconfig, cm!.body.data['jws-kubeconfig-abcdef'], 'abcdef', '0123456789abcdef'));
  const who = await whoami('abcdef.0123456789abcdef');
  t.is(who.status, 201);
  t.deepEqual(who.body.status.userInfo.groups, ['system:bootstrappers', 'system:bootstrappers:workers', 'system:authenticated']);
  t.is((await whoami('abcdef.ffffffffffffffff')).status, 401);
});

test.serial('impersonation: allowed names only, then authorized as the impersonated user', async (t) => {
  const tokenFor = async (name: string) => {
    t.is((await call(h.admin, 'POST', `${h.url}/api/v1/namespaces/team/serviceaccounts`, { metadata: { name } })).status, 201);
    return (await requestToken('team', name)).body.status.token as string;
  };
  const token = await tokenFor('impersonator');
  const headers = (extra: Record<string, string>) => ({ ...bearer(token), ...extra });
  // A plain service account may not impersonate at all (the test policy wants group impersonators).
  const denied = await call(h.anonymous, 'POST', `${h.url}/apis/authentication.svc.io/v1/selfsubjectreviews`, { kind: 'SelfSubjectReview', apiVersion: 'authentication.svc.io/v1' }, headers({ 'Impersonate-User': 'ok-bob' }));
  t.is(denied.status, 403);
  t.regex(denied.body.message, /cannot impersonate resource "users"/);
  // The admin (system:masters) may; an impersonated group must also be allowed.
  const ssr = (extra: Record<string, string>) => call(h.admin, 'POST', `${h.url}/apis/authentication.svc.io/v1/selfsubjectreviews`, { kind: 'SelfSubjectReview', apiVersion: 'authentication.svc.io/v1' }, extra);
  const r = await ssr({ 'Impersonate-User': 'ok-bob', 'Impersonate-Group': 'impersonators', 'Impersonate-Extra-Scopes': 'view', 'Impersonate-Uid': 'ok-1' });
  t.is(r.status, 201, r.text);
  t.deepEqual(r.body.status.userInfo, { username: 'ok-bob', uid: 'ok-1', groups: ['impersonators', 'system:authenticated'], extra: { scopes: ['view'] } });
  t.is((await ssr({ 'Impersonate-Group': 'x' })).status, 400);
  // The request is then authorized as the impersonated user.
  const chained = await call(h.admin, 'GET', `${h.url}/api/v1/namespaces`, undefined, { 'Impersonate-User': 'ok-bob', 'Impersonate-Group': 'impersonators' });
  t.is(chained.status, 200);
  // The impersonated anonymous user is then authorized as anonymous: 403 on namespaces.
  const anon = await call(h.admin, 'GET', `${h.url}/api/v1/namespaces`, undefined, { 'Impersonate-User': 'system:anonymous' });
  t.is(anon.status, 403);
  t.regex(anon.body.message, /User "system:anonymous" cannot list/);
});

test.serial('anonymous requests and malformed authorization headers', async (t) => {
  t.is((await call(h.anonymous, 'GET', `${h.url}/livez`)).status, 200);
  t.is((await call(h.anonymous, 'GET', `${h.url}/api/v1/namespaces`)).status, 403);
  for (const value of ['Bearer', 'Basic dXNlcjpwYXNz', 'Bearer a b c', 'garbage']) {
    const r = await call(h.anonymous, 'GET', `${h.url}/livez`, undefined, { authorization: value });
    t.is(r.status, 401, value);
  }
});
