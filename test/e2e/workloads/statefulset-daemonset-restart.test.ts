/**
 * Issue 19: the StatefulSet and DaemonSet controllers restarted mid-rollout. svc-apiserver is
 * killed with SIGKILL while a DaemonSet and a StatefulSet roll out on two simulated nodes, then
 * started again on the same data dir and port; both rollouts must finish with exactly the pods
 * they should have (one daemon pod per node, ordinals 0..2), and no observation (before, across
 * and after the restart) may show two live daemon pods on a node or a StatefulSet pod outside
 * its ordinals.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { kubectl as kubectlRun } from '../../helpers/real-clients';
import { eventually, startAgent, type AgentProcess } from '../agent/agent-process';

const NODES = ['rs-a', 'rs-b'];

test('DaemonSet and StatefulSet rollouts interrupted by kill -9 of svc-apiserver finish after its restart, without extra or missing pods', async (t) => {
  t.timeout(240_000);
  const dir = mkdtempSync(join(tmpdir(), 'svc-e2e-stsds-restart-'));
  const dataDir = join(dir, 'apiserver');
  let api: RunningApiServer = await startApiServer({ dataDir });
  const agents: AgentProcess[] = [];
  t.teardown(async () => {
    for (const a of agents) await a.stop('SIGKILL');
    await api.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  const kubectl = (...args: string[]) => kubectlRun(api.kubeconfig, args, { timeoutMs: 120_000 });
  for (const name of NODES) agents.push(startAgent({ dir: join(dir, name), nodeName: name, kubeconfig: api.kubeconfig, configLines: ['enableServer: false', 'nodeStatusUpdateFrequency: 1s'] }));
  for (const name of NODES) {
    await eventually(`node ${name} Ready`, async () => ((await kubectl('get', 'node', name, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')).stdout === 'True' ? true : undefined), 60_000);
  }
  const spec = (app: string) => ({ selector: { matchLabels: { app } }, minReadySeconds: 2, template: { metadata: { labels: { app } }, spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: 'svc.local/app:1' }] } } });
  const manifests = [
    { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'ds', namespace: 'default' }, spec: spec('ds') },
    { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'sts', namespace: 'default' }, spec: { ...spec('sts'), replicas: 3, serviceName: 'sts' } },
  ];
  for (const m of manifests) {
    const r = await kubectlRun(api.kubeconfig, ['apply', '-f', '-'], { input: JSON.stringify(m) });
    t.is(r.code, 0, r.stderr);
  }
  for (const w of ['daemonset/ds', 'statefulset/sts']) t.is((await kubectl('rollout', 'status', w, '--timeout=120s')).code, 0);

  // Every observation of the pods, across the restart.
  const problems: string[] = [];
  const observe = async () => {
    const r = await kubectl('get', 'pods', '-o', 'json');
    if (r.code !== 0) return undefined; // the API server is down
    const live = (JSON.parse(r.stdout).items as any[]).filter((p) => !p.metadata.deletionTimestamp);
    const daemon = live.filter((p) => p.metadata.labels?.app === 'ds');
    for (const n of NODES) {
      const on = daemon.filter((p) => p.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms?.[0]?.matchFields?.[0]?.values?.[0] === n);
      if (on.length > 1) problems.push(`${on.length} live daemon pods for ${n}`);
    }
    for (const p of live.filter((x) => x.metadata.labels?.app === 'sts')) if (!['sts-0', 'sts-1', 'sts-2'].includes(p.metadata.name)) problems.push(`stray ${p.metadata.name}`);
    return live;
  };

  for (const w of ['daemonset/ds', 'statefulset/sts']) t.is((await kubectl('set', 'image', w, 'c=svc.local/app:2')).code, 0);
  // Kill it once the StatefulSet has some, not all, of its pods at the new image.
  await eventually('the rollouts under way', async () => {
    const live = (await observe()) ?? [];
    const fresh = live.filter((p) => p.metadata.labels?.app === 'sts' && p.spec.containers[0].image === 'svc.local/app:2');
    return fresh.length >= 1 && fresh.length < 3 ? true : undefined;
  }, 60_000, 100);
  api.proc.kill('SIGKILL');
  await new Promise<void>((r) => (api.proc.exitCode !== null || api.proc.signalCode !== null ? r() : api.proc.once('exit', () => r())));
  api = await startApiServer({ dataDir, port: api.port });

  const done = await eventually('both rollouts finished after the restart', async () => {
    const live = await observe();
    if (!live) return undefined;
    const ds = live.filter((p) => p.metadata.labels?.app === 'ds');
    const sts = live.filter((p) => p.metadata.labels?.app === 'sts');
    const ready = (p: any) => p.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True');
    const all = [...ds, ...sts];
    return ds.length === 2 && sts.length === 3 && all.every((p) => p.spec.containers[0].image === 'svc.local/app:2' && ready(p)) ? { ds, sts } : undefined;
  }, 180_000, 250);
  t.deepEqual(done.ds.map((p) => p.spec.nodeName).sort(), NODES);
  t.deepEqual(done.sts.map((p) => p.metadata.name).sort(), ['sts-0', 'sts-1', 'sts-2']);
  t.deepEqual(problems, []);
  for (const w of ['daemonset/ds', 'statefulset/sts']) {
    const r = await kubectl('rollout', 'status', w, '--timeout=60s');
    t.is(r.code, 0, r.stderr);
  }
  const sts = JSON.parse((await kubectl('get', 'statefulset', 'sts', '-o', 'json')).stdout);
  t.is(sts.status.currentRevision, sts.status.updateRevision);
});
