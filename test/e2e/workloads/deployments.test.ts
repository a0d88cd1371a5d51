/**
 * Issue 19: Deployments and ReplicaSets with stock kubectl 1.32 against a real svc-apiserver and
 * two svc-node agents on the CRI simulator: create deployment, scale (deployments and replica
 * sets, through the scale sub-resource), set image, rollout status/history/undo/pause/resume/
 * restart, describe, a non-admin user with the edit role, and delete with each cascade mode.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { kubectl as kubectlRun } from '../../helpers/real-clients';
import { eventually, startAgent, type AgentProcess } from '../agent/agent-process';

let s: RunningApiServer;
let dir: string;
const agents: AgentProcess[] = [];

test.before(async () => {
  s = await startApiServer();
  dir = mkdtempSync(join(tmpdir(), 'svc-e2e-deployments-'));
  for (const name of ['w1', 'w2']) {
    agents.push(startAgent({ dir: join(dir, name), nodeName: name, kubeconfig: s.kubeconfig, args: ['--node-ip=127.0.0.1'], configLines: ['enableServer: false'] }));
  }
  for (const name of ['w1', 'w2']) {
    await eventually(`node ${name} Ready`, async () => {
      const r = await kubectl('get', 'node', name, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}');
      return r.stdout === 'True' ? true : undefined;
    }, 60_000);
  }
  const ns = await kubectl('create', 'namespace', 'apps');
  if (ns.code !== 0) throw new Error(ns.stderr);
});

test.after.always(async () => {
  for (const a of agents) await a.stop('SIGKILL');
  await s?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const kubectl = (...args: string[]) => kubectlRun(s.kubeconfig, args, { timeoutMs: 90_000 });
const inApps = (...args: string[]) => kubectl('-n', 'apps', ...args);

async function ok(...args: string[]): Promise<string> {
  const r = await inApps(...args);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}: ${r.stderr}\n${s.output().slice(-4000)}`);
  return r.stdout;
}

async function json(...args: string[]): Promise<any> {
  return JSON.parse(await ok(...args, '-o', 'json'));
}

/** The live (not terminating) pods matching a selector. */
async function livePods(selector: string): Promise<any[]> {
  const list = await json('get', 'pods', '-l', selector);
  return list.items.filter((p: any) => !p.metadata.deletionTimestamp);
}

test.serial('create deployment, rollout status, get: READY 3/3 with one ReplicaSet named by its pod-template-hash', async (t) => {
  t.timeout(120_000);
  t.regex(await ok('create', 'deployment', 'web', '--image=nginx:1.25', '--replicas=3'), /deployment\.apps\/web created/);
  t.regex(await ok('rollout', 'status', 'deployment/web', '--timeout=90s'), /deployment "web" successfully rolled out/);
  t.regex(await ok('get', 'deployment', 'web'), /^web\s+3\/3\s+3\s+3\s+\S+$/m);
  const rs = (await json('get', 'rs', '-l', 'app=web')).items;
  t.is(rs.length, 1);
  const hash = rs[0].metadata.labels['pod-template-hash'];
  t.is(rs[0].metadata.name, `web-${hash}`);
  t.regex(await ok('get', 'rs', '-o', 'wide'), new RegExp(`^web-${hash}\\s+3\\s+3\\s+3\\s+\\S+\\s+nginx\\s+nginx:1.25\\s+app=web,pod-template-hash=${hash}$`, 'm'));
  const pods = await livePods('app=web');
  t.is(pods.length, 3);
  t.true(pods.every((p) => p.status.phase === 'Running' && p.metadata.ownerReferences[0].name === `web-${hash}`));
});

