/**
 * Jobs and CronJobs end to end on the CRI simulator: a real svc-apiserver (Job, CronJob and
 * TTL-after-finished controllers, scheduler, garbage collector) and a real svc-node (sim://), driven
 * with kubectl 1.32. Pods run to completion through the simulator's sim.svc.io/exit-after-ms pod
 * annotation. Schedules firing on time are covered by the controller's unit tests (fake clock);
 * here a CronJob's Job is made with `kubectl create job --from=cronjob/x`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { kubectlOk } from '../../helpers/real-clients';
import { eventually, kubectlJson, kubectlStdin, startAgent, type AgentProcess } from '../agent/agent-process';

const NODE = 'e2e-batch';
const IMAGE = 'svc.local/busybox:latest';
/** The simulator ends each container of a pod carrying these annotations after 300 ms, with exit code 0. */
const RUN_TO_COMPLETION = { 'sim.svc.io/exit-after-ms': '300', 'sim.svc.io/exit-code': '0' };

let api: RunningApiServer | undefined;
let agent: AgentProcess | undefined;
let dir: string | undefined;
/** The server's data dir, ours so that a restarted server finds its state. */
let apiDir: string | undefined;

test.before(async () => {
  apiDir = mkdtempSync(path.join(tmpdir(), 'svc-batch-e2e-api-'));
  api = await startApiServer({ dataDir: apiDir });
  dir = mkdtempSync(path.join(tmpdir(), 'svc-batch-e2e-'));
  agent = startAgent({ dir, nodeName: NODE, kubeconfig: api.kubeconfig, configLines: ['enableServer: false'] });
  await agent.waitForLog('node registered and heartbeating', 90_000);
  // Pods need the namespace's default service account, made by its controller.
  await eventually('default service account', async () => (await kubectlJson(api!.kubeconfig, ['get', 'serviceaccount', 'default'])).metadata ?? undefined, 60_000);
});

test.after.always(async () => {
  await agent?.stop('SIGKILL');
  await api?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
  if (apiDir) rmSync(apiDir, { recursive: true, force: true });
});

function kubectl(args: string[], timeoutMs = 60_000): Promise<string> {
  return kubectlOk(api!.kubeconfig, args, { timeoutMs });
}

type Obj = { metadata: { name: string; uid: string; labels?: Record<string, string>; annotations?: Record<string, string>; ownerReferences?: Array<Record<string, unknown>> }; spec: any; status: any };

const podsOf = async (job: string) => (await kubectlJson<{ items: Obj[] }>(api!.kubeconfig, ['get', 'pods', '-l', `batch.kubernetes.io/job-name=${job}`])).items;

/** A Job manifest whose pods run to completion on the simulator. */
function completingJob(name: string, spec: Record<string, unknown> = {}): string {
  return JSON.stringify({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name },
    spec: { ...spec, template: { metadata: { annotations: RUN_TO_COMPLETION }, spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: IMAGE, imagePullPolicy: 'IfNotPresent', command: ['true'] }] } } },
  });
}

test.serial('kubectl create job: defaults, generated selector and labels, a pod running on the node, kubectl get columns', async (t) => {
  await kubectl(['create', 'job', 'pi', `--image=${IMAGE}`, '--', 'sleep', '3600']);
  const job = await kubectlJson<Obj>(api!.kubeconfig, ['get', 'job', 'pi']);
  t.like(job.spec, { completions: 1, parallelism: 1, backoffLimit: 6, completionMode: 'NonIndexed', suspend: false, manualSelector: false, podReplacementPolicy: 'TerminatingOrFailed' });
  t.deepEqual(job.spec.selector, { matchLabels: { 'batch.kubernetes.io/controller-uid': job.metadata.uid } });
  t.like(job.metadata.labels, { 'batch.kubernetes.io/job-name': 'pi', 'job-name': 'pi', 'controller-uid': job.metadata.uid });
  const [pod] = await eventually('pi pod running', async () => ((p) => (p.length === 1 && p[0].status.phase === 'Running' ? p : undefined))(await podsOf('pi')), 60_000);
  t.is(pod.spec.nodeName, NODE);
  t.deepEqual(pod.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.controller]), [['Job', 'pi', true]]);
  t.true(pod.metadata.name.startsWith('pi-'));
  const table = await eventually('pi active in the table', async () => ((out) => (/\bRunning\s+0\/1\b/.test(out) ? out : undefined))(await kubectl(['get', 'jobs'])));
  t.regex(table.split('\n')[0], /^NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE/);
  // kubectl deletes with background propagation: the pod goes too, its tracking finalizer released.
  await kubectl(['delete', 'job', 'pi']);
  await eventually('pi pods gone', async () => ((await podsOf('pi')).length === 0 ? true : undefined), 60_000);
});

test.serial('kubectl wait --for=condition=complete on a Job whose pods run to completion', async (t) => {
  await kubectlStdin(api!.kubeconfig, ['apply', '-f', '-'], completingJob('once', { completions: 2, parallelism: 2 }));
  await kubectl(['wait', '--for=condition=complete', 'job/once', '--timeout=90s'], 100_000);
  const job = await kubectlJson<Obj>(api!.kubeconfig, ['get', 'job', 'once']);
  t.like(job.status, { succeeded: 2, ready: 0, terminating: 0, uncountedTerminatedPods: {} });
  t.deepEqual(job.status.conditions.map((c: { type: string; status: string }) => [c.type, c.status]), [
    ['SuccessCriteriaMet', 'True'],
    ['Complete', 'True'],
  ]);
  t.regex(await kubectl(['get', 'job', 'once']), /once\s+Complete\s+2\/2\s+\S+\s+\S+/);
  for (const p of await podsOf('once')) {
    t.is(p.status.phase, 'Succeeded');
    t.deepEqual((p.metadata as { finalizers?: string[] }).finalizers ?? [], []);
  }
});

