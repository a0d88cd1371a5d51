/**
 * Resource metrics end to end, with real processes: a real svc-apiserver (scraping every second)
 * and a real svc-node on the CRI simulator whose pods report the usage their annotations set. The
 * agent's /stats/summary and /metrics/resource are 403 for a user without nodes/stats and
 * nodes/metrics; `kubectl top node` and `kubectl top pod --containers` show the simulated usage
 * through metrics.k8s.io; `kubectl autoscale` makes an HPA that scales a Deployment whose pods use
 * twice their CPU request up to its maximum, and `kubectl get hpa` shows upstream's columns.
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
const TOKENS = { nobody: 'nobody-token-0123456789', stats: 'stats-token-0123456789', viewer: 'viewer-token-0123456789' } as const;

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

export function kubectl(kubeconfig: string, args: string[], binary = '/usr/bin/kubectl'): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(binary, ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8', timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

test.before(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-metrics-e2e-'));
  const tokens = path.join(dir, 'tokens.csv');
  writeFileSync(tokens, Object.entries(TOKENS).map(([user, token]) => `${token},${user},uid-${user}`).join('\n') + '\n');
  const api = await startApiServer({ args: [`--token-auth-file=${tokens}`, '--metric-resolution=1s', '--horizontal-pod-autoscaler-sync-period=1s'] });
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

/** A kubeconfig for the API server authenticating with a bearer token. */
function tokenKubeconfig(api: RunningApiServer, dir: string, user: string, token: string): string {
  const file = path.join(dir, `${user}.kubeconfig`);
  const cluster = { server: api.url, 'certificate-authority-data': Buffer.from(api.caPem).toString('base64') };
  const config = { apiVersion: 'v1', kind: 'Config', clusters: [{ name: 'svc', cluster }], users: [{ name: user, user: { token } }], contexts: [{ name: 'svc', context: { cluster: 'svc', user } }], 'current-context': 'svc' };
  writeFileSync(file, JSON.stringify(config), { mode: 0o600 });
  return file;
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

test('metrics.k8s.io is authorized as any resource: 403 without a grant; the view role (system:aggregated-metrics-reader) allows kubectl top pod', async (t) => {
  const { api, dir } = e();
  const nobody = tokenKubeconfig(api, dir, 'nobody', TOKENS.nobody);
  const denied = await kubectl(nobody, ['top', 'pod', 'busy']);
  t.not(denied.code, 0);
  t.regex(denied.stderr, /forbidden/i);
  const binding = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'viewer', namespace: 'default' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'viewer' }] };
  const made = await kubectlIn(api.kubeconfig, ['create', '-f', '-'], JSON.stringify(binding));
  t.is(made.code, 0, made.stderr);
  const viewer = tokenKubeconfig(api, dir, 'viewer', TOKENS.viewer);
  const out = await eventually('kubectl top pod as a viewer', async () => {
    const r = await kubectl(viewer, ['top', 'pod', 'busy', '--no-headers']);
    if (r.code !== 0) throw new Error(r.stderr);
    return r.stdout;
  }, 30_000, 500);
  t.regex(out, /^busy\s+\d+m\s+\d+Mi\s*$/m);
});

