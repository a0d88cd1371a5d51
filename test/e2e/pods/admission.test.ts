/**
 * Node-side admission end to end on the CRI simulator: a real svc-apiserver and a real svc-node
 * (sim://) with maxPods 2. Two pods run; the third pod bound to the node is refused by the agent:
 * phase Failed, reason OutOfpods and upstream's message, and it never gets a container.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { eventually, kubectlJson, kubectlStdin, startAgent, type AgentProcess } from '../agent/agent-process';

const NODE = 'e2e-admission';

type PodJson = { status: { phase?: string; reason?: string; message?: string; containerStatuses?: unknown[] } };

let api: RunningApiServer | undefined;
let agent: AgentProcess | undefined;
let dir: string | undefined;

test.before(async () => {
  api = await startApiServer();
  dir = mkdtempSync(path.join(tmpdir(), 'svc-admission-e2e-'));
  agent = startAgent({ dir, nodeName: NODE, kubeconfig: api.kubeconfig, configLines: ['maxPods: 2', 'enableServer: false'] });
  await agent.waitForLog('node registered and heartbeating', 90_000);
});

test.after.always(async () => {
  await agent?.stop('SIGKILL');
  await api?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function createPod(name: string): Promise<void> {
  await kubectlStdin(
    api!.kubeconfig,
    ['create', '-f', '-'],
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: { nodeName: NODE, containers: [{ name: 'c', image: 'svc.local/busybox:latest', imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }] },
    }),
  );
}

const pod = (name: string) => kubectlJson<PodJson>(api!.kubeconfig, ['get', 'pod', name]);

test.serial('a pod beyond maxPods is Failed with OutOfpods; the admitted ones run', async (t) => {
  const n = await kubectlJson<{ status: { allocatable: Record<string, string> } }>(api!.kubeconfig, ['get', 'node', NODE]);
  t.is(n.status.allocatable['pods'], '2');
  await createPod('first');
  await createPod('second');
  for (const name of ['first', 'second']) {
    await eventually(`${name} Running`, async () => ((await pod(name)).status.phase === 'Running' ? true : undefined), 60_000);
  }
  await createPod('third');
  const third = await eventually('third Failed', async () => {
    const p = await pod('third');
    return p.status.phase === 'Failed' ? p : undefined;
  }, 60_000);
  t.is(third.status.reason, 'OutOfpods');
  t.is(third.status.message, "Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2");
  t.deepEqual(third.status.containerStatuses ?? [], []);
  t.is((await pod('first')).status.phase, 'Running');
  t.is((await pod('second')).status.phase, 'Running');
});
