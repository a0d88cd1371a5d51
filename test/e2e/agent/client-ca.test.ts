/**
 * Issue 17, item 6: a node started with a plain kubeconfig (the cluster's CA and its client
 * certificate as file references, no bootstrap) and no authentication.x509.clientCAFile trusts
 * the CA of that kubeconfig for client certificates, as kubeadm points the kubelet's
 * clientCAFile at the cluster CA: `kubectl logs` (the API server's kubelet-client certificate)
 * works. With clientCAFile naming another CA it is refused, which shows where the trust came from.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { createCA } from '../../../apiserver/pki/certs';
import { startApiServer } from '../../helpers/apiserver-process';
import { kubectl } from '../../helpers/real-clients';
import { runPod, startNode } from '../checkpoint/checkpoint-env';

test('kubectl logs reaches a node that joined with a plain kubeconfig and no client CA configured; another clientCAFile refuses it', async (t) => {
  t.timeout(180_000);
  const dir = mkdtempSync(join(tmpdir(), 'svc-client-ca-'));
  const api = await startApiServer();
  const nodes: Array<Awaited<ReturnType<typeof startNode>>> = [];
  try {
    const pki = join(api.dataDir, 'pki');
    const kubeconfig = join(dir, 'node.kubeconfig');
    writeFileSync(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        `- name: svc\n  cluster:\n    server: ${api.url}\n    certificate-authority: ${join(pki, 'ca.crt')}`,
        'users:',
        `- name: node\n  user:\n    client-certificate: ${join(pki, 'admin.crt')}\n    client-key: ${join(pki, 'admin.key')}`,
        'contexts:',
        '- name: node\n  context:\n    cluster: svc\n    user: node',
        'current-context: node',
        '',
      ].join('\n'),
    );
    const plain = await startNode({ ...api, kubeconfig }, join(dir, 'plain'), 'plain-node');
    nodes.push(plain);
    await runPod(api, 'plain-node', 'on-plain');
    const logs = await kubectl(api.kubeconfig, ['logs', 'on-plain']);
    t.is(logs.code, 0, logs.stderr);

    const otherCa = join(dir, 'other-ca.crt');
    writeFileSync(otherCa, (await createCA('unrelated-ca', new Date())).certPem);
    const strict = await startNode({ ...api, kubeconfig }, join(dir, 'strict'), 'strict-node', [`authentication:\n  x509:\n    clientCAFile: ${otherCa}`]);
    nodes.push(strict);
    await runPod(api, 'strict-node', 'on-strict');
    const refused = await kubectl(api.kubeconfig, ['logs', 'on-strict']);
    t.not(refused.code, 0);
    t.regex(refused.stderr, /client certificate is not signed by the client CA|Unauthorized|401/);
  } finally {
    for (const n of nodes) await n.agent.stop('SIGKILL');
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
