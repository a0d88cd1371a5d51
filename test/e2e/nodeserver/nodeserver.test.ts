/**
 * The agent server's other endpoints and the API server's node proxy, with real processes: a real
 * svc-apiserver (static tokens; RBAC grants per user) and a real svc-node on the CRI simulator.
 * /healthz, /metrics, /pods and /configz answer 401 without or with bad credentials, 403 without the
 * sub-resource (or, for /healthz and /pods, nodes/proxy), 200 otherwise; kubectl reaches the agent
 * through /api/v1/nodes/{node}/proxy/... (GET healthz, POST checkpoint) only with nodes/proxy.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { request, type Agent } from 'undici';
import { verifyTarArchive } from '../../../agent/checkpoint/verify-archive';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { agentMain, eventually } from '../agent/agent-process';
import { NODE_PATH_RULES } from '../../../agent/server/request-attributes';
import { adminDispatcher, callAgent, noCertDispatcher, runPod, startNode, type NodeUnderTest } from '../checkpoint/checkpoint-env';
import { execFile } from 'node:child_process';
import { constants as h2 } from 'node:http2';
import { h2Client, responseOf } from '../../helpers/h2-tunnel';
import { readUntil } from '../../helpers/stream-client';

const NODE = 'e2e-nodeserver';
const TOKENS = { prober: 'prober-token-0123456789', proxier: 'proxier-token-0123456789', nobody: 'nobody-token-0123456789', logreader: 'logreader-token-0123456789' } as const;

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

async function grant(api: RunningApiServer, user: string, rules: { resources: string[]; verbs: string[] }[]): Promise<void> {
  const role = { apiVersion: 'rbac.authorization.svc.io/v1', kind: 'ClusterRole', metadata: { name: `e2e-${user}` }, rules: rules.map((r) => ({ apiGroups: [''], ...r })) };
  const binding = {
    apiVersion: 'rbac.authorization.svc.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: `e2e-${user}` },
    roleRef: { apiGroup: 'rbac.authorization.svc.io', kind: 'ClusterRole', name: `e2e-${user}` },
    subjects: [{ apiGroup: 'rbac.authorization.svc.io', kind: 'User', name: user }],
  };
  for (const [resource, obj] of [['clusterroles', role], ['clusterrolebindings', binding]] as const) {
    const res = await request(`${api.url}/apis/rbac.authorization.svc.io/v1/${resource}`, { method: 'POST', dispatcher: api.admin, headers: { 'content-type': 'application/json' }, body: JSON.stringify(obj) });
    const text = await res.body.text();
    if (res.statusCode !== 201) throw new Error(`creating ${resource}: ${res.statusCode} ${text}`);
  }
}

/** A kubeconfig for the API server authenticating with a bearer token. */
function tokenKubeconfig(api: RunningApiServer, dir: string, user: string, token: string): string {
  const file = path.join(dir, `${user}.kubeconfig`);
  const ca = Buffer.from(api.caPem).toString('base64');
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'svc', cluster: { server: api.url, 'certificate-authority-data': ca } }],
      users: [{ name: user, user: { token } }],
      contexts: [{ name: 'svc', context: { cluster: 'svc', user } }],
      'current-context': 'svc',
    }),
    { mode: 0o600 },
  );
  return file;
}

/** Runs kubectl; resolves exit code, stdout and stderr (never rejects on a non-zero exit). */
function kubectl(kubeconfig: string, args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = execFile('/usr/bin/kubectl', ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8', timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
    p.stdin!.end(input ?? '');
  });
}

test.before(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-nodeserver-e2e-'));
  const tokens = path.join(dir, 'tokens.csv');
  writeFileSync(tokens, Object.entries(TOKENS).map(([user, token]) => `${token},${user},uid-${user}`).join('\n') + '\n');
  const api = await startApiServer({ args: [`--token-auth-file=${tokens}`] });
  let node: NodeUnderTest | undefined;
  try {
    await grant(api, 'prober', [{ resources: ['nodes/healthz', 'nodes/metrics', 'nodes/pods'], verbs: ['get'] }]);
    await grant(api, 'proxier', [{ resources: ['nodes/proxy'], verbs: ['get', 'create'] }]);
    await grant(api, 'logreader', [{ resources: ['nodes/log'], verbs: ['get'] }]);
    // Retention every 2 s keeping one archive per container, so the wiring can be watched at work.
    node = await startNode(api, path.join(dir, 'node'), NODE, ['checkpointRetention:', '  schedule: "*/2 * * * * *"', '  maxPerContainer: 1']);
    await runPod(api, NODE, 'web', 'svc.local/busybox:latest', {});
    env = { api, dir, node, bare: noCertDispatcher() };
  } catch (err) {
    await node?.agent.stop('SIGKILL');
    await api.stop();
    throw err;
  }
});

