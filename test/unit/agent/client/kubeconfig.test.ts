import test from 'ava';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { loadKubeconfig, parseKubeconfig } from '../../../../agent/client/kubeconfig';
import { renderKubeconfig } from '../../../../agent/client/kubeconfig-writer';

const CA = '-----BEGIN CERTIFICATE-----\nQ0E=\n-----END CERTIFICATE-----\n';
const CERT = '-----BEGIN CERTIFICATE-----\nQ0VSVA==\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN EC PRIVATE KEY-----\nS0VZ\n-----END EC PRIVATE KEY-----\n';
const b64 = (s: string) => Buffer.from(s).toString('base64');

function doc(user: Record<string, unknown>, cluster: Record<string, unknown> = { server: 'https://10.0.0.1:6443/', 'certificate-authority-data': b64(CA) }) {
  return YAML.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: 'other', cluster: { server: 'https://wrong:1' } },
      { name: 'c1', cluster },
    ],
    users: [
      { name: 'other', user: { token: 'wrong' } },
      { name: 'u1', user },
    ],
    contexts: [
      { name: 'ctx-other', context: { cluster: 'other', user: 'other' } },
      { name: 'ctx', context: { cluster: 'c1', user: 'u1' } },
    ],
    'current-context': 'ctx',
  });
}

test('follows current-context to embedded CA, client certificate and key data', async (t) => {
  const c = await parseKubeconfig(doc({ 'client-certificate-data': b64(CERT), 'client-key-data': b64(KEY) }), '/etc/svc/kubelet.conf');
  t.is(c.server, 'https://10.0.0.1:6443');
  t.is(c.caPem, CA);
  t.is(c.certPem, CERT);
  t.is(c.keyPem, KEY);
  t.is(c.token, undefined);
});

test('file references resolve against the kubeconfig directory', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'h5-kc-'));
  try {
    mkdirSync(join(dir, 'pki'));
    writeFileSync(join(dir, 'pki', 'ca.crt'), CA);
    writeFileSync(join(dir, 'pki', 'client.pem'), CERT + KEY);
    writeFileSync(join(dir, 'token'), 'abcdef.0123456789abcdef\n');
    const kc = join(dir, 'kubeconfig');
    writeFileSync(kc, doc({ 'client-certificate': 'pki/client.pem', 'client-key': 'pki/client.pem' }, { server: 'https://h:1', 'certificate-authority': 'pki/ca.crt' }));
    const c = await loadKubeconfig(kc);
    t.is(c.caPem, CA);
    t.is(c.certFile, join(dir, 'pki', 'client.pem'));
    t.is(c.certPem, CERT, 'only the certificate blocks of a combined file');
    t.is(c.keyPem, KEY);
    writeFileSync(kc, doc({ tokenFile: 'token' }));
    t.is((await loadKubeconfig(kc)).token, 'abcdef.0123456789abcdef');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a bootstrap token user gives a bearer token', async (t) => {
  const c = await parseKubeconfig(doc({ token: 'abcdef.0123456789abcdef' }), '/x/bootstrap.conf');
  t.is(c.token, 'abcdef.0123456789abcdef');
  t.is(c.certPem, undefined);
});

test('clear errors that name the file', async (t) => {
  await t.throwsAsync(loadKubeconfig('/nonexistent/kc'), { message: 'kubeconfig /nonexistent/kc: no such file' });
  await t.throwsAsync(parseKubeconfig(doc({ exec: { command: 'x' } }), '/k'), { message: /kubeconfig \/k: users\[u1\]\.user\.exec: exec: apiVersion: Unsupported value/ });
  await t.throwsAsync(parseKubeconfig(doc({ 'client-certificate-data': b64(CERT) }), '/k'), { message: /must be given together/ });
  await t.throwsAsync(parseKubeconfig(doc({}).replace('current-context: ctx', 'current-context: nope'), '/k'), { message: /context "nope" \(named by the current context\) does not exist/ });
  await t.throwsAsync(parseKubeconfig('apiVersion: v1\nclusters: []\n', '/k'), { message: /current-context is not set/ });
  await t.throwsAsync(parseKubeconfig(doc({}, { server: 'ftp://x' }), '/k'), { message: /server URL must be https/ });
  await t.throwsAsync(parseKubeconfig(doc({ 'client-certificate-data': 'bm90IHBlbQ==', 'client-key-data': b64(KEY) }), '/k'), { message: /not base64-encoded PEM/ });
  await t.throwsAsync(parseKubeconfig(doc({ 'client-certificate': 'missing.pem', 'client-key': 'missing.pem' }), '/etc/k'), { message: /cannot read client-certificate \/etc\/missing.pem: ENOENT/ });
  await t.throwsAsync(parseKubeconfig(': : :\n  - [', '/k'), { message: /invalid YAML/ });
});

test('the kubeconfig written after bootstrap reads back to the same connection settings', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'h5-kc-'));
  try {
    const pem = join(dir, 'svc-node-client-current.pem');
    writeFileSync(pem, CERT + KEY);
    const kc = join(dir, 'kubelet.conf');
    writeFileSync(kc, renderKubeconfig({ server: 'https://127.0.0.1:6443', caPem: CA, certFile: pem, keyFile: pem }));
    const c = await loadKubeconfig(kc);
    t.is(c.server, 'https://127.0.0.1:6443');
    t.is(c.caPem, CA);
    t.is(c.certFile, pem);
    t.is(c.keyFile, pem);
    t.is(c.certPem, CERT);
    t.is(c.keyPem, KEY);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
