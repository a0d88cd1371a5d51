import test from 'ava';
import { createHmac, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { ApiError } from '../../../../apiserver/api/errors';
import type { KObject } from '../../../../apiserver/api/types';
import { SignJWT } from '../../../../apiserver/authn/jose';
import {
  algorithmFor,
  ensureGeneratedSigningKey,
  KeyFileError,
  parsePublicKeys,
  parseSigningKey,
  type SaSigningKey,
} from '../../../../apiserver/authn/service-account-keys';
import {
  EXTRA_NODE_NAME,
  EXTRA_POD_NAME,
  EXTRA_POD_UID,
  SA_PRIVATE_CLAIM,
  ServiceAccountTokenAuthenticator,
  ServiceAccountTokenIssuer,
  splitServiceAccountUsername,
  type BoundObjectGetter,
} from '../../../../apiserver/authn/service-account-token';
import { StoreObjectGetter } from '../../../../apiserver/authn/store-object-getter';
import { adminCtx, FakeClock, openFixture } from '../controllers/store-fixture';

const ISS = 'https://svc.default.svc';
const log = pino({ level: 'silent' });

function rsaKey(): SaSigningKey {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return parseSigningKey(privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), 'rsa');
}
function ecKey(curve: 'P-256' | 'P-384'): SaSigningKey {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: curve });
  return parseSigningKey(privateKey.export({ format: 'pem', type: 'sec1' }).toString(), 'ec');
}

const RSA = rsaKey();
const EC = ecKey('P-256');
const binding = { namespace: 'ns1', serviceaccount: { name: 'builder', uid: 'sa-uid-1' } };

/** An in-memory getter: objects keyed "Kind/ns/name". */
class Objects implements BoundObjectGetter {
  readonly m = new Map<string, KObject>();
  put(kind: string, ns: string, name: string, uid: string, extra: Partial<KObject['metadata']> = {}): void {
    this.m.set(`${kind}/${ns}/${name}`, { metadata: { name, namespace: ns, uid, ...extra } });
  }
  get(kind: string, ns: string, name: string): Promise<KObject | null> {
    return Promise.resolve(this.m.get(`${kind}/${ns}/${name}`) ?? null);
  }
}

function setup(keys: SaSigningKey[], lookup?: BoundObjectGetter, clock = new FakeClock()) {
  const authn = new ServiceAccountTokenAuthenticator({ issuers: [ISS], keys, ...(lookup ? { lookup } : {}), now: clock.now, log });
  return { authn, clock };
}

async function is401(t: { true(v: boolean, m?: string): void }, p: Promise<unknown>, why?: RegExp): Promise<void> {
  try {
    await p;
    t.true(false, 'expected a 401');
  } catch (err) {
    t.true(err instanceof ApiError && err.code === 401, String(err));
    if (why) t.true(why.test((err as Error).message), (err as Error).message);
  }
}

test('key types dictate the algorithm; key files may hold public keys, private keys and certificates', (t) => {
  t.is(RSA.alg, 'RS256');
  t.is(EC.alg, 'ES256');
  t.is(ecKey('P-384').alg, 'ES384');
  const { publicKey } = generateKeyPairSync('ed25519');
  t.throws(() => algorithmFor(publicKey), { instanceOf: KeyFileError });
  const pub = RSA.key.export({ format: 'pem', type: 'spki' }).toString();
  const priv = EC.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const both = parsePublicKeys(pub + priv, 'f');
  t.deepEqual(both.map((k) => k.alg), ['RS256', 'ES256']);
  t.is(both[0].kid, RSA.kid);
  t.throws(() => parsePublicKeys('garbage', 'keys.pem'), { instanceOf: KeyFileError, message: /keys\.pem: data does not contain any valid RSA or ECDSA public keys/ });
  t.throws(() => parseSigningKey(pub, 'pub.pem'), { message: /pub\.pem: no RSA or ECDSA private key/ });
});