test.after.always(async () => {
  if (!env) return;
  await env.node.agent.stop('SIGKILL');
  await env.bare.close();
  await env.api.stop();
  rmSync(env.dir, { recursive: true, force: true });
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

for (const endpoint of ['/healthz', '/metrics', '/pods']) {
  test(`${endpoint}: 401 without credentials or with a bad token, 403 for a user without the permission, 200 with it`, async (t) => {
    const { node, bare } = e();
    t.is((await callAgent(node.port, endpoint, bare, {}, 'GET')).status, 401);
    t.is((await callAgent(node.port, endpoint, bare, bearer('not-a-token'), 'GET')).status, 401);
    const denied = await callAgent(node.port, endpoint, bare, bearer(TOKENS.nobody), 'GET');
    t.is(denied.status, 403);
    t.like(denied.body, { kind: 'Status', reason: 'Forbidden' });
    t.is((await callAgent(node.port, endpoint, bare, bearer(TOKENS.prober), 'GET')).status, 200);
  });
}

test('bodies: /healthz is ok, /pods lists the pod the agent runs, /metrics has request, heartbeat and runtime series', async (t) => {
  const { node, bare } = e();
  const h = await callAgent(node.port, '/healthz', bare, bearer(TOKENS.prober), 'GET');
  t.deepEqual(h, { status: 200, body: { raw: 'ok' } });
  const r = await callAgent(node.port, '/readyz?verbose', bare, bearer(TOKENS.prober), 'GET');
  t.is(r.status, 200, JSON.stringify(r.body));
  t.regex(String(r.body['raw']), /\[\+\]node ok/);
  const pods = await callAgent(node.port, '/pods', bare, bearer(TOKENS.prober), 'GET');
  t.like(pods.body, { kind: 'PodList', apiVersion: 'v1' });
  const items = pods.body['items'] as { metadata: { name: string; namespace: string }; status?: { phase?: string } }[];
  t.true(items.some((p) => p.metadata.name === 'web' && p.metadata.namespace === 'default' && p.status?.phase === 'Running'), JSON.stringify(items.map((p) => p.metadata)));
  const m = await callAgent(node.port, '/metrics', bare, bearer(TOKENS.prober), 'GET');
  const text = String(m.body['raw']);
  t.regex(text, /svc_node_http_requests_total\{method="GET",path="\/healthz",code="200"\} \d+/);
  t.regex(text, /svc_node_node_heartbeats_total\{kind="lease",result="success"\} \d+/);
  t.regex(text, /svc_node_runtime_operations_duration_seconds_count\{operation_type="list_containers"\} \d+/);
});

test('/healthz and /pods fall back to nodes/proxy (upstream fine-grained authorization); /metrics does not', async (t) => {
  const { node, bare } = e();
  t.is((await callAgent(node.port, '/healthz', bare, bearer(TOKENS.proxier), 'GET')).status, 200);
  t.is((await callAgent(node.port, '/pods', bare, bearer(TOKENS.proxier), 'GET')).status, 200);
  const m = await callAgent(node.port, '/metrics', bare, bearer(TOKENS.proxier), 'GET');
  t.is(m.status, 403);
  t.regex(String(m.body['message']), /subresource=metrics/);
});

test('/containerLogs is nodes/proxy as upstream maps it (issue 16, defect 8): nodes/log does not grant it, nodes/proxy does', async (t) => {
  const { node, bare } = e();
  const logs = '/containerLogs/default/web/c';
  const denied = await callAgent(node.port, logs, bare, bearer(TOKENS.logreader), 'GET');
  t.is(denied.status, 403, JSON.stringify(denied.body));
  t.regex(String(denied.body['message']), /user=logreader, verb=get, resource=nodes, subresource=proxy/);
  const allowed = await callAgent(node.port, logs, bare, bearer(TOKENS.proxier), 'GET');
  t.not(allowed.status, 403, JSON.stringify(allowed.body));
  t.not(allowed.status, 401);
});

test('a followed log over HTTP/2 streams lines as the runtime appends them; a cancelled stream leaves the connection serving the next', async (t) => {
  t.timeout(60_000);
  const { node } = e();
  // The container's log as the runtime writes it (CRI format), in the agent's podLogsDir.
  const logs = path.join(e().dir, 'node', 'pod-logs');
  const file = readdirSync(logs, { recursive: true, encoding: 'utf8' }).find((f) => /^default_web_[^/]*\/app\/\d+\.log$/.test(f));
  if (!file) return t.fail(`no log file of default/web/app under ${logs}`);
  const append = (line: string) => appendFileSync(path.join(logs, file), `${new Date().toISOString()} stdout F ${line}\n`);
  const session = await h2Client(node.port);
  t.teardown(() => session.destroy());
  const follow = () => session.request({ ':path': '/containerLogs/default/web/app?follow=true', ...bearer(TOKENS.proxier) });
  const first = follow();
  t.is(Number((await responseOf(first))[':status']), 200);
  const firstLine = readUntil(first, 'h2-line-one');
  append('h2-line-one');
  await firstLine;
  first.close(h2.NGHTTP2_CANCEL);
  append('h2-line-two');
  const second = follow();
  t.is(Number((await responseOf(second))[':status']), 200);
  const seen = await readUntil(second, 'h2-line-two');
  t.regex(seen, /h2-line-one\n[^]*h2-line-two\n/);
  second.close(h2.NGHTTP2_CANCEL);
  t.is((await callAgent(node.port, '/healthz', e().bare, bearer(TOKENS.prober), 'GET')).status, 200);
});

test('NODE_PATH_RULES says what svc-node serves: a row with `serves` reaches a handler, one without is the router\'s 404', async (t) => {
  const { api, node } = e();
  const admin = adminDispatcher(api);
  t.teardown(() => admin.close());
  const routerMiss = (a: { status: number; body: Record<string, unknown> }) =>
    a.status === 404 && /the server could not find the requested resource \(\//.test(JSON.stringify(a.body));
  for (const rule of NODE_PATH_RULES) {
    const exact = await callAgent(node.port, rule.path, admin, {}, 'GET');
    const below = await callAgent(node.port, `${rule.path}/default/web/c`, admin, {}, 'GET');
    t.is(!(routerMiss(exact) && routerMiss(below)), rule.serves !== '', `${rule.path}: ${exact.status} ${below.status}`);
  }
});

test('/configz answers the running configuration to a user with nodes/proxy (the configz fallback), 403 without', async (t) => {
  const { node, bare } = e();
  t.is((await callAgent(node.port, '/configz', bare, {}, 'GET')).status, 401);
  t.is((await callAgent(node.port, '/configz', bare, bearer(TOKENS.nobody), 'GET')).status, 403);
  const r = await callAgent(node.port, '/configz', bare, bearer(TOKENS.proxier), 'GET');
  t.is(r.status, 200, JSON.stringify(r.body));
  const cfg = r.body['nodeagentconfig'] as Record<string, any>;
  t.like(cfg, { kind: 'NodeAgentConfiguration', apiVersion: 'nodeagent.config.svc.io/v1beta1', containerRuntimeEndpoint: 'sim://' });
  // The drop-in values this test started the agent with, in their file form.
  t.like(cfg['checkpointRetention'], { schedule: '*/2 * * * * *', maxPerContainer: 1 });
  t.regex(String(cfg['nodeStatusUpdateFrequency']), /^\d+(\.\d+)?(ms|s|m|h)/);
});

test('kubectl get --raw through nodes/{node}/proxy reaches the agent; a user without nodes/proxy is forbidden by the API server', async (t) => {
  const { api, dir } = e();
  const admin = await kubectl(api.kubeconfig, ['get', '--raw', `/api/v1/nodes/${NODE}/proxy/healthz`]);
  t.is(admin.code, 0, admin.stderr);
  t.is(admin.stdout.trim(), 'ok');
  const proxier = await kubectl(tokenKubeconfig(api, dir, 'proxier', TOKENS.proxier), ['get', '--raw', `/api/v1/nodes/${NODE}/proxy/pods`]);
  t.is(proxier.code, 0, proxier.stderr);
  t.like(JSON.parse(proxier.stdout), { kind: 'PodList' });
  const nobody = await kubectl(tokenKubeconfig(api, dir, 'nobody', TOKENS.nobody), ['get', '--raw', `/api/v1/nodes/${NODE}/proxy/healthz`]);
  t.not(nobody.code, 0);
  t.regex(nobody.stderr, /forbidden/i);
  // The prober may read /healthz on the agent directly, but the proxy needs nodes/proxy.
  const prober = await kubectl(tokenKubeconfig(api, dir, 'prober', TOKENS.prober), ['get', '--raw', `/api/v1/nodes/${NODE}/proxy/healthz`]);
  t.not(prober.code, 0);
  t.regex(prober.stderr, /forbidden/i);
  const unknown = await kubectl(api.kubeconfig, ['get', '--raw', '/api/v1/nodes/no-such-node/proxy/healthz']);
  t.not(unknown.code, 0);
  t.regex(unknown.stderr, /not found/i);
});

test.serial('a POST checkpoint through the node proxy (create on nodes/proxy) writes a valid archive with the writable layer', async (t) => {
  const { api, dir, node } = e();
  const out = await kubectl(tokenKubeconfig(api, dir, 'proxier', TOKENS.proxier), ['create', '--raw', `/api/v1/nodes/${NODE}/proxy/checkpoint/default/web/app?timeout=30`, '-f', '-'], '{}');
  t.is(out.code, 0, out.stderr);
  const items = (JSON.parse(out.stdout) as { items: string[] }).items;
  t.is(items.length, 1);
  t.true(items[0].startsWith(path.join(node.rootDir, 'checkpoints', 'checkpoint-web_default-app-')), items[0]);
  t.true((await verifyTarArchive(items[0])) >= 5);
  // Errors come back as the agent's Status: an unknown container is a 404.
  const missing = await kubectl(api.kubeconfig, ['create', '--raw', `/api/v1/nodes/${NODE}/proxy/checkpoint/default/web/nope`, '-f', '-'], '{}');
  t.not(missing.code, 0);
  t.regex(missing.stderr, /NotFound/);
});

test('a bad checkpointRetention.schedule stops svc-node with exit 78 and a message naming the file and field', (t) => {
  const { dir } = e();
  const cfg = path.join(dir, 'bad-cron.yaml');
  writeFileSync(cfg, 'apiVersion: nodeagent.config.svc.io/v1beta1\nkind: NodeAgentConfiguration\ncheckpointRetention:\n  schedule: "every tuesday"\n');
  const r = spawnSync(process.execPath, [agentMain, `--config=${cfg}`], { encoding: 'utf8', timeout: 20_000 });
  t.is(r.status, 78, r.stderr);
  t.true(r.stderr.includes(`${cfg}: field checkpointRetention.schedule: invalid cron expression "every tuesday"`), r.stderr);
  t.notRegex(r.stderr, /at .*\.js:\d+/);
});

test.serial('the retention policy configured on the agent keeps only the newest archive of the container', async (t) => {
  const { api, node } = e();
  const admin = adminDispatcher(api);
  t.teardown(() => admin.close());
  const made: string[] = [];
  for (let i = 0; i < 3; i++) {
    // Archive names have one-second resolution.
    await new Promise((r) => setTimeout(r, 1100));
    const r = await callAgent(node.port, '/checkpoint/default/web/app', admin);
    t.is(r.status, 200, JSON.stringify(r.body));
    made.push((r.body['items'] as string[])[0]);
  }
  const dir = path.join(node.rootDir, 'checkpoints');
  const left = await eventually('retention to run', () => {
    const names = readdirSync(dir).filter((n) => n.startsWith('checkpoint-web_default-app-'));
    return names.length === 1 ? names : undefined;
  }, 30_000, 200);
  t.deepEqual(left, [path.basename(made[2])]);
  const m = await callAgent(node.port, '/metrics', admin, {}, 'GET');
  t.regex(String(m.body['raw']), /svc_node_checkpoint_archives_removed_total [1-9]/);
  t.regex(String(m.body['raw']), /svc_node_container_checkpoints_total\{result="success"\} [1-9]/);
});
