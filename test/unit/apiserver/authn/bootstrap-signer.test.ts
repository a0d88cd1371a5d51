import test from 'ava';
import { createHmac } from 'node:crypto';
import { parse } from 'yaml';
import type { KObject } from '../../../../apiserver/api/types';
import {
  clusterInfoKubeconfig,
  computeDetachedSignature,
  ensureClusterInfo,
  verifyDetachedSignature,
} from '../../../../apiserver/authn/cluster-info';
import { BootstrapSigner } from '../../../../apiserver/controllers/bootstrap-signer';
import { adminCtx, openFixture, waitFor, type Fixture } from '../controllers/store-fixture';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

test('detached JWS: HS256 over the payload with the token as key, payload left out', (t) => {
  const content = clusterInfoKubeconfig('https://10.0.0.1:6443', CA);
  const sig = computeDetachedSignature(content, 'abcdef', '0123456789abcdef');
  const [h, p, s] = sig.split('.');
  t.is(p, '');
  t.is(Buffer.from(h, 'base64url').toString(), '{"alg":"HS256","kid":"abcdef"}');
  // The verification recipe of 5.9: base64url(payload) between the dots, HMAC-SHA256.
  const want = createHmac('sha256', 'abcdef.0123456789abcdef').update(`${h}.${Buffer.from(content).toString('base64url')}`).digest('base64url');
  t.is(s, want);
  t.true(verifyDetachedSignature(content, sig, 'abcdef', '0123456789abcdef'));
  t.false(verifyDetachedSignature(content + ' ', sig, 'abcdef', '0123456789abcdef'));
  t.false(verifyDetachedSignature(content, sig, 'abcdef', 'ffffffffffffffff'));
  const kc = parse(content);
  t.deepEqual(kc.clusters, [{ cluster: { 'certificate-authority-data': Buffer.from(CA).toString('base64'), server: 'https://10.0.0.1:6443' }, name: '' }]);
  t.is(kc.users, null);
});

async function tokenSecret(f: Fixture, id: string, data: Record<string, string>): Promise<void> {
  const b64: Record<string, string> = {};
  for (const [k, v] of Object.entries({ 'token-id': id, ...data })) b64[k] = Buffer.from(v).toString('base64');
  await f.store.create(f.type('', 'v1', 'secrets'), 'svc-system', { metadata: { name: `bootstrap-token-${id}` }, type: 'bootstrap.svc.io/token', data: b64 }, adminCtx);
}

const jwsKeys = (o: KObject | null) => Object.keys((o?.data as Record<string, string>) ?? {}).filter((k) => k.startsWith('jws-')).sort();

test('the signer keeps signatures for signing tokens only, following token changes', async (t) => {
  const f = await openFixture();
  t.teardown(() => f.close());
  await ensureClusterInfo(f.store, f.registry, { server: 'https://10.0.0.1:6443', caPem: CA });
  await ensureClusterInfo(f.store, f.registry, { server: 'https://10.0.0.1:6443', caPem: CA }); // idempotent
  await tokenSecret(f, 'aaaaaa', { 'token-secret': '0123456789abcdef', 'usage-bootstrap-signing': 'true' });
  await tokenSecret(f, 'bbbbbb', { 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true' });
  await tokenSecret(f, 'cccccc', { 'token-secret': '0123456789abcdef', 'usage-bootstrap-signing': 'true', expiration: '2025-03-01T11:00:00Z' });
  const signer = new BootstrapSigner(f.store, f.cache, f.registry, { now: f.clock.now, log: f.log });
  const cm = f.type('', 'v1', 'configmaps');
  const ac = new AbortController();
  const run = signer.run(ac.signal);
  t.teardown(async () => {
    ac.abort();
    await run;
  });
  const signed = await waitFor(f, cm, 'svc-public', 'cluster-info', (o) => jwsKeys(o).length === 1);
  t.deepEqual(jwsKeys(signed), ['jws-kubeconfig-aaaaaa']);
  const data = signed!.data as Record<string, string>;
  t.true(verifyDetachedSignature(data.kubeconfig, data['jws-kubeconfig-aaaaaa'], 'aaaaaa', '0123456789abcdef'));

  // A new signing token is added, a stale signature is removed.
  await tokenSecret(f, 'dddddd', { 'token-secret': 'ffffffffffffffff', 'usage-bootstrap-signing': 'true' });
  await waitFor(f, cm, 'svc-public', 'cluster-info', (o) => jwsKeys(o).join() === 'jws-kubeconfig-aaaaaa,jws-kubeconfig-dddddd');
  await f.store.delete(f.type('', 'v1', 'secrets'), 'svc-system', 'bootstrap-token-aaaaaa', {}, adminCtx);
  await waitFor(f, cm, 'svc-public', 'cluster-info', (o) => jwsKeys(o).join() === 'jws-kubeconfig-dddddd');

  // A changed kubeconfig is re-signed.
  await ensureClusterInfo(f.store, f.registry, { server: 'https://10.0.0.2:6443', caPem: CA });
  const resigned = await waitFor(f, cm, 'svc-public', 'cluster-info', (o) => {
    const d = (o?.data ?? {}) as Record<string, string>;
    return !!d['jws-kubeconfig-dddddd'] && verifyDetachedSignature(d.kubeconfig, d['jws-kubeconfig-dddddd'], 'dddddd', 'ffffffffffffffff');
  });
  t.regex((resigned!.data as Record<string, string>).kubeconfig, /10\.0\.0\.2/);
});

test('one pass without cluster-info changes nothing', async (t) => {
  const f = await openFixture();
  t.teardown(() => f.close());
  const signer = new BootstrapSigner(f.store, f.cache, f.registry, { now: f.clock.now, log: f.log });
  t.false(await signer.sign());
  await ensureClusterInfo(f.store, f.registry, { server: 'https://x:6443', caPem: CA });
  t.false(await signer.sign()); // no signing tokens, nothing to add
});
