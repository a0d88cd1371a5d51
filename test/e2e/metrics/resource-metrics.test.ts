/**
 * Resource metrics end to end, with real processes: a real svc-apiserver (scraping every second)
 * and a real svc-node on the CRI simulator whose pods report the usage their annotations set. The
 * agent's /stats/summary and /metrics/resource are 403 for a user without nodes/stats and
 * nodes/metrics; `kubectl top node` and `kubectl top pod --containers` show the simulated usage
 * through metrics.k8s.io.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import type { Agent } from 'undici';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { eventually } from '../agent/agent-process';
import { callAgent, noCertDispatcher, runPod, startNode, type NodeUnderTest } from '../checkpoint/checkpoint-env';

const NODE = 'e2e-metrics';
const TOKENS = { nobody: 'nobody-token-0123456789', stats: 'stats-token-0123456789' } as const;

interface Env {
  api: RunningApiServer;
  dir: string;
  node: NodeUnderTest;
  bare: Agent;
}
let env: Env | undefined;
function e(): Env {
  if (!env) throw new Error('the environment did not start (see the before hook)');
  return env;
}

export function kubectl(kubeconfig: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('/usr/bin/kubectl', ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8', timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

test.before(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-metrics-e2e-'));
  const tokens = path.join(dir, 'tokens.csv');
  writeFileSync(tokens, Object.entries(TOKENS).map(([user, token]) => `${token},${user},uid-${user}`).join('\n') + '\n');
  const api = await startApiServer({ args: [`--token-auth-file=${tokens}`, '--metric-resolution=1s'] });
  let node: NodeUnderTest | undefined;
  try {
    node = await startNode(api, path.join(dir, 'node'), NODE);
    const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'e2e-stats' }, rules: [{ apiGroups: [''], resources: ['nodes/stats', 'nodes/metrics'], verbs: ['get'] }] };
    const binding = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'e2e-stats' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'e2e-stats' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'stats' }] };
    for (const o of [role, binding]) {
      const r = await kubectlIn(api.kubeconfig, ['create', '-f', '-'], JSON.stringify(o));
      if (r.code !== 0) throw new Error(r.stderr);
    }
    await runPod(api, NODE, 'busy', 'svc.local/busybox:latest', {
      containers: [
        { name: 'app', image: 'svc.local/busybox:latest', command: ['sleep', '3600'] },
        { name: 'side', image: 'svc.local/busybox:latest', command: ['sleep', '3600'] },
      ],
    });
    env = { api, dir, node, bare: noCertDispatcher() };
  } catch (err) {
    await node?.agent.stop('SIGKILL');
    await api.stop();
    throw err;
  }
});

function kubectlIn(kubeconfig: string, args: string[], input: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = execFile('/usr/bin/kubectl', ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8', timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
    p.stdin!.end(input);
  });
}

test.after.always(async () => {
  if (!env) return;
  await env.node.agent.stop('SIGKILL');
  await env.bare.close();
  await env.api.stop();
  rmSync(env.dir, { recursive: true, force: true });
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

for (const endpoint of ['/stats/summary', '/metrics/resource']) {
  test(`agent ${endpoint}: 403 for a user without the sub-resource, 200 with it`, async (t) => {
    const { node, bare } = e();
    const denied = await callAgent(node.port, endpoint, bare, bearer(TOKENS.nobody), 'GET');
    t.is(denied.status, 403);
    t.like(denied.body, { kind: 'Status', reason: 'Forbidden' });
    const ok = await callAgent(node.port, endpoint, bare, bearer(TOKENS.stats), 'GET');
    t.is(ok.status, 200, JSON.stringify(ok.body));
  });
}

test('agent /stats/summary and /metrics/resource carry the pod and its containers', async (t) => {
  const { node, bare } = e();
  const s = await callAgent(node.port, '/stats/summary', bare, bearer(TOKENS.stats), 'GET');
  t.is((s.body['node'] as { nodeName: string }).nodeName, NODE);
  const pods = s.body['pods'] as Array<{ podRef: { name: string }; containers: Array<{ name: string; cpu?: { usageNanoCores?: number } }> }>;
  const busy = pods.find((p) => p.podRef.name === 'busy');
  t.deepEqual(busy?.containers.map((c) => c.name).sort(), ['app', 'side']);
  const m = await callAgent(node.port, '/metrics/resource', bare, bearer(TOKENS.stats), 'GET');
  t.regex(String(m.body['raw']), /^container_memory_working_set_bytes\{container="app",namespace="default",pod="busy"\} \S+ \d+$/m);
  t.regex(String(m.body['raw']), /^resource_scrape_error 0$/m);
});

test('kubectl top node and kubectl top pod --containers read metrics.k8s.io', async (t) => {
  const { api } = e();
  const nodes = await eventually('kubectl top node', async () => {
    const r = await kubectl(api.kubeconfig, ['top', 'node', '--no-headers']);
    if (r.code !== 0) throw new Error(r.stderr);
    return r.stdout.includes(NODE) ? r.stdout : undefined;
  }, 60_000, 500);
  t.regex(nodes, new RegExp(`^${NODE}\\s+\\d+m\\s+\\d+%\\s+\\d+Mi\\s+\\d+%`, 'm'));
  const pods = await eventually('kubectl top pod', async () => {
    const r = await kubectl(api.kubeconfig, ['top', 'pod', 'busy', '--containers', '--no-headers']);
    if (r.code !== 0) throw new Error(r.stderr);
    return r.stdout;
  }, 30_000, 500);
  // The simulator's default usage: 10m of CPU and a 4 MiB working set per container.
  t.regex(pods, /^busy\s+app\s+10m\s+4Mi\s*$/m);
  t.regex(pods, /^busy\s+side\s+10m\s+4Mi\s*$/m);
  const raw = await kubectl(api.kubeconfig, ['get', '--raw', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/busy']);
  t.like(JSON.parse(raw.stdout), { kind: 'PodMetrics', apiVersion: 'metrics.k8s.io/v1beta1', metadata: { name: 'busy', namespace: 'default' }, window: '1s' });
  const missing = await kubectl(api.kubeconfig, ['get', '--raw', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/nope']);
  t.regex(missing.stderr, /podmetrics.metrics.k8s.io "nope" not found|NotFound/);
});
