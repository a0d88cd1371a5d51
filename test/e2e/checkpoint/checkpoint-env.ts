/**
 * Shared set-up for the checkpoint e2e tests: a real svc-apiserver with a static token file
 * (a user allowed nodes/checkpoint by RBAC and one who is not) and helpers to start a real
 * svc-node serving its HTTPS API on loopback, create pods bound to it and call the endpoint.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Agent, request } from 'undici';
import type { RunningApiServer } from '../../helpers/apiserver-process';
import { freePort } from '../../helpers/free-port';
import { eventually, kubectlJson, kubectlStdin, startAgent, type AgentProcess } from '../agent/agent-process';

export const CHECKPOINTER_TOKEN = 'checkpointer-token-0123456789';
export const NOBODY_TOKEN = 'nobody-token-0123456789';

/** Writes the static token file for --token-auth-file. */
export function writeTokenFile(dir: string): string {
  const file = path.join(dir, 'tokens.csv');
  writeFileSync(file, `${CHECKPOINTER_TOKEN},checkpointer,uid-checkpointer\n${NOBODY_TOKEN},nobody,uid-nobody\n`);
  return file;
}

/** Grants user checkpointer create on nodes/checkpoint (and nothing else). */
export async function grantCheckpoint(api: RunningApiServer): Promise<void> {
  const role = { apiVersion: 'rbac.authorization.svc.io/v1', kind: 'ClusterRole', metadata: { name: 'node-checkpointer' }, rules: [{ apiGroups: [''], resources: ['nodes/checkpoint'], verbs: ['create'] }] };
  const binding = {
    apiVersion: 'rbac.authorization.svc.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'node-checkpointer' },
    roleRef: { apiGroup: 'rbac.authorization.svc.io', kind: 'ClusterRole', name: 'node-checkpointer' },
    subjects: [{ apiGroup: 'rbac.authorization.svc.io', kind: 'User', name: 'checkpointer' }],
  };
  for (const [resource, obj] of [['clusterroles', role], ['clusterrolebindings', binding]] as const) {
    const res = await request(`${api.url}/apis/rbac.authorization.svc.io/v1/${resource}`, {
      method: 'POST',
      dispatcher: api.admin,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(obj),
    });
    const text = await res.body.text();
    if (res.statusCode !== 201) throw new Error(`creating ${resource}: ${res.statusCode} ${text}`);
  }
}

export interface NodeUnderTest {
  agent: AgentProcess;
  port: number;
  rootDir: string;
}

/** Starts svc-node on loopback with its server on a free port; resolves once it heartbeats. */
export async function startNode(api: RunningApiServer, dir: string, nodeName: string, extra: string[] = []): Promise<NodeUnderTest> {
  const port = await freePort();
  const agent = startAgent({
    dir,
    nodeName,
    kubeconfig: api.kubeconfig,
    args: ['--node-ip=127.0.0.1'],
    configLines: ['nodeStatusUpdateFrequency: 1s', 'address: 127.0.0.1', `port: ${port}`, ...extra],
  });
  try {
    await agent.waitForLog('serving the agent API', 60_000);
    await agent.waitForLog('node registered and heartbeating', 60_000);
  } catch (e) {
    await agent.stop('SIGKILL');
    throw e;
  }
  return { agent, port, rootDir: path.join(dir, 'root') };
}

/** Creates a pod bound to the node with one container "app" and waits until it runs. */
export async function runPod(api: RunningApiServer, nodeName: string, name: string, image = 'svc.local/busybox:latest', extraSpec: Record<string, unknown> = {}): Promise<void> {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: { nodeName, terminationGracePeriodSeconds: 1, containers: [{ name: 'app', image, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }], ...extraSpec },
  };
  await kubectlStdin(api.kubeconfig, ['create', '-f', '-'], JSON.stringify(pod));
  await eventually(`pod ${name} running`, async () => {
    const p = await kubectlJson<{ status: { phase?: string; containerStatuses?: { state: { running?: object } }[] } }>(api.kubeconfig, ['get', 'pod', name]);
    return p.status.phase === 'Running' && p.status.containerStatuses?.[0]?.state.running ? true : undefined;
  }, 60_000, 300);
}

/** A dispatcher presenting the API server's admin certificate (system:masters); the agent's serving cert is self-signed. */
export function adminDispatcher(api: RunningApiServer): Agent {
  return new Agent({
    connect: { rejectUnauthorized: false, cert: readFileSync(path.join(api.dataDir, 'pki', 'admin.crt')), key: readFileSync(path.join(api.dataDir, 'pki', 'admin.key')) },
  });
}

export const noCertDispatcher = (): Agent => new Agent({ connect: { rejectUnauthorized: false } });

export interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/** POSTs to the agent; the answer body parsed as JSON. */
export async function callAgent(port: number, p: string, dispatcher: Agent, headers: Record<string, string> = {}, method = 'POST'): Promise<Answer> {
  const res = await request(`https://127.0.0.1:${port}${p}`, { method: method as 'POST', dispatcher, headers });
  const text = await res.body.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { raw: text };
  }
  return { status: res.statusCode, body };
}
