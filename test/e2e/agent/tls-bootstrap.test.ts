import test from 'ava';
import { existsSync, lstatSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { call } from '../../helpers/http';
import { eventually, kubectlJson, startAgent } from './agent-process';

const TOKEN_ID = 'e2e0ab';
const TOKEN_SECRET = '0123456789abcdef';

function bootstrapKubeconfig(api: RunningApiServer, file: string, token: string): string {
  const b64 = Buffer.from(api.caPem).toString('base64');
  writeFileSync(
    file,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: svc',
      '  cluster:',
      `    server: ${api.url}`,
      `    certificate-authority-data: ${b64}`,
      'users:',
      '- name: tls-bootstrap-token-user',
      '  user:',
      `    token: ${token}`,
      'contexts:',
      '- name: bootstrap',
      '  context: {cluster: svc, user: tls-bootstrap-token-user}',
      'current-context: bootstrap',
      '',
    ].join('\n'),
  );
  return file;
}

async function createToken(api: RunningApiServer, id: string, secret: string, expiration: Date): Promise<void> {
  const ns = await call(api.admin, 'POST', `${api.url}/api/v1/namespaces`, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'svc-system' } });
  if (ns.status !== 201 && ns.status !== 200 && ns.status !== 409) throw new Error(`namespace: ${ns.status} ${ns.text}`);
  const r = await call(api.admin, 'POST', `${api.url}/api/v1/namespaces/svc-system/secrets`, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `bootstrap-token-${id}`, namespace: 'svc-system' },
    type: 'bootstrap.svc.io/token',
    stringData: {
      'token-id': id,
      'token-secret': secret,
      expiration: expiration.toISOString().replace(/\.\d+Z$/, 'Z'),
      'usage-bootstrap-authentication': 'true',
      'usage-bootstrap-signing': 'true',
    },
  });
  if (r.status !== 201 && r.status !== 200) throw new Error(`secret: ${r.status} ${r.text}`);
}

