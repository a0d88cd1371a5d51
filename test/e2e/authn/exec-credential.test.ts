import test from 'ava';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { ExecCredentialError, ExecCredentialSource, execCredential, parseExecCredential, type ExecConfig } from '../../../agent/client/exec-credential';
import { issue } from '../../../apiserver/pki/certs';
import { call } from '../../helpers/http';
import { FakeClock } from '../../unit/apiserver/controllers/store-fixture';
import { startHarness, type Harness } from './harness';

// The agent's own exec plugin runner (5.8, client.authentication.svc.io) against real plugin
// scripts, and the credentials it gets used against the in-process server.
let h: Harness;
let dir: string;
const V1 = 'client.authentication.svc.io/v1';

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-h11-exec-'));
  writeFileSync(join(dir, 'tokens.csv'), 'plugin-token,plugin-user,p1,plugins\n');
  h = await startHarness({ tokenAuthFile: join(dir, 'tokens.csv') });
});
test.after.always(async () => {
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Writes an executable shell plugin that counts its runs, records its input and prints `output`. */
function plugin(name: string, output: string, exitCode = 0): string {
  mkdirSync(join(dir, 'bin'), { recursive: true });
  const p = join(dir, 'bin', name);
  writeFileSync(join(dir, 'bin', `${name}.out`), output);
  const script = [
    '#!/bin/sh',
    `echo run >> "${p}.runs"`,
    `printf '%s' "$KUBERNETES_EXEC_INFO" > "${p}.info"`,
    `echo "$* $EXTRA" > "${p}.args"`,
    `cat "${p}.out"`,
    'echo plugin-diagnostic >&2',
    `exit ${exitCode}`,
    '',
  ].join('\n');
  writeFileSync(p, script);
  chmodSync(p, 0o755);
  return p;
}
const runs = (p: string) => readFileSync(`${p}.runs`, 'utf8').trim().split('\n').length;
const cred = (status: Record<string, unknown>, apiVersion = V1) => JSON.stringify({ apiVersion, kind: 'ExecCredential', status });

test('a token plugin: relative command, args, env and KUBERNETES_EXEC_INFO; the token works against the server', async (t) => {
  const p = plugin('token.sh', cred({ token: 'plugin-token', expirationTimestamp: '2099-01-01T00:00:00Z' }));
  const exec: ExecConfig = { apiVersion: V1, command: './bin/token.sh', args: ['--a', 'b'], env: [{ name: 'EXTRA', value: 'x1' }], interactiveMode: 'Never', provideClusterInfo: true };
  const caData = Buffer.from(h.pki.ca.certPem).toString('base64');
  const r = await execCredential(exec, dir, { server: h.url, 'certificate-authority-data': caData }, { stdinIsTTY: false });
  t.deepEqual(r, { token: 'plugin-token', expiry: new Date('2099-01-01T00:00:00Z') });
  t.is(readFileSync(`${p}.args`, 'utf8').trim(), '--a b x1');
  const info = JSON.parse(readFileSync(`${p}.info`, 'utf8'));
  t.deepEqual(info, { apiVersion: V1, kind: 'ExecCredential', spec: { interactive: false, cluster: { server: h.url, 'certificate-authority-data': caData } } });
  const who = await call(h.anonymous, 'POST', `${h.url}/apis/authentication.svc.io/v1/selfsubjectreviews`, { apiVersion: 'authentication.svc.io/v1', kind: 'SelfSubjectReview' }, { authorization: `Bearer ${r.token}` });
  t.is(who.body.status.userInfo.username, 'plugin-user');
  // Without provideClusterInfo the cluster is not passed.
  await execCredential({ ...exec, provideClusterInfo: false }, dir, { server: h.url }, { stdinIsTTY: false });
  t.deepEqual(JSON.parse(readFileSync(`${p}.info`, 'utf8')).spec, { interactive: false });
});

test('a certificate plugin: the certificate authenticates over TLS', async (t) => {
  const kp = await issue(h.pki.ca, { commonName: 'exec-cert-user', organizations: ['plugins'], usage: 'client', validityMs: 86_400_000 });
  plugin('cert.sh', cred({ clientCertificateData: kp.certPem, clientKeyData: kp.keyPem }, 'client.authentication.svc.io/v1beta1'));
  const r = await execCredential({ apiVersion: 'client.authentication.svc.io/v1beta1', command: join(dir, 'bin', 'cert.sh') }, dir, undefined, { stdinIsTTY: false });
  t.is(r.expiry, undefined);
  const agent = new Agent({ connect: { ca: h.pki.ca.certPem, servername: 'localhost', cert: r.certPem, key: r.keyPem } });
  t.teardown(() => agent.close());
  const who = await call(agent, 'POST', `${h.url}/apis/authentication.svc.io/v1/selfsubjectreviews`, { apiVersion: 'authentication.svc.io/v1', kind: 'SelfSubjectReview' });
  t.is(who.body.status.userInfo.username, 'exec-cert-user');
});

test('caching: until expiry, until invalidate() after a 401, shared by concurrent callers', async (t) => {
  const p = plugin('cached.sh', cred({ token: 'plugin-token', expirationTimestamp: '2025-03-01T13:00:00Z' }));
  const clock = new FakeClock();
  const src = new ExecCredentialSource({ apiVersion: V1, command: p, interactiveMode: 'IfAvailable' }, dir, undefined, { stdinIsTTY: false, now: clock.now });
  const [a, b] = await Promise.all([src.get(), src.get()]);
  t.is(a, b);
  t.is(runs(p), 1);
  t.is(await src.get(), a);
  clock.advance(30 * 60_000);
  t.is(await src.get(), a);
  t.is(runs(p), 1);
  src.invalidate(a); // the server said 401
  const c = await src.get();
  t.not(c, a);
  t.is(runs(p), 2);
  src.invalidate(a); // a stale 401 does not drop the newer credential
  t.is(await src.get(), c);
  clock.advance(31 * 60_000); // past 13:00
  await src.get();
  t.is(runs(p), 3);
});

test('bad plugins and configurations fail with a clear error', async (t) => {
  const base: ExecConfig = { apiVersion: V1, command: '', interactiveMode: 'Never' };
  const fails = async (e: ExecConfig, re: RegExp) => {
    const err = await t.throwsAsync(execCredential(e, dir, undefined, { stdinIsTTY: false }));
    t.true(err instanceof ExecCredentialError, String(err));
    t.regex(err.message, re);
  };
  await fails({ ...base, command: plugin('wrongver.sh', cred({ token: 'x' }, 'client.authentication.svc.io/v1beta1')) }, /configured to use API version client\.authentication\.svc\.io\/v1, plugin returned version client\.authentication\.svc\.io\/v1beta1/);
  await fails({ ...base, command: plugin('nostatus.sh', JSON.stringify({ apiVersion: V1, kind: 'ExecCredential' })) }, /didn't return a status/);
  await fails({ ...base, command: plugin('halfcert.sh', cred({ clientCertificateData: 'x' })) }, /both are required together/);
  await fails({ ...base, command: plugin('empty.sh', cred({})) }, /didn't return a token or cert\/key pair/);
  await fails({ ...base, command: plugin('notjson.sh', 'hello') }, /did not print a JSON ExecCredential/);
  await fails({ ...base, command: plugin('exit3.sh', cred({ token: 'x' }), 3) }, /failed with exit code 3: plugin-diagnostic/);
  await fails({ ...base, command: 'svc-no-such-plugin', installHint: 'install it with apt-get install svc-plugin' }, /executable svc-no-such-plugin not found\n\ninstall it with apt-get/);
  await fails({ ...base, command: plugin('always.sh', cred({ token: 'x' })), interactiveMode: 'Always' }, /interactive mode: standard input is not a terminal/);
  await fails({ ...base, command: 'x', apiVersion: 'client.authentication.k8s.io/v1alpha1' }, /apiVersion: Unsupported value/);
  await fails({ apiVersion: V1, command: 'x' }, /interactiveMode: Required value/);
  t.throws(() => parseExecCredential(cred({ token: 'x', expirationTimestamp: 'tomorrow' }), V1), { message: /invalid expirationTimestamp/ });
  // v1beta1 defaults interactiveMode to IfAvailable; with a terminal the plugin is told it may prompt.
  const p = plugin('tty.sh', cred({ token: 'x' }, 'client.authentication.svc.io/v1beta1'));
  await execCredential({ apiVersion: 'client.authentication.svc.io/v1beta1', command: p }, dir, undefined, { stdinIsTTY: true });
  t.true(JSON.parse(readFileSync(`${p}.info`, 'utf8')).spec.interactive);
});
