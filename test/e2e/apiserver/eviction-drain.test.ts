/**
 * `kubectl drain` against svc (issue 20, item 1): a real svc-apiserver and a real svc-node on the
 * CRI simulator. Two running pods are covered by a PodDisruptionBudget that first allows no
 * disruption: drain cordons the node and keeps retrying its evictions (kubectl prints the 429
 * and tries again every 5 s); once the budget is relaxed the disruption controller recomputes it
 * and drain completes. cordon and uncordon keep working. The eviction sub-resource's other
 * answers (several budgets: 500; no such pod: 404) are checked over plain HTTP.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { request } from 'undici';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { kubectl } from '../../helpers/real-clients';
import { eventually, kubectlStdin, startAgent, type AgentProcess } from '../agent/agent-process';

const NODE = 'e2e-drain';
const IMAGE = 'svc.local/busybox:latest';

let api: RunningApiServer | undefined;
let agent: AgentProcess | undefined;
let dir: string | undefined;

test.before(async () => {
  api = await startApiServer();
  dir = mkdtempSync(path.join(tmpdir(), 'svc-drain-e2e-'));
  agent = startAgent({ dir, nodeName: NODE, kubeconfig: api.kubeconfig, configLines: ['enableServer: false'] });
  await agent.waitForLog('node registered and heartbeating', 90_000);
});

test.after.always(async () => {
  await agent?.stop('SIGKILL');
  await api?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function call(method: 'GET' | 'POST', p: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await request(`${api!.url}${p}`, {
    method,
    dispatcher: api!.admin,
    headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: text ? JSON.parse(text) : undefined };
}

const k = async (...args: string[]) => {
  const r = await kubectl(api!.kubeconfig, args, { timeoutMs: 30_000 });
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
};

/** A pod on the node, controlled by the ConfigMap `owner` (drain refuses pods without a controller unless --force). */
function podManifest(name: string, ownerUid: string, labels: Record<string, string>, emptyDir = false): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: ownerUid, controller: true }] },
    spec: {
      nodeName: NODE,
      terminationGracePeriodSeconds: 2,
      containers: [{ name: 'app', image: IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'], ...(emptyDir ? { volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }] } : {}) }],
      ...(emptyDir ? { volumes: [{ name: 'scratch', emptyDir: {} }] } : {}),
    },
  });
}

async function ready(name: string): Promise<boolean | undefined> {
  const p = (await call('GET', `/api/v1/namespaces/default/pods/${name}`)).json;
  return p?.status?.phase === 'Running' && p.status.conditions?.some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True') ? true : undefined;
}

test.serial('drain: a budget that blocks, then allows; cordon and uncordon', async (t) => {
  await k('create', 'configmap', 'owner');
  const uid = (await call('GET', '/api/v1/namespaces/default/configmaps/owner')).json.metadata.uid as string;
  await kubectlStdin(api!.kubeconfig, ['create', '-f', '-'], podManifest('web-1', uid, { app: 'web' }));
  await kubectlStdin(api!.kubeconfig, ['create', '-f', '-'], podManifest('web-2', uid, { app: 'web' }, true));
  await eventually('web-1 ready', () => ready('web-1'), 60_000);
  await eventually('web-2 ready', () => ready('web-2'), 60_000);

  await kubectlStdin(api!.kubeconfig, ['create', '-f', '-'], JSON.stringify({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'web' }, spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } } }));
  const computed = await eventually('budget computed', async () => {
    const s = (await call('GET', '/apis/policy/v1/namespaces/default/poddisruptionbudgets/web')).json.status;
    return s?.observedGeneration === 1 && s.currentHealthy === 2 ? s : undefined;
  });
  t.like(computed, { expectedPods: 2, desiredHealthy: 2, disruptionsAllowed: 0 });
  t.regex(await k('get', 'pdb', 'web'), /web\s+2\s+N\/A\s+0\s/);

  let out = '';
  const drain = spawn('/usr/bin/kubectl', ['--kubeconfig', api!.kubeconfig, 'drain', NODE, '--ignore-daemonsets', '--delete-emptydir-data', '--timeout=120s']);
  drain.stdout.on('data', (d) => (out += d));
  drain.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((r) => drain.once('exit', (code) => r(code)));
  t.teardown(() => void drain.kill('SIGKILL'));

  // kubectl keeps retrying while the budget refuses, printing the 429 each time.
  await eventually('drain blocked by the budget', () => (out.includes("Cannot evict pod as it would violate the pod's disruption budget.") ? true : undefined), 60_000);
  t.is((await call('GET', `/api/v1/nodes/${NODE}`)).json.spec.unschedulable, true, 'cordoned first');
  t.truthy(await ready('web-1'));
  t.truthy(await ready('web-2'));

  await k('patch', 'pdb', 'web', '--type=merge', '-p', '{"spec":{"minAvailable":0}}');
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([exited, new Promise<string>((r) => (timer = setTimeout(() => r('timed out'), 100_000)))]);
  clearTimeout(timer);
  t.is(code, 0, out);
  t.regex(out, /evicting pod default\/web-1/);
  t.regex(out, /pod\/web-1 evicted/);
  t.regex(out, /pod\/web-2 evicted/);
  t.regex(out, new RegExp(`node/${NODE} drained`));
  t.is((await call('GET', '/api/v1/namespaces/default/pods/web-1')).status, 404);
  t.is((await call('GET', '/api/v1/namespaces/default/pods/web-2')).status, 404);

  t.regex(await k('uncordon', NODE), new RegExp(`node/${NODE} uncordoned`));
  t.falsy((await call('GET', `/api/v1/nodes/${NODE}`)).json.spec.unschedulable);
  t.regex(await k('cordon', NODE), new RegExp(`node/${NODE} cordoned`));
  t.is((await call('GET', `/api/v1/nodes/${NODE}`)).json.spec.unschedulable, true);
  await k('uncordon', NODE);
});

test.serial('the eviction sub-resource: several budgets are 500, a pod that does not exist is 404', async (t) => {
  await k('create', 'configmap', 'owner2');
  const uid = (await call('GET', '/api/v1/namespaces/default/configmaps/owner2')).json.metadata.uid as string;
  await kubectlStdin(api!.kubeconfig, ['create', '-f', '-'], podManifest('twice', uid, { app: 'twice' }).replace('"name":"owner"', '"name":"owner2"'));
  await eventually('twice ready', () => ready('twice'), 60_000);
  for (const name of ['a', 'b']) {
    await kubectlStdin(api!.kubeconfig, ['create', '-f', '-'], JSON.stringify({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: `twice-${name}` }, spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'twice' } } } }));
  }
  const body = (name: string) => ({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: 'default' } });
  const several = await call('POST', '/api/v1/namespaces/default/pods/twice/eviction', body('twice'));
  t.is(several.status, 500);
  t.is(several.json.message, 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
  const missing = await call('POST', '/api/v1/namespaces/default/pods/ghost/eviction', body('ghost'));
  t.is(missing.status, 404);
  t.is(missing.json.message, 'pods "ghost" not found');
});
