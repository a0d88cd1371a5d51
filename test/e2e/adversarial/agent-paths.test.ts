/**
 * Adversarial suite, path traversal on the agent (issue 16's probe class), against a real
 * svc-node on the CRI simulator registered with a real svc-apiserver: paths that climb out of
 * the pod they name, raw or percent-encoded, reach no file, whoever asks (here system:masters,
 * which every sub-resource check allows), and the agent keeps serving.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { request, type Agent } from 'undici';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { adminDispatcher, runPod, startNode, type NodeUnderTest } from '../checkpoint/checkpoint-env';

const NODE = 'e2e-adversarial-paths';

let api: RunningApiServer;
let node: NodeUnderTest | undefined;
let dir: string;
let admin: Agent;

test.before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'svc-adv-paths-'));
  api = await startApiServer();
  node = await startNode(api, path.join(dir, 'node'), NODE);
  await runPod(api, NODE, 'web');
  admin = adminDispatcher(api);
});

test.after.always(async () => {
  await node?.agent.stop('SIGKILL');
  await admin?.close();
  await api?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Sends the path exactly as written (undici does not normalise dot segments; the agent must). */
async function get(p: string, method: 'GET' | 'POST' = 'GET'): Promise<{ status: number; text: string }> {
  const res = await request(`https://127.0.0.1:${node!.port}${p}`, { method, dispatcher: admin });
  return { status: res.statusCode, text: await res.body.text() };
}

const PASSWD = /root:.*:0:0:/;

test('the control: the pod\'s own log is served', async (t) => {
  const r = await get('/containerLogs/default/web/app');
  t.is(r.status, 200, r.text);
});

const climbs = [
  '/containerLogs/default/web/../../../../../../etc/passwd',
  '/containerLogs/default/web/app/../../../../../../etc/passwd',
  '/containerLogs/..%2F..%2F..%2F..%2Fetc/web/app',
  '/containerLogs/default/web/..%2F..%2F..%2F..%2F..%2Fetc%2Fpasswd',
  '/containerLogs/default/%2e%2e%2f%2e%2e%2f%2e%2e%2fetc/passwd',
  '/containerLogs/default/web/app%00/../../../../etc/passwd',
  '/containerLogs/%2e%2e/%2e%2e/%2e%2e',
  '/containerLogs//etc/passwd/x',
  '/pods/../../../../etc/passwd',
  '/stats/../../../etc/passwd',
  '/logs/../../../../etc/passwd',
  '/logs/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
];

for (const p of climbs) {
  test(`GET ${p} reaches no file`, async (t) => {
    const r = await get(p);
    t.true(r.status >= 400 && r.status < 500, `${r.status} ${r.text.slice(0, 200)}`);
    t.notRegex(r.text, PASSWD);
  });
}

test('checkpoint names that climb are refused and write nothing outside the checkpoint folder', async (t) => {
  for (const p of ['/checkpoint/default/web/..%2F..%2F..%2Ftmp%2Fx', '/checkpoint/..%2F..%2Fetc/web/app', '/checkpoint/default/../../../etc/app']) {
    const r = await get(p, 'POST');
    t.true(r.status >= 400 && r.status < 500, `${p}: ${r.status} ${r.text.slice(0, 200)}`);
  }
  // The agent keeps serving.
  t.is((await get('/containerLogs/default/web/app')).status, 200);
});