test('kubectl autoscale: the HPA scales a loaded Deployment up to --max; kubectl get hpa shows it', async (t) => {
  const { api } = e();
  // Each pod uses 200m against a 100m request: 200% of request against a 50% target.
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'loaded', namespace: 'default' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'loaded' } },
      template: {
        metadata: { labels: { app: 'loaded' }, annotations: { 'sim.svc.io/cpu-millicores': '200' } },
        spec: { nodeName: NODE, terminationGracePeriodSeconds: 1, containers: [{ name: 'app', image: 'svc.local/busybox:latest', command: ['sleep', '3600'], resources: { requests: { cpu: '100m' } } }] },
      },
    },
  };
  const created = await kubectlIn(api.kubeconfig, ['create', '-f', '-'], JSON.stringify(deployment));
  t.is(created.code, 0, created.stderr);
  const auto = await kubectl(api.kubeconfig, ['autoscale', 'deployment', 'loaded', '--cpu-percent=50', '--min=1', '--max=5']);
  t.is(auto.code, 0, auto.stderr);
  t.regex(auto.stdout, /horizontalpodautoscaler.autoscaling\/loaded autoscaled/);
  const scaled = await eventually('the Deployment at 5 replicas', async () => {
    const r = await kubectl(api.kubeconfig, ['get', 'deployment', 'loaded', '-o', 'json']);
    const d = JSON.parse(r.stdout) as { spec: { replicas: number } };
    return d.spec.replicas === 5 ? d : undefined;
  }, 90_000, 500);
  t.is(scaled.spec.replicas, 5);
  const hpa = await eventually('the HPA status', async () => {
    const r = await kubectl(api.kubeconfig, ['get', '--raw', '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/loaded']);
    const h = JSON.parse(r.stdout) as { status?: { desiredReplicas?: number; currentMetrics?: unknown[]; conditions?: Array<{ type: string; status: string; reason: string }> } };
    return h.status?.desiredReplicas === 5 && h.status.currentMetrics?.length ? h : undefined;
  }, 30_000, 500);
  t.like(hpa.status?.conditions?.find((c) => c.type === 'ScalingActive'), { status: 'True', reason: 'ValidMetricFound' });
  t.like(hpa.status?.conditions?.find((c) => c.type === 'ScalingLimited'), { status: 'True', reason: 'TooManyReplicas' });
  const table = await kubectl(api.kubeconfig, ['get', 'hpa', 'loaded']);
  t.regex(table.stdout, /^NAME\s+REFERENCE\s+TARGETS\s+MINPODS\s+MAXPODS\s+REPLICAS\s+AGE/m);
  t.regex(table.stdout, /^loaded\s+Deployment\/loaded\s+cpu: \d+%\/50%\s+1\s+5\s+\d+\s+/m);
  const events = await kubectl(api.kubeconfig, ['get', 'events', '--field-selector', 'involvedObject.name=loaded,reason=SuccessfulRescale', '-o', 'json']);
  const messages = (JSON.parse(events.stdout) as { items: Array<{ message: string }> }).items.map((i) => i.message);
  t.true(messages.some((m) => /^New size: \d+; reason: cpu resource utilization \(percentage of request\) above target$/.test(m)), JSON.stringify(messages));
  const described = await kubectl(api.kubeconfig, ['describe', 'hpa', 'loaded']);
  t.is(described.code, 0, described.stderr);
  t.regex(described.stdout, /resource cpu on pods\s+\(as a percentage of request\):\s+\d+% \(\d+m\) \/ 50%/);
  t.regex(described.stdout, /SuccessfulRescale/);
  // The v1 view of the same object.
  const v1 = await kubectl(api.kubeconfig, ['get', '--raw', '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/loaded']);
  t.like(JSON.parse(v1.stdout), { apiVersion: 'autoscaling/v1', spec: { targetCPUUtilizationPercentage: 50, minReplicas: 1, maxReplicas: 5 } });
});

test('kubectl 1.27 autoscale and get hpa work too', async (t) => {
  const { api } = e();
  const old = '/usr/lib/google-cloud-sdk/bin/kubectl.1.27';
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'older', namespace: 'default' },
    spec: { replicas: 1, selector: { matchLabels: { app: 'older' } }, template: { metadata: { labels: { app: 'older' } }, spec: { nodeName: NODE, containers: [{ name: 'app', image: 'svc.local/busybox:latest', command: ['sleep', '3600'], resources: { requests: { cpu: '100m' } } }] } } },
  };
  t.is((await kubectlIn(api.kubeconfig, ['create', '-f', '-'], JSON.stringify(deployment))).code, 0);
  const auto = await kubectl(api.kubeconfig, ['autoscale', 'deployment', 'older', '--cpu-percent=80', '--min=1', '--max=3'], old);
  t.is(auto.code, 0, auto.stderr);
  const raw = await kubectl(api.kubeconfig, ['get', '--raw', '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/older']);
  t.like(JSON.parse(raw.stdout), { spec: { minReplicas: 1, maxReplicas: 3, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }] } });
  const table = await kubectl(api.kubeconfig, ['get', 'hpa', 'older'], old);
  t.regex(table.stdout, /^older\s+Deployment\/older\s+/m);
});