test.serial('kubectl scale: a Deployment and a bare ReplicaSet, through the scale sub-resource; a user with the edit role may scale', async (t) => {
  t.timeout(120_000);
  t.regex(await ok('scale', 'deployment/web', '--replicas=5'), /deployment\.apps\/web scaled/);
  await ok('rollout', 'status', 'deployment/web', '--timeout=90s');
  t.is((await livePods('app=web')).length, 5);
  const manifest = [
    'apiVersion: apps/v1',
    'kind: ReplicaSet',
    'metadata: {name: solo}',
    'spec:',
    '  replicas: 1',
    '  selector: {matchLabels: {app: solo}}',
    '  template:',
    '    metadata: {labels: {app: solo}}',
    '    spec: {containers: [{name: c, image: busybox}]}',
    '',
  ].join('\n');
  const applied = await kubectlRun(s.kubeconfig, ['-n', 'apps', 'apply', '-f', '-'], { input: manifest });
  t.is(applied.code, 0, applied.stderr);
  t.regex(await ok('scale', 'rs/solo', '--replicas=3'), /replicaset\.apps\/solo scaled/);
  await eventually('3 solo pods', async () => ((await livePods('app=solo')).length === 3 ? true : undefined), 60_000);
  t.like((await json('get', 'rs', 'solo')).spec, { replicas: 3 });
  // As upstream's aggregated roles: edit may scale (deployments/scale), view may not.
  await ok('create', 'rolebinding', 'dev-edit', '--clusterrole=edit', '--user=dev');
  await ok('create', 'rolebinding', 'ro-view', '--clusterrole=view', '--user=ro');
  t.regex(await ok('--as=dev', 'scale', 'rs/solo', '--replicas=2'), /scaled/);
  const denied = await inApps('--as=ro', 'scale', 'rs/solo', '--replicas=1');
  t.not(denied.code, 0);
  t.regex(denied.stderr, /forbidden: User "ro" cannot patch resource "replicasets\/scale"/);
  t.regex(await ok('--as=ro', 'get', 'rs', 'solo'), /solo\s+2\s/);
});

test.serial('set image rolls out a second revision; rollout history lists both; undo goes back as revision 3', async (t) => {
  t.timeout(120_000);
  t.regex(await ok('set', 'image', 'deployment/web', 'nginx=nginx:1.26'), /deployment\.apps\/web image updated/);
  await ok('rollout', 'status', 'deployment/web', '--timeout=90s');
  const images = (await livePods('app=web')).map((p) => p.spec.containers[0].image);
  t.deepEqual([...new Set(images)], ['nginx:1.26']);
  const history = await ok('rollout', 'history', 'deployment/web');
  t.regex(history, /REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>/);
  t.regex(await ok('rollout', 'history', 'deployment/web', '--revision=2'), /Image:\s+nginx:1\.26/);
  t.regex(await ok('rollout', 'undo', 'deployment/web'), /deployment\.apps\/web rolled back/);
  await ok('rollout', 'status', 'deployment/web', '--timeout=90s');
  await eventually('only 1.25 pods', async () => {
    const now = (await livePods('app=web')).map((p) => p.spec.containers[0].image);
    return now.length === 5 && now.every((i) => i === 'nginx:1.25') ? true : undefined;
  }, 60_000);
  t.regex(await ok('rollout', 'history', 'deployment/web'), /\n2\s+<none>\n3\s+<none>/);
  t.is((await json('get', 'deployment', 'web')).metadata.annotations['deployment.kubernetes.io/revision'], '3');
  t.is((await json('get', 'rs', '-l', 'app=web')).items.length, 2, 'the first ReplicaSet was reused');
});

test.serial('rollout pause holds a template change; resume rolls it out; restart makes a new ReplicaSet', async (t) => {
  t.timeout(120_000);
  t.regex(await ok('rollout', 'pause', 'deployment/web'), /deployment\.apps\/web paused/);
  await ok('set', 'image', 'deployment/web', 'nginx=nginx:1.27');
  await eventually('the paused condition', async () => {
    const d = await json('get', 'deployment', 'web');
    return d.status.observedGeneration === d.metadata.generation && d.status.conditions.some((c: any) => c.reason === 'DeploymentPaused') ? true : undefined;
  }, 30_000);
  t.is((await json('get', 'rs', '-l', 'app=web')).items.length, 2, 'no ReplicaSet for the paused template');
  const undoPaused = await inApps('rollout', 'undo', 'deployment/web');
  t.regex(undoPaused.stderr, /you cannot rollback a paused deployment; resume it first/);
  t.regex(await ok('rollout', 'resume', 'deployment/web'), /deployment\.apps\/web resumed/);
  await ok('rollout', 'status', 'deployment/web', '--timeout=90s');
  t.is((await json('get', 'rs', '-l', 'app=web')).items.length, 3);
  t.regex(await ok('rollout', 'restart', 'deployment/web'), /deployment\.apps\/web restarted/);
  await ok('rollout', 'status', 'deployment/web', '--timeout=90s');
  const d = await json('get', 'deployment', 'web');
  t.truthy(d.spec.template.metadata.annotations['kubectl.kubernetes.io/restartedAt']);
  t.is((await json('get', 'rs', '-l', 'app=web')).items.length, 4);
  t.is(d.metadata.annotations['deployment.kubernetes.io/revision'], '5');
});

