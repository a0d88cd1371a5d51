/**
 * A real svc-node process (CRI simulator) with dns.enabled joins with a bootstrap token, so its
 * informers run under the node's own identity (Node authorizer), and answers a Service created
 * afterwards on its loopback DNS port, asked with dig. Nothing is queried outside 127.0.0.1.
 */
import test, { type ExecutionContext } from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServer } from '../../helpers/apiserver-process';
import { freePort } from '../../helpers/free-port';
import { call } from '../../helpers/http';
import { kubectl, run } from '../../helpers/real-clients';
import { startAgent } from '../agent/agent-process';

const TOKEN = { id: 'd0d0d0', secret: '0123456789abcdef' };

/** svc-apiserver and a svc-node joined with a bootstrap token, its cluster DNS on a free loopback port once listening. */
async function startDnsAgent(t: ExecutionContext, nodeName: string, dnsFields = '') {
  const api = await startApiServer({ args: ['--enable-bootstrap-token-auth'] });
  const dir = mkdtempSync(join(tmpdir(), 'svc-node-dns-'));
  t.teardown(async () => {
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  await call(api.admin, 'POST', `${api.url}/api/v1/namespaces`, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'svc-system' } });
  const secret = await call(api.admin, 'POST', `${api.url}/api/v1/namespaces/svc-system/secrets`, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `bootstrap-token-${TOKEN.id}`, namespace: 'svc-system' },
    type: 'bootstrap.svc.io/token',
    stringData: { 'token-id': TOKEN.id, 'token-secret': TOKEN.secret, 'usage-bootstrap-authentication': 'true', 'usage-bootstrap-signing': 'true' },
  });
  t.is(secret.status, 201, secret.text);
  const bootstrap = join(dir, 'bootstrap.conf');
  writeFileSync(
    bootstrap,
    `apiVersion: v1\nkind: Config\nclusters:\n- name: svc\n  cluster: {server: "${api.url}", certificate-authority-data: ${Buffer.from(api.caPem).toString('base64')}}\nusers:\n- name: b\n  user: {token: ${TOKEN.id}.${TOKEN.secret}}\ncontexts:\n- name: b\n  context: {cluster: svc, user: b}\ncurrent-context: b\n`,
  );
  const resolvConf = join(dir, 'resolv.conf');
  writeFileSync(resolvConf, 'nameserver 127.0.0.1\n');
  const port = await freePort();
  const agent = startAgent({
    dir,
    nodeName,
    kubeconfig: join(dir, 'kubelet.conf'),
    bootstrapKubeconfig: bootstrap,
    configLines: ['clusterDomain: cluster.local', 'clusterDNS: [127.0.0.1]', `resolvConf: ${resolvConf}`, `dns: {enabled: true, port: ${port}${dnsFields}}`],
    args: [`--port=${await freePort()}`],
  });
  t.teardown(async () => {
    agent.proc.kill('SIGTERM');
    await agent.exited;
  });
  await agent.waitForLog('cluster DNS listening', 60_000);
  return { api, agent, port };
}

test('svc-node serves cluster DNS under its node identity: a new Service resolves on its DNS port', async (t) => {
  const { api, agent, port } = await startDnsAgent(t, 'e2e-dns-1');
  const created = await kubectl(api.kubeconfig, ['create', 'service', 'clusterip', 'web', '--tcp=80:8080']);
  t.is(created.code, 0, created.stderr);
  const clusterIP = (await kubectl(api.kubeconfig, ['get', 'service', 'web', '-o', 'jsonpath={.spec.clusterIP}'])).stdout.trim();
  let got = '';
  for (let i = 0; i < 50 && got !== clusterIP; i++) {
    const r = await run('/usr/bin/dig', ['@127.0.0.1', '-p', String(port), '+time=2', '+tries=1', '+short', 'web.default.svc.cluster.local', 'A'], { timeoutMs: 10_000 });
    got = r.stdout.trim();
    if (got !== clusterIP) await new Promise((r) => setTimeout(r, 200));
  }
  t.is(got, clusterIP);
  t.false(agent.output().includes('"cluster DNS server stopped"'));
});

test('pods verified under the node identity: a pod name answers only once a pod of that namespace has the address', async (t) => {
  // Listening means the pod informer listed every pod of the cluster with the node's credentials (system:svc-node-network-policy).
  const { api, agent, port } = await startDnsAgent(t, 'e2e-dns-2', ', pods: verified');
  const dig = async (name: string) => (await run('/usr/bin/dig', ['@127.0.0.1', '-p', String(port), '+time=2', '+tries=1', '+noall', '+answer', '+comments', name, 'A'], { timeoutMs: 10_000 })).stdout;
  const podName = '10-77-0-9.default.pod.cluster.local';
  t.regex(await dig(podName), /status: NXDOMAIN/, 'no pod has the address yet (pods insecure would answer it)');
  // A pod of another node: this agent never runs it; its address is set as that node's kubelet would.
  const pod = await call(api.admin, 'POST', `${api.url}/api/v1/namespaces/default/pods`, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { nodeName: 'elsewhere', containers: [{ name: 'c', image: 'busybox' }] } });
  t.is(pod.status, 201, pod.text);
  const st = await call(api.admin, 'PATCH', `${api.url}/api/v1/namespaces/default/pods/p/status`, { status: { podIP: '10.77.0.9', podIPs: [{ ip: '10.77.0.9' }] } }, { 'content-type': 'application/merge-patch+json' });
  t.is(st.status, 200, st.text);
  let out = '';
  for (let i = 0; i < 50 && !/status: NOERROR/.test(out); i++) {
    out = await dig(podName);
    if (!/status: NOERROR/.test(out)) await new Promise((r) => setTimeout(r, 200));
  }
  t.regex(out, /\t10\.77\.0\.9\s*$/m);
  t.regex(await dig('10-77-0-9.other.pod.cluster.local'), /status: NXDOMAIN/, 'the pod is in default, not other');
  t.false(agent.output().includes('"cluster DNS server stopped"'));
});
