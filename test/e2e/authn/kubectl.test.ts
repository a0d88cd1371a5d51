import test from 'ava';
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { issue } from '../../../apiserver/pki/certs';
import { call } from '../../helpers/http';
import { startHarness, type Harness } from './harness';

// The real kubectl drives the in-process server with a bearer token, a client certificate and
// kubectl's own exec credential plugin support (client.authentication.k8s.io, kubectl's names).
const run = promisify(execFile);
const KUBECTL = '/usr/bin/kubectl';
let h: Harness;
let dir: string;
let caFile: string;

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-h11-kubectl-'));
  writeFileSync(join(dir, 'tokens.csv'), 'static-token-1,static-user,s1,"ops,dev"\n');
  h = await startHarness({ tokenAuthFile: join(dir, 'tokens.csv') });
  caFile = join(dir, 'ca.crt');
  writeFileSync(caFile, h.pki.ca.certPem);
});
test.after.always(async () => {
  await h?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function kubectl(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ ok: boolean; out: string }> {
  try {
    const { stdout } = await run(KUBECTL, args, { timeout: 30_000, env: { ...process.env, HOME: dir, ...env } });
    return { ok: true, out: stdout };
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string };
    return { ok: false, out: `${e.stderr ?? ''}${e.stdout ?? ''}` };
  }
}

function ssrFile(): string {
  const f = join(dir, 'ssr.json');
  writeFileSync(f, JSON.stringify({ apiVersion: 'authentication.svc.io/v1', kind: 'SelfSubjectReview' }));
  return f;
}

/** "kubectl auth whoami" over plain REST: kubectl's own command names the upstream group. */
interface Who {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}
async function whoami(args: string[]): Promise<Who> {
  const r = await kubectl([...args, 'create', '--raw', '/apis/authentication.svc.io/v1/selfsubjectreviews', '-f', ssrFile()]);
  if (!r.ok) throw new Error(r.out);
  return JSON.parse(r.out).status.userInfo;
}

function kubeconfig(name: string, user: Record<string, unknown>): string {
  const f = join(dir, `${name}.kubeconfig`);
  writeFileSync(
    f,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'svc', cluster: { server: h.url, 'certificate-authority': caFile, 'tls-server-name': 'localhost' } }],
      users: [{ name, user }],
      contexts: [{ name, context: { cluster: 'svc', user: name } }],
      'current-context': name,
    }),
  );
  return f;
}

test.serial('kubectl with a bearer token (static and service account)', async (t) => {
  const flags = ['--server', h.url, '--certificate-authority', caFile, '--tls-server-name', 'localhost'];
  t.deepEqual(await whoami([...flags, '--token', 'static-token-1']), { username: 'static-user', uid: 's1', groups: ['ops', 'dev', 'system:authenticated'] });
  t.is((await call(h.admin, 'POST', `${h.url}/api/v1/namespaces/kc/serviceaccounts`, { metadata: { name: 'deployer' } })).status, 201);
  const tr = await call(h.admin, 'POST', `${h.url}/api/v1/namespaces/kc/serviceaccounts/deployer/token`, { spec: {} });
  const sa = await kubectl([...flags, '--token', tr.body.status.token, 'get', 'serviceaccounts', '-n', 'kc', '-o', 'name']);
  t.true(sa.ok, sa.out);
  t.regex(sa.out, /serviceaccount\/deployer/);
  const bad = await kubectl([...flags, '--token', 'nope', 'get', 'namespaces']);
  t.false(bad.ok);
  t.regex(bad.out, /Unauthorized|must be logged in/);
});

test.serial('kubectl create token asks the token sub-resource', async (t) => {
  const r = await kubectl(['--kubeconfig', join(h.dataDir, 'admin.kubeconfig'), '--server', h.url, 'create', 'token', 'deployer', '-n', 'kc', '--duration', '15m', '--audience', 'vault']);
  t.true(r.ok, r.out);
  const claims = JSON.parse(Buffer.from(r.out.trim().split('.')[1], 'base64url').toString());
  t.is(claims.sub, 'system:serviceaccount:kc:deployer');
  t.deepEqual(claims.aud, ['vault']);
  t.is(claims.exp - claims.iat, 900);
});

test.serial('kubectl with a client certificate', async (t) => {
  const carol = await issue(h.pki.ca, { commonName: 'carol', organizations: ['team-a', 'team-b'], usage: 'client', validityMs: 86_400_000 });
  const f = kubeconfig('carol', { 'client-certificate-data': Buffer.from(carol.certPem).toString('base64'), 'client-key-data': Buffer.from(carol.keyPem).toString('base64') });
  const u = await whoami(['--kubeconfig', f]);
  t.is(u.username, 'carol');
  t.deepEqual(u.groups, ['team-a', 'team-b', 'system:authenticated']);
  t.regex(u.extra?.['authentication.svc.io/credential-id']?.[0] ?? '', /^X509SHA256=/);
});

test.serial('kubectl with an exec credential plugin (token, then client certificate), cluster info passed on request', async (t) => {
  const plugins = join(dir, 'plugins');
  mkdirSync(plugins, { recursive: true });
  const infoFile = join(dir, 'exec-info.json');
  const plugin = join(plugins, 'token-plugin.sh');
  writeFileSync(
    plugin,
    `#!/bin/sh
printf '%s' "$KUBERNETES_EXEC_INFO" > ${infoFile}
echo "$@ $PLUGIN_GREETING" >> ${infoFile}.args
cat <<EOF
{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"static-token-1","expirationTimestamp":"2099-01-01T00:00:00Z"}}
EOF
`,
  );
  chmodSync(plugin, 0o755);
  const f = kubeconfig('exec', {
    exec: { apiVersion: 'client.authentication.k8s.io/v1', command: './plugins/token-plugin.sh', args: ['--realm', 'svc'], env: [{ name: 'PLUGIN_GREETING', value: 'hello' }], interactiveMode: 'Never', provideClusterInfo: true },
  });
  const u = await whoami(['--kubeconfig', f]);
  t.is(u.username, 'static-user');
  const info = JSON.parse(readFileSync(infoFile, 'utf8'));
  t.is(info.kind, 'ExecCredential');
  t.is(info.spec.cluster.server, h.url);
  t.false(info.spec.interactive);
  t.regex(readFileSync(`${infoFile}.args`, 'utf8'), /--realm svc hello/);

  const erin = await issue(h.pki.ca, { commonName: 'erin', organizations: ['plugins'], usage: 'client', validityMs: 86_400_000 });
  const certPlugin = join(plugins, 'cert-plugin.sh');
  writeFileSync(
    certPlugin,
    `#!/bin/sh
cat <<'EOF'
${JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { clientCertificateData: erin.certPem, clientKeyData: erin.keyPem } })}
EOF
`,
  );
  chmodSync(certPlugin, 0o755);
  const fc = kubeconfig('exec-cert', { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: certPlugin, interactiveMode: 'Never' } });
  const u2 = await whoami(['--kubeconfig', fc]);
  t.is(u2.username, 'erin');
  t.deepEqual(u2.groups, ['plugins', 'system:authenticated']);
});