test.serial('describe deployment: strategy, conditions, new and old ReplicaSets', async (t) => {
  const out = await ok('describe', 'deployment', 'web');
  t.regex(out, /^Replicas:\s+5 desired \| 5 updated \| 5 total \| 5 available \| 0 unavailable$/m);
  t.regex(out, /^StrategyType:\s+RollingUpdate$/m);
  t.regex(out, /^RollingUpdateStrategy:\s+25% max unavailable, 25% max surge$/m);
  t.regex(out, /^\s+Available\s+True\s+MinimumReplicasAvailable$/m);
  t.regex(out, /^\s+Progressing\s+True\s+NewReplicaSetAvailable$/m);
  t.regex(out, /^NewReplicaSet:\s+web-\w+ \(5\/5 replicas created\)$/m);
  t.regex(out, /^OldReplicaSets:\s+web-\w+ \(0\/0 replicas created\)/m);
  // The Deployment controller's events, written through the event recorder as deployment-controller.
  const described = await eventually('describe shows the scaling events', async () => {
    const text = await ok('describe', 'deployment', 'web');
    return /Normal\s+ScalingReplicaSet\s+\S+\s+deployment-controller\s+Scaled up replica set web-\w+ from 0 to 3/.test(text) ? text : undefined;
  }, 30_000);
  t.regex(described, /^Events:\n\s+Type\s+Reason\s+Age\s+From\s+Message/m);
  const rsOut = await ok('describe', 'rs', '-l', 'app=web');
  t.regex(rsOut, /Normal\s+SuccessfulCreate\s+\S+\s+replicaset-controller\s+Created pod: web-\w+-\w+/);
});

test.serial('kubectl apply -f of one multi-document file with all five workload kinds; each runs; delete -f removes them and what they made', async (t) => {
  t.timeout(180_000);
  const tpl = (app: string, extra = '') => ['  template:', `    metadata: {labels: {app: ${app}}${extra}}`, '    spec:', `      containers: [{name: c, image: busybox}]`].join('\n');
  const docs = [
    ['apiVersion: apps/v1', 'kind: Deployment', 'metadata: {name: mix-deploy}', 'spec:', '  replicas: 2', '  selector: {matchLabels: {app: mix-deploy}}', tpl('mix-deploy')].join('\n'),
    ['apiVersion: apps/v1', 'kind: StatefulSet', 'metadata: {name: mix-sts}', 'spec:', '  replicas: 2', '  serviceName: mix-sts', '  selector: {matchLabels: {app: mix-sts}}', tpl('mix-sts')].join('\n'),
    ['apiVersion: apps/v1', 'kind: DaemonSet', 'metadata: {name: mix-ds}', 'spec:', '  selector: {matchLabels: {app: mix-ds}}', tpl('mix-ds')].join('\n'),
    // The simulator ends the Job's container after 200 ms with exit code 0 (sim.svc.io/exit-after-ms).
    ['apiVersion: batch/v1', 'kind: Job', 'metadata: {name: mix-job}', 'spec:', '  completions: 2', '  template:', "    metadata: {annotations: {sim.svc.io/exit-after-ms: '200'}}", '    spec:', '      restartPolicy: Never', '      containers: [{name: c, image: busybox}]'].join('\n'),
    ['apiVersion: batch/v1', 'kind: CronJob', 'metadata: {name: mix-cron}', 'spec:', "  schedule: '@hourly'", '  jobTemplate:', '    spec:', '      template:', '        spec:', '          restartPolicy: OnFailure', '          containers: [{name: c, image: busybox}]'].join('\n'),
  ].join('\n---\n');
  const applied = await kubectlRun(s.kubeconfig, ['-n', 'apps', 'apply', '-f', '-'], { input: docs });
  t.is(applied.code, 0, applied.stderr);
  for (const kind of ['deployment.apps/mix-deploy', 'statefulset.apps/mix-sts', 'daemonset.apps/mix-ds', 'job.batch/mix-job', 'cronjob.batch/mix-cron']) t.true(applied.stdout.includes(`${kind} created`), applied.stdout);
  await ok('rollout', 'status', 'deployment/mix-deploy', '--timeout=90s');
  await ok('rollout', 'status', 'statefulset/mix-sts', '--timeout=90s');
  await ok('rollout', 'status', 'daemonset/mix-ds', '--timeout=90s');
  await ok('wait', '--for=condition=complete', 'job/mix-job', '--timeout=90s');
  t.is((await livePods('app=mix-ds')).length, 2, 'one daemon pod per node');
  t.deepEqual((await livePods('app=mix-sts')).map((p) => p.metadata.name).sort(), ['mix-sts-0', 'mix-sts-1']);
  t.like((await json('get', 'job', 'mix-job')).status, { succeeded: 2 });
  t.regex(await ok('get', 'cronjob', 'mix-cron'), /^mix-cron\s+@hourly\s+\S+\s+False\s+0\s+<none>/m);
  const deleted = await kubectlRun(s.kubeconfig, ['-n', 'apps', 'delete', '-f', '-', '--wait=true', '--timeout=90s'], { input: docs });
  t.is(deleted.code, 0, deleted.stderr);
  await eventually('the workloads\' pods are gone', async () => {
    const left = (await json('get', 'pods')).items.filter((p: any) => /^mix-/.test(p.metadata.name));
    return left.length === 0 ? true : undefined;
  }, 90_000);
  t.is((await json('get', 'rs', '-l', 'app=mix-deploy')).items.length, 0);
});

