import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServer } from '../../helpers/apiserver-process';
import { freePort } from '../../helpers/free-port';
import { eventually, kubectlJson, startAgent } from './agent-process';

// Fast heartbeats (Lease every 1 s) so a 6 s grace period is meaningful.
const fastHeartbeats = ['nodeLeaseDurationSeconds: 4', 'nodeStatusUpdateFrequency: 1s'];

type Node = { metadata: { name: string; labels: Record<string, string> }; spec: { taints?: { key: string; effect: string }[] }; status: { conditions: { type: string; status: string }[]; nodeInfo: Record<string, string> } };
const ready = (n: Node) => n.status.conditions.find((c) => c.type === 'Ready')?.status;
const taints = (n: Node) => (n.spec.taints ?? []).map((x) => `${x.key}:${x.effect}`);

test('a real agent registers, keeps its Lease fresh, goes Unknown and tainted when killed, and heals when restarted', async (t) => {
  const api = await startApiServer({ args: ['--node-monitor-grace-period=6s'] });
  const dir = mkdtempSync(join(tmpdir(), 'svc-node-e2e-'));
  const kc = api.kubeconfig;
  let agent = startAgent({ dir, nodeName: 'e2e-node-1', kubeconfig: kc, configLines: fastHeartbeats });
  try {
    await agent.waitForLog('node registered and heartbeating');
    const node = await eventually('node Ready', async () => {
      const n = await kubectlJson<Node>(kc, ['get', 'node', 'e2e-node-1']);
      return ready(n) === 'True' ? n : undefined;
    });
    t.is(node.metadata.labels['svc.io/hostname'], 'e2e-node-1');
    t.is(node.metadata.labels['svc.io/os'], 'linux');
    t.truthy(node.metadata.labels['svc.io/arch']);
    t.regex(node.status.nodeInfo['containerRuntimeVersion'], /^svc-sim:\/\/\d/);
    t.regex(node.status.nodeInfo['kubeletVersion'], /^v\d+\.\d+\.\d+/);

    const lease = await kubectlJson(kc, ['get', 'lease', '-n', 'svc-node-lease', 'e2e-node-1']);
    t.is(lease['spec'].holderIdentity, 'e2e-node-1');
    t.is(lease['metadata'].ownerReferences[0].kind, 'Node');
    t.is(lease['metadata'].ownerReferences[0].uid, (await kubectlJson(kc, ['get', 'node', 'e2e-node-1']))['metadata'].uid);
    const first = lease['spec'].renewTime as string;
    await eventually('the Lease renewTime to advance', async () => {
      const l = await kubectlJson(kc, ['get', 'lease', '-n', 'svc-node-lease', 'e2e-node-1']);
      return l['spec'].renewTime !== first ? true : undefined;
    });

    agent.proc.kill('SIGKILL');
    await agent.exited;
    const lost = await eventually(
      'node Unknown and tainted unreachable',
      async () => {
        const n = await kubectlJson<Node>(kc, ['get', 'node', 'e2e-node-1']);
        return ready(n) === 'Unknown' && taints(n).includes('node.svc.io/unreachable:NoExecute') ? n : undefined;
      },
      45_000,
    );
    t.is(ready(lost), 'Unknown');

    // The lock of a killed agent is free at once; the restarted agent reconciles the existing Node.
    agent = startAgent({ dir, nodeName: 'e2e-node-1', kubeconfig: kc, configLines: fastHeartbeats });
    await agent.waitForLog('node already registered; reconciled it');
    const healed = await eventually(
      'node Ready again without the taint',
      async () => {
        const n = await kubectlJson<Node>(kc, ['get', 'node', 'e2e-node-1']);
        return ready(n) === 'True' && !taints(n).some((x) => x.startsWith('node.svc.io/unreachable')) ? n : undefined;
      },
      45_000,
    );
    t.is(ready(healed), 'True');
    t.is(await agent.stop('SIGTERM'), 0);
  } finally {
    await agent.stop('SIGKILL');
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an agent started before the API server keeps retrying and registers once it is up', async (t) => {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'svc-node-e2e-'));
  const dataDir = join(dir, 'apiserver');
  // The admin kubeconfig only exists once the server has run; make the server once to get it, then stop it.
  const first = await startApiServer({ dataDir, port });
  await first.stop();
  const agent = startAgent({ dir: join(dir, 'agent'), nodeName: 'e2e-late', kubeconfig: join(dataDir, 'admin.kubeconfig'), configLines: fastHeartbeats });
  let api: Awaited<ReturnType<typeof startApiServer>> | undefined;
  try {
    const line = await agent.waitForLog('API server unreachable; retrying');
    t.is(line['node'], 'e2e-late');
    t.regex(String(line['error']), /ECONNREFUSED/);
    api = await startApiServer({ dataDir, port });
    await agent.waitForLog('node registered and heartbeating', 30_000);
    const n = await kubectlJson<Node>(api.kubeconfig, ['get', 'node', 'e2e-late']);
    t.is(n.metadata.name, 'e2e-late');
    t.is(await agent.stop('SIGTERM'), 0);
  } finally {
    await agent.stop('SIGKILL');
    await api?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
