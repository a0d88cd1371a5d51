/**
 * POST /checkpoint against real containerd 1.6, which does not implement CheckpointContainer:
 * the agent answers 500 carrying the runtime's message and leaves no archive behind.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { startApiServer } from '../../helpers/apiserver-process';
import { startContainerd } from '../../helpers/containerd';
import { eventually, kubectlJson } from '../agent/agent-process';
import { request } from 'undici';
import { adminDispatcher, callAgent, runPod, startNode, writeTokenFile } from './checkpoint-env';

const NODE = 'e2e-ckpt-ctrd';

test('containerd 1.6: 500 with the runtime UNIMPLEMENTED message, no archive left', async (t) => {
  const ctrd = await startContainerd();
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-ckpt-ctrd-'));
  const api = await startApiServer({ args: [`--token-auth-file=${writeTokenFile(dir)}`] }).catch(async (e: unknown) => {
    await ctrd.stop();
    throw e;
  });
  const admin = adminDispatcher(api);
  let node: Awaited<ReturnType<typeof startNode>> | undefined;
  try {
    node = await startNode(api, path.join(dir, 'agent'), NODE, [`containerRuntimeEndpoint: ${ctrd.endpoint}`, `podLogsDir: ${ctrd.logRoot}`]);
    // busybox as PID 1 ignores SIGTERM; sharing the sandbox's PID namespace lets it stop at once.
    await runPod(api, NODE, 'web', ctrd.image, { shareProcessNamespace: true });
    const r = await callAgent(node.port, '/checkpoint/default/web/app', admin);
    t.is(r.status, 500, JSON.stringify(r.body));
    t.like(r.body, { kind: 'Status', reason: 'InternalError' });
    t.regex(String(r.body['message']), /CheckpointContainer|not implemented|unimplemented/i);
    t.deepEqual(readdirSync(path.join(node.rootDir, 'checkpoints')), []);
    // Leave containerd clean: delete the pod and wait until the agent removed it.
    const del = await request(`${api.url}/api/v1/namespaces/default/pods/web`, { method: 'DELETE', dispatcher: api.admin });
    await del.body.text();
    await eventually('pod gone', async () => {
      try {
        await kubectlJson(api.kubeconfig, ['get', 'pod', 'web']);
        return undefined;
      } catch {
        return true;
      }
    }, 60_000, 500);
  } finally {
    await node?.agent.stop('SIGTERM');
    await admin.close();
    await api.stop();
    await ctrd.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  t.deepEqual(await ctrd.leftovers(), []);
});
