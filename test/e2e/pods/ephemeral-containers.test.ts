/**
 * The pods/ephemeralcontainers sub-resource end to end on the CRI simulator: a real svc-apiserver
 * and a real svc-node (sim://). A plain JSON patch (as `kubectl debug` would send, here as JSON)
 * adds an ephemeral container to a running pod; the agent starts it and reports it in
 * status.ephemeralContainerStatuses. Changing or removing an existing one is refused (422), other
 * spec fields in the patch are ignored, and the main resource cannot add one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { request } from 'undici';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { eventually, kubectlStdin, startAgent, type AgentProcess } from '../agent/agent-process';

const NODE = 'e2e-ephemeral';
const IMAGE = 'svc.local/busybox:latest';

type PodJson = {
  spec: { containers: { name: string; image: string }[]; ephemeralContainers?: { name: string; image: string; targetContainerName?: string }[]; activeDeadlineSeconds?: number };
  status: { phase?: string; ephemeralContainerStatuses?: { name: string; ready: boolean; state: { running?: object } }[] };
};

let api: RunningApiServer | undefined;
let agent: AgentProcess | undefined;
let dir: string | undefined;

test.before(async () => {
  api = await startApiServer();
  dir = mkdtempSync(path.join(tmpdir(), 'svc-ephemeral-e2e-'));
  agent = startAgent({ dir, nodeName: NODE, kubeconfig: api.kubeconfig, configLines: ['enableServer: false'] });
  await agent.waitForLog('node registered and heartbeating', 90_000);
});

test.after.always(async () => {
  await agent?.stop('SIGKILL');
  await api?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function call(method: 'GET' | 'PATCH' | 'PUT', p: string, body?: unknown, contentType = 'application/strategic-merge-patch+json'): Promise<{ status: number; json: any }> {
  const res = await request(`${api!.url}${p}`, {
    method,
    dispatcher: api!.admin,
    headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': contentType },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: text ? JSON.parse(text) : undefined };
}

const podPath = '/api/v1/namespaces/default/pods/web';

test.serial('an ephemeral container added through pods/ephemeralcontainers runs in the pod; existing ones cannot change; the main resource cannot add one', async (t) => {
  await kubectlStdin(
    api!.kubeconfig,
    ['create', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' }, spec: { nodeName: NODE, containers: [{ name: 'app', image: IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }] } }),
  );
  await eventually('web Running', async () => ((await call('GET', podPath)).json.status.phase === 'Running' ? true : undefined), 60_000);

  // The main resource refuses new ephemeral containers (upstream: only the sub-resource adds them).
  const viaMain = await call('PATCH', podPath, { spec: { ephemeralContainers: [{ name: 'x', image: IMAGE }] } });
  t.is(viaMain.status, 422, JSON.stringify(viaMain.json));

  // Added through the sub-resource; the activeDeadlineSeconds in the same patch is ignored.
  const added = await call('PATCH', `${podPath}/ephemeralcontainers`, {
    spec: { activeDeadlineSeconds: 5, ephemeralContainers: [{ name: 'debugger', image: IMAGE, command: ['sh'], stdin: true, tty: true, targetContainerName: 'app' }] },
  });
  t.is(added.status, 200, JSON.stringify(added.json));
  const pod = added.json as PodJson;
  t.is(pod.spec.ephemeralContainers?.[0]?.name, 'debugger');
  t.is(pod.spec.ephemeralContainers?.[0]?.targetContainerName, 'app');
  t.is(pod.spec.activeDeadlineSeconds, undefined);
  // Server defaults apply to the new container as to any other.
  t.is((pod.spec.ephemeralContainers?.[0] as Record<string, unknown>)['terminationMessagePolicy'], 'File');

  const running = await eventually('debugger running', async () => {
    const p = (await call('GET', podPath)).json as PodJson;
    const s = p.status.ephemeralContainerStatuses?.find((x) => x.name === 'debugger');
    return s?.state.running ? s : undefined;
  }, 60_000);
  t.false(running.ready);

  // GET on the sub-resource answers the pod.
  const got = await call('GET', `${podPath}/ephemeralcontainers`);
  t.is(got.status, 200);
  t.is(got.json.kind, 'Pod');

  // Changing the existing one is refused; so is removing it (a JSON merge patch replacing the list).
  const changed = await call('PATCH', `${podPath}/ephemeralcontainers`, { spec: { ephemeralContainers: [{ name: 'debugger', image: 'svc.local/other:1' }] } });
  t.is(changed.status, 422);
  t.regex(changed.json.message, /existing ephemeral containers "debugger" may not be changed/);
  const removed = await call('PATCH', `${podPath}/ephemeralcontainers`, { spec: { ephemeralContainers: [] } }, 'application/merge-patch+json');
  t.is(removed.status, 422);
  t.regex(removed.json.message, /may not be removed/);

  // An invalid new one (no image) is a 422 from the ephemeral container rules.
  const invalid = await call('PATCH', `${podPath}/ephemeralcontainers`, { spec: { ephemeralContainers: [{ name: 'noimage' }] } });
  t.is(invalid.status, 422, JSON.stringify(invalid.json));
});
