/**
 * ResourceQuota and LimitRange with kubectl against a real svc-apiserver (issue 20, item 2): a
 * namespace at its quota refuses a pod with upstream's message and takes one again once a pod is
 * deleted (the quota controller recounts); a LimitRange's defaults show in the created pod and
 * its max refuses a pod; the two together (defaults satisfy a quota that requires requests).
 * Admission plugins are chosen by flag: ResourceQuota disabled lets the namespace past its quota,
 * and an unknown plugin name stops the server naming the flag.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { repoRoot, startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { kubectl, kubectlOk } from '../../helpers/real-clients';
import { eventually } from '../agent/agent-process';

let s: RunningApiServer;
test.before(async () => {
  s = await startApiServer();
});
test.after.always(async () => {
  await s?.stop();
});

function k(...args: string[]): Promise<string> {
  return kubectlOk(s.kubeconfig, args);
}

async function fails(args: string[], input?: string): Promise<string> {
  const r = await kubectl(s.kubeconfig, args, { timeoutMs: 30_000, input });
  if (r.code === 0) throw new Error(`kubectl ${args.join(' ')} unexpectedly succeeded: ${r.stdout}`);
  return r.stderr;
}

const json = async (...args: string[]) => JSON.parse(await k(...args, '-o', 'json'));

const pod = (name: string, ns: string, resources?: unknown) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns }, spec: { containers: [{ name: 'app', image: 'registry.example/app:1', ...(resources ? { resources } : {}) }] } });

test.serial('a namespace at its quota refuses a pod with upstream\'s message; deleting one makes room again', async (t) => {
  await k('create', 'namespace', 'q');
  await k('create', 'quota', 'q', '--hard=pods=2,count/configmaps=5', '-n', 'q');
  await eventually('quota counted', async () => ((await json('get', 'quota', 'q', '-n', 'q')).status?.used?.pods === '0' ? true : undefined), 30_000, 200);
  await kubectl(s.kubeconfig, ['create', '-f', '-'], { input: pod('p1', 'q') });
  await kubectl(s.kubeconfig, ['create', '-f', '-'], { input: pod('p2', 'q') });
  const err = await fails(['create', '-f', '-'], pod('p3', 'q'));
  t.regex(err, /pods "p3" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2/);
  t.regex(await k('get', 'quota', 'q', '-n', 'q'), /pods: 2\/2/);
  t.regex(await k('describe', 'quota', 'q', '-n', 'q'), /pods\s+2\s+2/);

  // Unscheduled pods go at once; the controller gives their usage back.
  await k('delete', 'pod', 'p1', '-n', 'q');
  await eventually('usage given back', async () => ((await json('get', 'quota', 'q', '-n', 'q')).status.used.pods === '1' ? true : undefined), 30_000, 200);
  const r = await kubectl(s.kubeconfig, ['create', '-f', '-'], { input: pod('p3', 'q') });
  t.is(r.code, 0, r.stderr);
  // Object counts under count/<resource>.
  await k('create', 'configmap', 'c1', '-n', 'q');
  await eventually('configmaps counted', async () => ((await json('get', 'quota', 'q', '-n', 'q')).status.used['count/configmaps'] === '2' ? true : undefined), 30_000, 200);
  t.is((await json('get', 'quota', 'q', '-n', 'q')).status.used['count/configmaps'], '2');
});

test.serial('a LimitRange\'s defaults show in the created pod; its max refuses a pod; with a quota requiring requests the defaults satisfy it', async (t) => {
  await k('create', 'namespace', 'lr');
  const lr = { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'limits', namespace: 'lr' }, spec: { limits: [{ type: 'Container', max: { cpu: '1' }, default: { cpu: '500m', memory: '128Mi' }, defaultRequest: { cpu: '250m' } }] } };
  await kubectl(s.kubeconfig, ['create', '-f', '-'], { input: JSON.stringify(lr) });
  const stored = await json('get', 'limitrange', 'limits', '-n', 'lr');
  // LimitRange defaulting: the default request of memory follows its default limit.
  t.deepEqual(stored.spec.limits[0].defaultRequest, { cpu: '250m', memory: '128Mi' });

  await k('create', 'quota', 'compute', '--hard=requests.cpu=1,limits.cpu=2', '-n', 'lr');
  await eventually('quota counted', async () => ((await json('get', 'quota', 'compute', '-n', 'lr')).status?.used?.['requests.cpu'] === '0' ? true : undefined), 30_000, 200);

  const r = await kubectl(s.kubeconfig, ['create', '-f', '-'], { input: pod('plain', 'lr') });
  t.is(r.code, 0, r.stderr);
  const p = await json('get', 'pod', 'plain', '-n', 'lr');
  t.deepEqual(p.spec.containers[0].resources, { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '250m', memory: '128Mi' } });
  t.is(p.metadata.annotations['svc.io/limit-ranger'], 'LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app');
  t.like((await json('get', 'quota', 'compute', '-n', 'lr')).status.used, { 'requests.cpu': '250m', 'limits.cpu': '500m' });

  const tooBig = await fails(['create', '-f', '-'], pod('big', 'lr', { limits: { cpu: '2' } }));
  t.regex(tooBig, /pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2/);

  // Without the LimitRange, the quota requires what its hard list names.
  await k('delete', 'limitrange', 'limits', '-n', 'lr');
  const bare = await fails(['create', '-f', '-'], pod('bare', 'lr'));
  t.regex(bare, /pods "bare" is forbidden: failed quota: compute: must specify limits.cpu for: app; requests.cpu for: app/);
});

test.serial('bad input: a quota naming an unknown resource, a LimitRange whose min exceeds its max', async (t) => {
  const q = await fails(['create', 'quota', 'bad', '--hard=widgets=1', '-n', 'q']);
  t.regex(q, /spec.hard\[widgets\]: Invalid value: "widgets": must be a standard resource for quota/);
  const lr = { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'bad', namespace: 'q' }, spec: { limits: [{ type: 'Container', min: { cpu: '2' }, max: { cpu: '1' } }] } };
  const err = await fails(['create', '-f', '-'], JSON.stringify(lr));
  t.regex(err, /spec.limits\[0\].min\[cpu\]: Invalid value: "2": min value 2 is greater than max value 1/);
});

test.serial('--disable-admission-plugins=ResourceQuota lets a namespace past its quota; an unknown plugin stops the server naming the flag', async (t) => {
  const other = await startApiServer({ args: ['--disable-admission-plugins=ResourceQuota', '--enable-admission-plugins=AlwaysAdmit'] });
  t.teardown(() => other.stop());
  const run = (args: string[], input?: string) => kubectl(other.kubeconfig, args, { timeoutMs: 30_000, input });
  await run(['create', 'namespace', 'q']);
  await run(['create', 'quota', 'q', '--hard=pods=1', '-n', 'q']);
  // The controller still counts; admission no longer refuses.
  await eventually('counted', async () => (JSON.parse((await run(['get', 'quota', 'q', '-n', 'q', '-o', 'json'])).stdout).status?.used?.pods === '0' ? true : undefined), 30_000, 200);
  for (const name of ['a', 'b']) t.is((await run(['create', '-f', '-'], pod(name, 'q'))).code, 0);

  const dir = mkdtempSync(join(tmpdir(), 'svc-admission-flags-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const proc = spawn(join(repoRoot, 'bin', 'svc-apiserver'), ['--bind-address=127.0.0.1', '--secure-port=1', `--data-dir=${dir}`, '--enable-admission-plugins=NamespaceLifecycle,PodSecurityPolicy']);
  let err = '';
  proc.stderr.on('data', (d) => (err += d));
  const code = await new Promise<number | null>((r) => proc.once('exit', r));
  t.is(code, 2);
  t.regex(err, /enable-admission-plugins plugin "PodSecurityPolicy" is unknown/);
});