test('a generated signing key is written once with mode 0600 and reused', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-h11-sa-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const a = ensureGeneratedSigningKey(dir);
  t.is(statSync(a.path).mode & 0o777, 0o600);
  t.is(a.key.alg, 'RS256');
  const before = readFileSync(a.path, 'utf8');
  const b = ensureGeneratedSigningKey(dir);
  t.is(b.key.kid, a.key.kid);
  t.is(readFileSync(a.path, 'utf8'), before);
});

for (const [label, key] of [
  ['RSA', RSA],
  ['ECDSA', EC],
] as const) {
  test(`${label}: an issued token authenticates as the service account with its groups and binding`, async (t) => {
    const clock = new FakeClock();
    const issuer = new ServiceAccountTokenIssuer(key, ISS, clock.now);
    const { token, expirationTimestamp } = await issuer.issue({
      binding: { ...binding, pod: { name: 'web-1', uid: 'pod-uid' }, node: { name: 'n1', uid: 'node-uid' } },
      audiences: [ISS, 'vault'],
      expirationSeconds: 3600,
    });
    t.is(expirationTimestamp.getTime(), clock.ms + 3600_000);
    const header = JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString());
    t.deepEqual(header, { alg: key.alg, kid: key.kid });
    const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
    t.is(claims.sub, 'system:serviceaccount:ns1:builder');
    t.deepEqual(claims.aud, [ISS, 'vault']);
    t.is(claims.nbf, claims.iat);
    t.is(claims[SA_PRIVATE_CLAIM].serviceaccount.uid, 'sa-uid-1');
    const { authn } = setup([RSA, EC], undefined, clock);
    const r = await authn.authenticateToken(token, [ISS]);
    t.truthy(r);
    t.is(r!.user.username, 'system:serviceaccount:ns1:builder');
    t.is(r!.user.uid, 'sa-uid-1');
    t.deepEqual(r!.user.groups, ['system:serviceaccounts', 'system:serviceaccounts:ns1']);
    t.deepEqual(r!.user.extra?.[EXTRA_POD_NAME], ['web-1']);
    t.deepEqual(r!.user.extra?.[EXTRA_POD_UID], ['pod-uid']);
    t.deepEqual(r!.user.extra?.[EXTRA_NODE_NAME], ['n1']);
    t.regex(r!.user.extra?.['authentication.svc.io/credential-id']?.[0] ?? '', /^JTI=[0-9a-f-]{36}$/);
    t.deepEqual(r!.audiences, [ISS]);
    // The other audience of the token is usable too; an audience it lacks is refused.
    t.deepEqual((await authn.authenticateToken(token, ['vault']))!.audiences, ['vault']);
    await is401(t, authn.authenticateToken(token, ['elsewhere']), /audiences/);
  });
}

test('bad tokens: expired, not yet valid, foreign signature, unknown issuer', async (t) => {
  const clock = new FakeClock();
  const issuer = new ServiceAccountTokenIssuer(RSA, ISS, clock.now);
  const { authn } = setup([RSA], undefined, clock);
  const { token } = await issuer.issue({ binding, audiences: [ISS], expirationSeconds: 600 });
  // Within the 60 s leeway still fine; past it refused.
  clock.advance(600_000 + 30_000);
  t.truthy(await authn.authenticateToken(token, [ISS]));
  clock.advance(60_000);
  await is401(t, authn.authenticateToken(token, [ISS]), /exp/);

  const now = Math.floor(Date.now() / 1000);
  const future = await new SignJWT({ [SA_PRIVATE_CLAIM]: binding })
    .setProtectedHeader({ alg: 'RS256', kid: RSA.kid })
    .setIssuer(ISS)
    .setSubject('system:serviceaccount:ns1:builder')
    .setAudience(ISS)
    .setIssuedAt(now)
    .setNotBefore(now + 3600)
    .setExpirationTime(now + 7200)
    .sign(RSA.privateKey);
  await is401(t, setup([RSA], undefined, new FakeClock(now * 1000)).authn.authenticateToken(future, [ISS]), /nbf/);

  const other = rsaKey();
  const forged = await new ServiceAccountTokenIssuer(other, ISS, clock.now).issue({ binding, audiences: [ISS], expirationSeconds: 600 });
  await is401(t, setup([RSA], undefined, clock).authn.authenticateToken(forged.token, [ISS]), /signature/);

  const foreign = await new ServiceAccountTokenIssuer(RSA, 'https://elsewhere.example', clock.now).issue({ binding, audiences: [ISS], expirationSeconds: 600 });
  t.is(await setup([RSA], undefined, clock).authn.authenticateToken(foreign.token, [ISS]), null);
  t.is(await authn.authenticateToken('not-a-jwt', [ISS]), null);
  t.is(await authn.authenticateToken('abcdef.0123456789abcdef', [ISS]), null);
});