test.serial('kubectl apply switching a defaulted RollingUpdate to Recreate: the $retainKeys kubectl sends drops the defaulted rollingUpdate', async (t) => {
  const manifest = (strategy: string) =>
    ['apiVersion: apps/v1', 'kind: Deployment', 'metadata: {name: applied}', 'spec:', '  replicas: 1', `  strategy: ${strategy}`, '  selector: {matchLabels: {app: applied}}', '  template:', '    metadata: {labels: {app: applied}}', '    spec: {containers: [{name: c, image: busybox}]}', ''].join('\n');
  const apply = (strategy: string) => kubectlRun(s.kubeconfig, ['-n', 'apps', 'apply', '-f', '-'], { input: manifest(strategy) });
  // The first manifest leaves the strategy to the server's defaults (RollingUpdate, 25%/25%), so
  // kubectl's last-applied state has no rollingUpdate to remove: only $retainKeys drops it.
  const first = await apply('{}');
  t.is(first.code, 0, first.stderr);
  const second = await apply('{type: Recreate}');
  t.is(second.code, 0, second.stderr);
  t.deepEqual((await json('get', 'deployment', 'applied')).spec.strategy, { type: 'Recreate' });
  await ok('delete', 'deployment', 'applied');
});

test.serial('delete --cascade: orphan keeps ReplicaSets and pods, foreground and background take them', async (t) => {
  t.timeout(120_000);
  for (const name of ['orphan', 'fg', 'bg']) {
    await ok('create', 'deployment', name, '--image=busybox', '--replicas=2');
    await ok('rollout', 'status', `deployment/${name}`, '--timeout=90s');
  }
  await ok('delete', 'deployment', 'orphan', '--cascade=orphan');
  const kept = await eventually('the orphaned ReplicaSet released', async () => {
    const rs = (await json('get', 'rs', '-l', 'app=orphan')).items;
    return rs.length === 1 && !rs[0].metadata.ownerReferences ? rs : undefined;
  }, 60_000);
  t.is(kept.length, 1);
  t.is((await livePods('app=orphan')).length, 2);
  await ok('delete', 'deployment', 'fg', '--cascade=foreground', '--wait=true', '--timeout=90s');
  t.is((await json('get', 'rs', '-l', 'app=fg')).items.length, 0, 'foreground: the ReplicaSet went before the Deployment');
  t.is((await json('get', 'pods', '-l', 'app=fg')).items.length, 0, 'foreground: the pods went before the Deployment');
  await ok('delete', 'deployment', 'bg', '--cascade=background');
  await eventually('the background cascade', async () => {
    const rs = (await json('get', 'rs', '-l', 'app=bg')).items;
    const pods = await json('get', 'pods', '-l', 'app=bg');
    return rs.length === 0 && pods.items.length === 0 ? true : undefined;
  }, 60_000);
  t.is((await json('get', 'rs', '-l', 'app=bg')).items.length, 0, 'background: the ReplicaSet went after the Deployment');
  t.is((await json('get', 'pods', '-l', 'app=bg')).items.length, 0, 'background: the pods went too');
});