test('joins with a bootstrap token: CSR approved and signed, identity stored, node Ready under its own certificate', async (t) => {
  const api = await startApiServer({ args: ['--enable-bootstrap-token-auth'] });
  const dir = mkdtempSync(join(tmpdir(), 'svc-node-boot-'));
  await createToken(api, TOKEN_ID, TOKEN_SECRET, new Date(Date.now() + 3600_000));
  const kubeconfig = join(dir, 'kubelet.conf');
  const agent = startAgent({
    dir,
    nodeName: 'e2e-boot-1',
    kubeconfig,
    bootstrapKubeconfig: bootstrapKubeconfig(api, join(dir, 'bootstrap.conf'), `${TOKEN_ID}.${TOKEN_SECRET}`),
  });
  try {
    await agent.waitForLog('node registered and heartbeating', 60_000);
    t.is((await agent.waitForLog('client identity ready'))['origin'], 'bootstrap');
    const certDir = join(dir, 'root', 'pki');
    t.true(lstatSync(join(certDir, 'svc-node-client-current.pem')).isSymbolicLink());
    t.false(existsSync(join(certDir, 'svc-node-client.key.tmp')));
    t.true(readFileSync(kubeconfig, 'utf8').includes(join(certDir, 'svc-node-client-current.pem')));

    const csrs = await kubectlJson(api.kubeconfig, ['get', 'certificatesigningrequests.certificates.svc.io']);
    const mine = (csrs['items'] as any[]).filter((c) => c.spec.username === `system:bootstrap:${TOKEN_ID}`);
    t.is(mine.length, 1);
    t.regex(mine[0].metadata.name, /^node-csr-/);
    t.is(mine[0].spec.signerName, 'svc.io/kube-apiserver-client-kubelet');
    t.true((mine[0].status.conditions as any[]).some((c) => c.type === 'Approved' && c.status === 'True'));
    t.truthy(mine[0].status.certificate);

    const node = await eventually('node Ready', async () => {
      const n = await kubectlJson(api.kubeconfig, ['get', 'node', 'e2e-boot-1']);
      return (n['status'].conditions as any[]).some((c) => c.type === 'Ready' && c.status === 'True') ? n : undefined;
    });
    t.is(node['metadata'].name, 'e2e-boot-1');
    t.is(await agent.stop('SIGTERM'), 0);

    // A restart uses the stored identity: no second CSR.
    const again = startAgent({ dir, nodeName: 'e2e-boot-1', kubeconfig, bootstrapKubeconfig: join(dir, 'bootstrap.conf') });
    try {
      t.is((await again.waitForLog('client identity ready'))['origin'], 'kubeconfig');
      await again.waitForLog('node registered and heartbeating');
      const after = await kubectlJson(api.kubeconfig, ['get', 'certificatesigningrequests.certificates.svc.io']);
      t.is((after['items'] as any[]).length, csrs['items'].length);
      t.is(await again.stop('SIGTERM'), 0);
    } finally {
      await again.stop('SIGKILL');
    }
  } finally {
    await agent.stop('SIGKILL');
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('rotates a short-lived client certificate with its own identity and keeps heartbeating', async (t) => {
  // Certificates valid 60 s (the signer backdates notBefore by 60 s): rotation falls 24-48 s after issue.
  const api = await startApiServer({ args: ['--enable-bootstrap-token-auth', '--cluster-signing-duration=60s'] });
  const dir = mkdtempSync(join(tmpdir(), 'svc-node-rot-'));
  await createToken(api, 'e2erot', TOKEN_SECRET, new Date(Date.now() + 3600_000));
  const agent = startAgent({
    dir,
    nodeName: 'e2e-rot-1',
    kubeconfig: join(dir, 'kubelet.conf'),
    bootstrapKubeconfig: bootstrapKubeconfig(api, join(dir, 'bootstrap.conf'), `e2erot.${TOKEN_SECRET}`),
    configLines: ['nodeLeaseDurationSeconds: 4'],
  });
  try {
    await agent.waitForLog('node registered and heartbeating', 60_000);
    const rotated = await agent.waitForLog('rotated the client certificate', 90_000);
    t.truthy(rotated['notAfter']);
    const csrs = (await kubectlJson(api.kubeconfig, ['get', 'certificatesigningrequests.certificates.svc.io']))['items'] as any[];
    t.deepEqual(csrs.map((c) => c.spec.username).sort(), ['system:bootstrap:e2erot', 'system:node:e2e-rot-1'], 'the renewal was requested by the node itself');
    // Heartbeats go on under the new certificate.
    const before = (await kubectlJson(api.kubeconfig, ['get', 'lease', '-n', 'svc-node-lease', 'e2e-rot-1']))['spec'].renewTime;
    await eventually('a renewal after rotation', async () => {
      const l = await kubectlJson(api.kubeconfig, ['get', 'lease', '-n', 'svc-node-lease', 'e2e-rot-1']);
      return l['spec'].renewTime !== before ? true : undefined;
    });
    t.is(agent.logs.filter((l) => l['msg'] === 'failed to renew node lease; will retry').length, 0);
    t.is(await agent.stop('SIGTERM'), 0);
  } finally {
    await agent.stop('SIGKILL');
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a forged or expired bootstrap token stops start-up with a clear message', async (t) => {
  const api = await startApiServer({ args: ['--enable-bootstrap-token-auth'] });
  const dir = mkdtempSync(join(tmpdir(), 'svc-node-boot-'));
  await createToken(api, 'e2eold', 'ffffffffffffffff', new Date(Date.now() - 3600_000));
  try {
    for (const [name, token] of [
      ['forged', `${TOKEN_ID}.aaaaaaaaaaaaaaaa`],
      ['expired', 'e2eold.ffffffffffffffff'],
    ] as const) {
      const d = join(dir, name);
      const agent = startAgent({ dir: d, nodeName: `e2e-${name}`, kubeconfig: join(d, 'kubelet.conf'), bootstrapKubeconfig: bootstrapKubeconfig(api, join(dir, `${name}.conf`), token) });
      t.is(await agent.exited, 1, agent.output());
      const line = agent.logs.find((l) => l['msg'] === 'svc-node cannot start');
      t.truthy(line, agent.output());
      t.regex(String(line!['error']), /401 Unauthorized\): the token may be expired, deleted or wrong/);
      t.notRegex(agent.output(), /at .*\.js:\d+/);
      t.false(existsSync(join(d, 'kubelet.conf')));
    }
  } finally {
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