test('a verified token is remembered by its signature only together with its exact signed part', async (t) => {
  const clock = new FakeClock();
  const issuer = new ServiceAccountTokenIssuer(RSA, ISS, clock.now);
  const { authn } = setup([RSA], undefined, clock);
  const { token } = await issuer.issue({ binding, audiences: [ISS], expirationSeconds: 600 });
  const first = await authn.authenticateToken(token, [ISS]);
  t.is(first!.user.username, 'system:serviceaccount:ns1:builder');
  // The cached user is shared between requests, so nobody may change it.
  t.true(Object.isFrozen(first!.user) && Object.isFrozen(first!.user.groups));
  // Another payload presented with the remembered signature (here: a different namespace) must
  // not ride on the cached verification, neither one at a time nor while a check is in flight.
  const [h, payload, sig] = token.split('.') as [string, string, string];
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
  claims[SA_PRIVATE_CLAIM].namespace = 'kube-system';
  claims.sub = 'system:serviceaccount:kube-system:builder';
  const forged = `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${sig}`;
  await is401(t, authn.authenticateToken(forged, [ISS]), /signature/);
  const fresh = setup([RSA], undefined, clock).authn;
  const both = await Promise.allSettled([fresh.authenticateToken(token, [ISS]), fresh.authenticateToken(forged, [ISS])]);
  t.is(both[0].status === 'fulfilled' ? both[0].value?.user.username : 'rejected', 'system:serviceaccount:ns1:builder');
  t.true(both[1].status === 'rejected' && both[1].reason instanceof ApiError && both[1].reason.code === 401);
  // A forged one checked first does not fail the genuine one waiting on the same signature.
  const fresh2 = setup([RSA], undefined, clock).authn;
  const reversed = await Promise.allSettled([fresh2.authenticateToken(forged, [ISS]), fresh2.authenticateToken(token, [ISS])]);
  t.true(reversed[0].status === 'rejected');
  t.is(reversed[1].status === 'fulfilled' ? reversed[1].value?.user.username : String((reversed[1]).reason), 'system:serviceaccount:ns1:builder');
  // The genuine token still works afterwards.
  t.is((await authn.authenticateToken(token, [ISS]))!.user.username, 'system:serviceaccount:ns1:builder');
});