test.serial('an Indexed Job: one pod per index with its hostname, label and JOB_COMPLETION_INDEX; completedIndexes', async (t) => {
  await kubectlStdin(api!.kubeconfig, ['apply', '-f', '-'], completingJob('indexed', { completionMode: 'Indexed', completions: 3, parallelism: 3 }));
  await kubectl(['wait', '--for=condition=complete', 'job/indexed', '--timeout=90s'], 100_000);
  const job = await kubectlJson<Obj>(api!.kubeconfig, ['get', 'job', 'indexed']);
  t.like(job.status, { succeeded: 3, completedIndexes: '0-2' });
  const pods = await podsOf('indexed');
  t.deepEqual(pods.map((p) => p.metadata.labels?.['batch.kubernetes.io/job-completion-index']).sort(), ['0', '1', '2']);
  for (const p of pods) {
    const ix = p.metadata.annotations?.['batch.kubernetes.io/job-completion-index'];
    t.is(p.spec.hostname, `indexed-${ix}`);
    t.deepEqual(p.spec.containers[0].env, [{ name: 'JOB_COMPLETION_INDEX', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: "metadata.labels['batch.kubernetes.io/job-completion-index']" } } }]);
  }
});

test.serial('kubectl create cronjob, then kubectl create job --from=cronjob/x runs its template to completion', async (t) => {
  await kubectl(['create', 'cronjob', 'hello', `--image=${IMAGE}`, '--schedule=*/1 * * * *', '--', 'date']);
  const cj = await kubectlJson<Obj>(api!.kubeconfig, ['get', 'cronjob', 'hello']);
  t.like(cj.spec, { schedule: '*/1 * * * *', concurrencyPolicy: 'Allow', suspend: false, successfulJobsHistoryLimit: 3, failedJobsHistoryLimit: 1 });
  const table = await kubectl(['get', 'cronjobs']);
  t.regex(table.split('\n')[0], /^NAME\s+SCHEDULE\s+TIMEZONE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+AGE/);
  t.regex(table, /hello\s+\*\/1 \* \* \* \*\s+<none>\s+False\s+0\s+<none>/);
  // A CronJob whose pods complete on the simulator, started by hand.
  await kubectlStdin(
    api!.kubeconfig,
    ['apply', '-f', '-'],
    JSON.stringify({
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'nightly' },
      spec: { schedule: '0 3 * * *', timeZone: 'Europe/Paris', jobTemplate: { spec: JSON.parse(completingJob('x')).spec } },
    }),
  );
  await kubectl(['create', 'job', 'nightly-manual', '--from=cronjob/nightly']);
  const job = await kubectlJson<Obj>(api!.kubeconfig, ['get', 'job', 'nightly-manual']);
  t.is(job.metadata.annotations?.['cronjob.kubernetes.io/instantiate'], 'manual');
  const nightly = await kubectlJson<Obj>(api!.kubeconfig, ['get', 'cronjob', 'nightly']);
  t.like(job.metadata.ownerReferences?.[0], { kind: 'CronJob', name: 'nightly', uid: nightly.metadata.uid, controller: true });
  await kubectl(['wait', '--for=condition=complete', 'job/nightly-manual', '--timeout=90s'], 100_000);
  t.regex(await kubectl(['get', 'cronjob', 'nightly']), /nightly\s+0 3 \* \* \*\s+Europe\/Paris\s+False\s+0\s+<none>/);
  // A bad schedule is refused with upstream's message.
  const err = await t.throwsAsync(kubectl(['create', 'cronjob', 'bad', `--image=${IMAGE}`, '--schedule=61 * * * *']));
  t.regex(err?.message ?? '', /spec\.schedule: Invalid value: "61 \* \* \* \*": end of range \(61\) above maximum \(59\): 61/);
});

test.serial('svc-apiserver killed (kill -9) in the middle of a Job: after the restart every completion is counted once', async (t) => {
  const manifest = JSON.parse(completingJob('survivor', { completions: 5, parallelism: 1 }));
  manifest.spec.template.metadata.annotations['sim.svc.io/exit-after-ms'] = '1000';
  await kubectlStdin(api!.kubeconfig, ['apply', '-f', '-'], JSON.stringify(manifest));
  await eventually('two completions', async () => ((s) => (s >= 2 ? s : undefined))((await kubectlJson<Obj>(api!.kubeconfig, ['get', 'job', 'survivor'])).status.succeeded ?? 0), 60_000, 200);
  const { dataDir, port } = api!;
  api!.proc.kill('SIGKILL');
  await api!.stop();
  api = await startApiServer({ dataDir, port });
  await kubectl(['wait', '--for=condition=complete', 'job/survivor', '--timeout=120s'], 130_000);
  const job = await kubectlJson<Obj>(api.kubeconfig, ['get', 'job', 'survivor']);
  t.like(job.status, { succeeded: 5, uncountedTerminatedPods: {} });
  t.is(job.status.failed, undefined);
  const pods = await podsOf('survivor');
  t.is(pods.length, 5);
  t.true(pods.every((p) => p.status.phase === 'Succeeded'));
});
