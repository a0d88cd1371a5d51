/**
 * POST /checkpoint on a real svc-node (CRI simulator) with a real svc-apiserver doing the token
 * reviews and subject access reviews: every status code of spec 4.11 plus the bad-input cases.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { request, type Agent } from 'undici';
import { verifyTarArchive } from '../../../agent/checkpoint/verify-archive';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { kubectl } from '../../helpers/real-clients';
import { eventually } from '../agent/agent-process';
import { adminDispatcher, callAgent, CHECKPOINTER_TOKEN, grantCheckpoint, noCertDispatcher, NOBODY_TOKEN, runPod, startNode, writeTokenFile, type NodeUnderTest } from './checkpoint-env';

const NODE = 'e2e-ckpt';
const GATED = 'e2e-ckpt-gated';

interface Env {
  api: RunningApiServer;
  dir: string;
  node: NodeUnderTest;
  gated: NodeUnderTest;
  admin: Agent;
  bare: Agent;
}
let env: Env | undefined;
function e(): Env {
  if (!env) throw new Error('the environment did not start (see the before hook)');
  return env;
}

test.before(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-ckpt-e2e-'));
  const api = await startApiServer({ args: [`--token-auth-file=${writeTokenFile(dir)}`] });
  let node: NodeUnderTest | undefined;
  try {
    await grantCheckpoint(api);
    node = await startNode(api, path.join(dir, 'on'), NODE);
    const gated = await startNode(api, path.join(dir, 'off'), GATED, ['featureGates:', '  ContainerCheckpoint: false']);
    await runPod(api, NODE, 'web');
    env = { api, dir, node, gated, admin: adminDispatcher(api), bare: noCertDispatcher() };
  } catch (err) {
    await node?.agent.stop('SIGKILL');
    await api.stop();
    throw err;
  }
});

test.after.always(async () => {
  if (!env) return;
  await env.node.agent.stop('SIGKILL');
  await env.gated.agent.stop('SIGKILL');
  await env.admin.close();
  await env.bare.close();
  await env.api.stop();
  rmSync(env.dir, { recursive: true, force: true });
});

const ARCHIVE = /\/checkpoints\/checkpoint-web_default-app-\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\.tar$/;

test.serial('200: the API server kubelet-client style identity (system:masters) gets a valid 0600 archive in a 0700 dir', async (t) => {
  const { node, admin } = e();
  const r = await callAgent(node.port, '/checkpoint/default/web/app', admin);
  t.is(r.status, 200, JSON.stringify(r.body));
  const items = r.body['items'] as string[];
  t.is(items.length, 1);
  t.regex(items[0], ARCHIVE);
  t.true(items[0].startsWith(path.join(node.rootDir, 'checkpoints') + '/'));
  t.is(statSync(items[0]).mode & 0o777, 0o600);
  t.is(statSync(path.join(node.rootDir, 'checkpoints')).mode & 0o777, 0o700);
  t.true((await verifyTarArchive(items[0])) >= 1);
  // The agent records it as an event about the container (svc's own: upstream records none).
  const event = await eventually('the Checkpointed event', async () => {
    const r = await kubectl(e().api.kubeconfig, ['get', 'events', '--field-selector', 'reason=Checkpointed,involvedObject.name=web', '-o', 'json']);
    return (JSON.parse(r.stdout) as { items: Array<{ message: string; involvedObject: { fieldPath: string }; source: { component: string } }> }).items[0];
  }, 30_000);
  t.is(event.message, `Checkpointed container app to ${items[0]}`);
  t.is(event.involvedObject.fieldPath, 'spec.containers{app}');
  t.is(event.source.component, 'kubelet');
});

test.serial('200: a token user granted nodes/checkpoint by RBAC (TokenReview + SubjectAccessReview), with a timeout', async (t) => {
  const { node, bare } = e();
  // A second checkpoint within the same second would reuse the name; wait for the next second.
  await new Promise((r) => setTimeout(r, 1100));
  const r = await callAgent(node.port, '/checkpoint/default/web/app?timeout=30', bare, { authorization: `Bearer ${CHECKPOINTER_TOKEN}` });
  t.is(r.status, 200, JSON.stringify(r.body));
  t.regex((r.body['items'] as string[])[0], ARCHIVE);
});

test.serial('401: no credentials, and a bad token', async (t) => {
  const { node, bare } = e();
  const none = await callAgent(node.port, '/checkpoint/default/web/app', bare);
  t.is(none.status, 401);
  t.like(none.body, { kind: 'Status', reason: 'Unauthorized', code: 401 });
  const bad = await callAgent(node.port, '/checkpoint/default/web/app', bare, { authorization: 'Bearer not-a-valid-token' });
  t.is(bad.status, 401);
});

test.serial('403: an authenticated user without nodes/checkpoint', async (t) => {
  const { node, bare } = e();
  const r = await callAgent(node.port, '/checkpoint/default/web/app', bare, { authorization: `Bearer ${NOBODY_TOKEN}` });
  t.is(r.status, 403);
  t.like(r.body, { kind: 'Status', reason: 'Forbidden', message: `Forbidden (user=nobody, verb=create, resource=nodes, subresource=checkpoint)` });
});

test.serial('404: gate off; unknown namespace, pod, container', async (t) => {
  const { node, gated, admin } = e();
  const off = await callAgent(gated.port, '/checkpoint/default/web/app', admin);
  t.is(off.status, 404);
  t.regex(String(off.body['message']), /ContainerCheckpoint/);
  for (const p of ['/checkpoint/nowhere/web/app', '/checkpoint/default/ghost/app', '/checkpoint/default/web/nope']) {
    const r = await callAgent(node.port, p, admin);
    t.is(r.status, 404, `${p}: ${JSON.stringify(r.body)}`);
  }
});

test.serial('400: bad timeouts and hostile names', async (t) => {
  const { node, admin } = e();
  for (const p of ['/checkpoint/default/web/app?timeout=-1', '/checkpoint/default/web/app?timeout=soon', '/checkpoint/default/web/app?timeout=99999999', '/checkpoint/default/web%00/app', '/checkpoint/default/..%2F..%2Fetc/app', `/checkpoint/default/${'x'.repeat(300)}/app`]) {
    const r = await callAgent(node.port, p, admin);
    t.is(r.status, 400, `${p}: ${JSON.stringify(r.body)}`);
  }
});

test.serial('500: the archive cannot be written (checkpoints is not a directory); the message says why', async (t) => {
  const { node, admin } = e();
  const dir = path.join(node.rootDir, 'checkpoints');
  rmSync(dir, { recursive: true, force: true });
  writeFileSync(dir, 'not a directory');
  try {
    const r = await callAgent(node.port, '/checkpoint/default/web/app', admin);
    t.is(r.status, 500);
    t.like(r.body, { kind: 'Status', reason: 'InternalError' });
    t.regex(String(r.body['message']), /EEXIST|ENOTDIR|not a directory|file already exists/i);
  } finally {
    rmSync(dir, { force: true });
  }
});

test.serial('the API server still reaches /containerLogs with its kubelet-client certificate (pods/log proxy), and a token user needs nodes/proxy (upstream)', async (t) => {
  const { api, node, bare } = e();
  const res = await request(`${api.url}/api/v1/namespaces/default/pods/web/log`, { dispatcher: api.admin });
  const text = await res.body.text();
  t.is(res.statusCode, 200, text);
  const denied = await callAgent(node.port, '/containerLogs/default/web/app', bare, { authorization: `Bearer ${CHECKPOINTER_TOKEN}` }, 'GET');
  t.is(denied.status, 403);
  t.regex(String(denied.body['message']), /verb=get, resource=nodes, subresource=proxy/);
});