test('algorithm confusion: alg none and HS256 keyed with the public key are refused', async (t) => {
  const clock = new FakeClock();
  const { authn } = setup([RSA], undefined, clock);
  const now = Math.floor(clock.ms / 1000);
  const payload = { iss: ISS, sub: 'system:serviceaccount:ns1:builder', aud: [ISS], iat: now, nbf: now, exp: now + 600, [SA_PRIVATE_CLAIM]: binding };
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const none = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(payload)}.`;
  await is401(t, authn.authenticateToken(none, [ISS]));
  const noneKid = `${b64({ alg: 'none', kid: RSA.kid })}.${b64(payload)}.`;
  await is401(t, authn.authenticateToken(noneKid, [ISS]));
  const pubPem = RSA.key.export({ format: 'pem', type: 'spki' }).toString();
  for (const secret of [pubPem, RSA.key.export({ format: 'der', type: 'spki' })]) {
    const head = b64({ alg: 'HS256', kid: RSA.kid });
    const body = b64(payload);
    const sig = createHmac('sha256', secret).update(`${head}.${body}`).digest('base64url');
    await is401(t, authn.authenticateToken(`${head}.${body}.${sig}`, [ISS]));
  }
  // An RSA token presented against an ECDSA key (RS256 vs ES256) is refused as well.
  const issued = await new ServiceAccountTokenIssuer(RSA, ISS, clock.now).issue({ binding, audiences: [ISS], expirationSeconds: 600 });
  await is401(t, setup([EC], undefined, clock).authn.authenticateToken(issued.token, [ISS]));
});

test('lookup: tokens of deleted or recreated accounts and of gone bound objects are revoked', async (t) => {
  const clock = new FakeClock();
  const objects = new Objects();
  objects.put('ServiceAccount', 'ns1', 'builder', 'sa-uid-1');
  objects.put('Pod', 'ns1', 'web-1', 'pod-uid');
  objects.put('Secret', 'ns1', 's1', 'sec-uid');
  const issuer = new ServiceAccountTokenIssuer(RSA, ISS, clock.now);
  const { authn } = setup([RSA], objects, clock);
  const plain = (await issuer.issue({ binding, audiences: [ISS], expirationSeconds: 3600 })).token;
  const podBound = (await issuer.issue({ binding: { ...binding, pod: { name: 'web-1', uid: 'pod-uid' } }, audiences: [ISS], expirationSeconds: 3600 })).token;
  const secretBound = (await issuer.issue({ binding: { ...binding, secret: { name: 's1', uid: 'sec-uid' } }, audiences: [ISS], expirationSeconds: 3600 })).token;
  for (const tok of [plain, podBound, secretBound]) t.truthy(await authn.authenticateToken(tok, [ISS]));

  objects.put('Pod', 'ns1', 'web-1', 'other-pod-uid'); // recreated under the same name
  await is401(t, authn.authenticateToken(podBound, [ISS]), /UID/);
  objects.m.delete('Pod/ns1/web-1');
  await is401(t, authn.authenticateToken(podBound, [ISS]), /deleted/);
  objects.put('Secret', 'ns1', 's1', 'sec-uid', { deletionTimestamp: '2025-03-01T12:00:00Z' });
  await is401(t, authn.authenticateToken(secretBound, [ISS]), /being deleted/);
  t.truthy(await authn.authenticateToken(plain, [ISS]));
  objects.put('ServiceAccount', 'ns1', 'builder', 'sa-uid-2');
  await is401(t, authn.authenticateToken(plain, [ISS]), /does not match/);
  objects.m.delete('ServiceAccount/ns1/builder');
  await is401(t, authn.authenticateToken(plain, [ISS]), /deleted/);
  // Without lookup the signature alone decides.
  t.truthy(await setup([RSA], undefined, clock).authn.authenticateToken(podBound, [ISS]));
});

test('the store getter finds accounts in the store and answers null for absent ones', async (t) => {
  const f = await openFixture();
  t.teardown(() => f.close());
  const getter = new StoreObjectGetter(f.store, f.registry);
  t.is(await getter.get('ServiceAccount', 'ns1', 'nobody'), null);
  const sa = await f.store.create(f.type('', 'v1', 'serviceaccounts'), 'ns1', { metadata: { name: 'builder' } }, adminCtx);
  t.is((await getter.get('ServiceAccount', 'ns1', 'builder'))?.metadata.uid, sa.metadata.uid);
  const node = await f.store.create(f.type('', 'v1', 'nodes'), '', { metadata: { name: 'n1' } }, adminCtx);
  t.is((await getter.get('Node', 'ignored', 'n1'))?.metadata.uid, node.metadata.uid);
});

test('service account usernames split into namespace and name', (t) => {
  t.deepEqual(splitServiceAccountUsername('system:serviceaccount:ns:sa'), { namespace: 'ns', name: 'sa' });
  t.is(splitServiceAccountUsername('system:serviceaccount:ns'), undefined);
  t.is(splitServiceAccountUsername('alice'), undefined);
});

test('a key file on disk loads', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-h11-kf-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const p = join(dir, 'k.pem');
  writeFileSync(p, EC.privateKey.export({ format: 'pem', type: 'sec1' }).toString());
  t.is(parsePublicKeys(readFileSync(p, 'utf8'), p)[0].kid, EC.kid);
});
