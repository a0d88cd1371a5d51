/**
 * Issue 19: the controllers restarted mid-rollout. svc-apiserver (with the ReplicaSet and
 * Deployment controllers in it) is killed with SIGKILL while a Deployment rolls out on two
 * simulated nodes, then started again on the same data dir and port; the rollout must finish with
 * exactly `replicas` pods of the new template, and at no moment observed (before, across and after
 * the restart) more than replicas + maxSurge live pods, nor a pod of a third template.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { kubectl as kubectlRun } from '../../helpers/real-clients';
import { eventually, startAgent, type AgentProcess } from '../agent/agent-process';

const REPLICAS = 6;
const SURGE = 1;

test('a rollout interrupted by kill -9 of svc-apiserver finishes after its restart, without extra or missing pods', async (t) => {
  t.timeout(240_000);
  const dir = mkdtempSync(join(tmpdir(), 'svc-e2e-rollout-restart-'));
  const dataDir = join(dir, 'apiserver');
  let api: RunningApiServer = await startApiServer({ dataDir });
  const agents: AgentProcess[] = [];
  t.teardown(async () => {
    for (const a of agents) await a.stop('SIGKILL');
    await api.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  const kubectl = (...args: string[]) => kubectlRun(api.kubeconfig, args, { timeoutMs: 120_000 });
  const json = async (...args: string[]) => {
    const r = await kubectl(...args, '-o', 'json');
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
    return JSON.parse(r.stdout);
  };
  for (const name of ['r1', 'r2']) agents.push(startAgent({ dir: join(dir, name), nodeName: name, kubeconfig: api.kubeconfig, args: ['--node-ip=127.0.0.1'], configLines: ['enableServer: false'] }));
  for (const name of ['r1', 'r2']) {
    await eventually(`node ${name} Ready`, async () => ((await kubectl('get', 'node', name, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')).stdout === 'True' ? true : undefined), 60_000);
  }
  const manifest = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: ${REPLICAS}
  minReadySeconds: 2
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: ${SURGE}, maxUnavailable: 0}}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {terminationGracePeriodSeconds: 1, containers: [{name: c, image: "busybox:1.36"}]}
`;
  const created = await kubectlRun(api.kubeconfig, ['apply', '-f', '-'], { input: manifest });
  t.is(created.code, 0, created.stderr);
  t.is((await kubectl('rollout', 'status', 'deployment/web', '--timeout=120s')).code, 0);

  // Every observation of the pods, across the restart.
  let most = 0;
  const images = new Set<string>();
  const observe = async () => {
    const r = await kubectl('get', 'pods', '-l', 'app=web', '-o', 'json');
    if (r.code !== 0) return undefined; // the API server is down
    const live = JSON.parse(r.stdout).items.filter((p: any) => !p.metadata.deletionTimestamp);
    most = Math.max(most, live.length);
    for (const p of live) images.add(p.spec.containers[0].image);
    return live as any[];
  };

  t.is((await kubectl('set', 'image', 'deployment/web', 'c=busybox:1.37')).code, 0);
  // Kill it once the new ReplicaSet has some, not all, of its pods.
  await eventually('the rollout under way', async () => {
    const live = await observe();
    const fresh = (live ?? []).filter((p) => p.spec.containers[0].image === 'busybox:1.37');
    return fresh.length >= 2 && fresh.length < REPLICAS ? true : undefined;
  }, 60_000, 100);
  api.proc.kill('SIGKILL');
  await new Promise<void>((r) => (api.proc.exitCode !== null || api.proc.signalCode !== null ? r() : api.proc.once('exit', () => r())));
  api = await startApiServer({ dataDir, port: api.port });

  await eventually('the rollout finished after the restart', async () => {
    await observe();
    const d = await json('get', 'deployment', 'web');
    const s = d.status ?? {};
    return s.observedGeneration === d.metadata.generation && s.updatedReplicas === REPLICAS && s.replicas === REPLICAS && s.availableReplicas === REPLICAS ? true : undefined;
  }, 180_000, 250);
  const live = await eventually('the old pods gone', async () => {
    const l = await observe();
    return l && l.length === REPLICAS ? l : undefined;
  }, 60_000);
  t.true(live.every((p) => p.spec.containers[0].image === 'busybox:1.37' && p.status.phase === 'Running'));
  t.true(most <= REPLICAS + SURGE, `at most replicas + maxSurge live pods at any observation: ${most}`);
  t.deepEqual([...images].sort(), ['busybox:1.36', 'busybox:1.37']);
  const rss = (await json('get', 'rs', '-l', 'app=web')).items;
  t.deepEqual(rss.map((rs: any) => [rs.spec.template.spec.containers[0].image, rs.spec.replicas]).sort(), [
    ['busybox:1.36', 0],
    ['busybox:1.37', REPLICAS],
  ]);
  t.is((await json('get', 'deployment', 'web')).metadata.annotations['deployment.kubernetes.io/revision'], '2');
});
