/**
 * A Job on real containers (issue 19): the test's own containerd, a real svc-apiserver and a real
 * svc-node on it. The Job's pod counts its attempts in a hostPath file and fails until the third:
 * the Job controller replaces the failed pods after its back-off (10 s, then 20 s) and the Job ends
 * Complete with failed=2 and succeeded=1, each pod counted once through its tracking finalizer.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { startContainerd, type Containerd } from '../../helpers/containerd';
import { eventually, kubectlJson, kubectlStdin, startAgent, type AgentProcess } from '../agent/agent-process';
import { execFile } from 'node:child_process';

const NODE = 'e2e-job-containerd';

interface Env {
  ctrd: Containerd;
  api: RunningApiServer;
  agent: AgentProcess;
  dir: string;
}

let env: Env | undefined;

test.before(async () => {
  const ctrd = await startContainerd();
  let api: RunningApiServer | undefined;
  try {
    api = await startApiServer();
    const dir = mkdtempSync(path.join(tmpdir(), 'svc-job-ctrd-e2e-'));
    const agent = startAgent({
      dir,
      nodeName: NODE,
      kubeconfig: api.kubeconfig,
      configLines: [`containerRuntimeEndpoint: ${ctrd.endpoint}`, `podLogsDir: ${ctrd.logRoot}`, 'nodeStatusUpdateFrequency: 1s', 'enableServer: false'],
    });
    env = { ctrd, api, agent, dir };
    await agent.waitForLog('node registered and heartbeating', 60_000);
    await eventually('node Ready and the default service account', async () => {
      const n = await kubectlJson<{ status: { conditions: { type: string; status: string }[] } }>(api!.kubeconfig, ['get', 'node', NODE]);
      if (n.status.conditions.find((c) => c.type === 'Ready')?.status !== 'True') return undefined;
      return (await kubectlJson(api!.kubeconfig, ['get', 'serviceaccount', 'default'])).metadata ? true : undefined;
    }, 60_000);
  } catch (err) {
    await env?.agent.stop('SIGKILL');
    await api?.stop();
    await ctrd.stop();
    throw err;
  }
});

test.after.always(async () => {
  if (!env) return;
  await env.agent.stop('SIGKILL');
  await env.api.stop();
  await env.ctrd.stop();
  rmSync(env.dir, { recursive: true, force: true });
});

function kubectl(args: string[], timeoutMs = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('/usr/bin/kubectl', ['--kubeconfig', env!.api.kubeconfig, ...args], { encoding: 'utf8', timeout: timeoutMs }, (err, stdout, stderr) => (err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr || err.message}`)) : resolve(stdout)));
  });
}

type Pod = { metadata: { name: string; finalizers?: string[] }; status: { phase?: string; containerStatuses?: Array<{ state: { terminated?: { exitCode: number } } }> } };

test.serial('a Job whose pod fails twice then succeeds ends Complete with failed=2 succeeded=1', async (t) => {
  const { api, dir } = env!;
  const counter = path.join(dir, 'attempts');
  const script = 'n=$(cat /attempts/count 2>/dev/null || echo 0); n=$((n+1)); echo $n > /attempts/count; echo attempt $n; [ $n -ge 3 ]';
  await kubectlStdin(
    api.kubeconfig,
    ['apply', '-f', '-'],
    JSON.stringify({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'third-time-lucky' },
      spec: {
        backoffLimit: 6,
        template: {
          spec: {
            restartPolicy: 'Never',
            terminationGracePeriodSeconds: 1,
            containers: [{ name: 'try', image: env!.ctrd.image, imagePullPolicy: 'Never', command: ['sh', '-c', script], volumeMounts: [{ name: 'attempts', mountPath: '/attempts' }] }],
            volumes: [{ name: 'attempts', hostPath: { path: counter, type: 'DirectoryOrCreate' } }],
          },
        },
      },
    }),
  );
  await kubectl(['wait', '--for=condition=complete', 'job/third-time-lucky', '--timeout=240s'], 250_000);
  const job = await kubectlJson<{ status: Record<string, any> }>(api.kubeconfig, ['get', 'job', 'third-time-lucky']);
  t.like(job.status, { failed: 2, succeeded: 1, uncountedTerminatedPods: {} });
  t.deepEqual(job.status.conditions.map((c: { type: string }) => c.type), ['SuccessCriteriaMet', 'Complete']);
  t.is(readFileSync(path.join(counter, 'count'), 'utf8').trim(), '3');
  const pods = (await kubectlJson<{ items: Pod[] }>(api.kubeconfig, ['get', 'pods', '-l', 'job-name=third-time-lucky'])).items;
  t.deepEqual(pods.map((p) => p.status.phase).sort(), ['Failed', 'Failed', 'Succeeded']);
  t.deepEqual(pods.map((p) => p.status.containerStatuses?.[0]?.state.terminated?.exitCode).sort(), [0, 1, 1]);
  for (const p of pods) t.deepEqual(p.metadata.finalizers ?? [], [], `${p.metadata.name} keeps no tracking finalizer`);
  // Deleting the Job takes its pods and their containers with it.
  await kubectl(['delete', 'job', 'third-time-lucky']);
  await eventually('the pods gone', async () => ((await kubectlJson<{ items: Pod[] }>(api.kubeconfig, ['get', 'pods'])).items.length === 0 ? true : undefined), 60_000);
});
