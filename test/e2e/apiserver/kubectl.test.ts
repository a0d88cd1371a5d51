import test from 'ava';
import { spawn, execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { kubectlOk } from '../../helpers/real-clients';

// The real kubectl (/usr/bin/kubectl) drives a real svc-apiserver process.
const run = promisify(execFile);
let s: RunningApiServer;
let dir: string;
test.before(async () => {
  s = await startApiServer();
  dir = mkdtempSync(join(tmpdir(), 'svc-kubectl-'));
});
test.after.always(async () => {
  await s?.stop();
});

function kubectl(...args: string[]): Promise<string> {
  return kubectlOk(s.kubeconfig, args);
}

async function kubectlFails(...args: string[]): Promise<string> {
  try {
    await run('/usr/bin/kubectl', ['--kubeconfig', s.kubeconfig, ...args], { timeout: 30_000 });
  } catch (err) {
    return (err as { stderr: string }).stderr;
  }
  throw new Error(`kubectl ${args.join(' ')} unexpectedly succeeded`);
}

const podYaml = `apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: kc
  labels:
    app: web
spec:
  containers:
  - name: nginx
    image: nginx:1.27
`;

test.serial('create -f, get, get -o yaml, list', async (t) => {
  // Manifests go as JSON; the imperative generators (kubectl create namespace/configmap), which
  // send protobuf, are tested in protobuf.test.ts.
  const nsFile = join(dir, 'ns.yaml');
  writeFileSync(nsFile, 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kc\n');
  t.regex(await kubectl('create', '-f', nsFile), /namespace\/kc created/);
  const f = join(dir, 'pod.yaml');
  writeFileSync(f, podYaml);
  t.regex(await kubectl('create', '-f', f), /pod\/web created/);
  const table = await kubectl('get', 'pods', '-n', 'kc');
  t.regex(table, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE/m);
  t.regex(table, /^web\s+0\/1\s+Pending\s+0\s+/m);
  const y = parseYaml(await kubectl('get', 'pod', 'web', '-n', 'kc', '-o', 'yaml'));
  t.is(y.spec.containers[0].image, 'nginx:1.27');
  t.is(y.metadata.namespace, 'kc');
  const all = await kubectl('get', 'namespaces');
  t.regex(all, /^default\s+Active/m);
  t.regex(all, /^svc-node-lease\s+Active/m);
  const err = await kubectlFails('create', '-f', f);
  t.regex(err, /already exists/);
});

test.serial('replace, label, annotate', async (t) => {
  const f = join(dir, 'pod2.yaml');
  const current = parseYaml(await kubectl('get', 'pod', 'web', '-n', 'kc', '-o', 'yaml'));
  current.spec.containers[0].image = 'nginx:1.28';
  writeFileSync(f, JSON.stringify(current));
  t.regex(await kubectl('replace', '-f', f), /pod\/web replaced/);
  t.regex(await kubectl('label', 'pod', 'web', '-n', 'kc', 'tier=front'), /pod\/web labeled/);
  t.regex(await kubectl('annotate', 'pod', 'web', '-n', 'kc', 'note=hello'), /pod\/web annotated/);
  const y = JSON.parse(await kubectl('get', 'pod', 'web', '-n', 'kc', '-o', 'json'));
  t.is(y.spec.containers[0].image, 'nginx:1.28');
  t.is(y.metadata.labels.tier, 'front');
  t.is(y.metadata.annotations.note, 'hello');
  const stale = await kubectlFails('replace', '-f', f);
  t.regex(stale, /the object has been modified|Conflict/);
  t.regex(await kubectl('get', 'pods', '-n', 'kc', '-l', 'tier=front'), /^web\s/m);
});

test.serial('patch: strategic, merge and json', async (t) => {
  await kubectl('patch', 'pod', 'web', '-n', 'kc', '-p', '{"spec":{"containers":[{"name":"nginx","image":"nginx:1.29"}]}}');
  await kubectl('patch', 'pod', 'web', '-n', 'kc', '--type=merge', '-p', '{"metadata":{"labels":{"merged":"yes"}}}');
  await kubectl('patch', 'pod', 'web', '-n', 'kc', '--type=json', '-p', '[{"op":"add","path":"/metadata/labels/json","value":"yes"}]');
  const y = JSON.parse(await kubectl('get', 'pod', 'web', '-n', 'kc', '-o', 'json'));
  t.is(y.spec.containers.length, 1);
  t.is(y.spec.containers[0].image, 'nginx:1.29');
  t.is(y.metadata.labels.merged, 'yes');
  t.is(y.metadata.labels.json, 'yes');
  const failed = await kubectlFails('patch', 'pod', 'web', '-n', 'kc', '--type=json', '-p', '[{"op":"test","path":"/metadata/labels/json","value":"no"}]');
  t.regex(failed, /test|failed/i);
});

test.serial('get -w streams changes as they happen', async (t) => {
  const w = spawn('/usr/bin/kubectl', ['--kubeconfig', s.kubeconfig, 'get', 'configmaps', '-n', 'kc', '-w', '--request-timeout=20s']);
  let out = '';
  w.stdout.on('data', (d) => (out += d));
  w.stderr.on('data', (d) => (out += d));
  await new Promise((r) => setTimeout(r, 1500));
  const cm = join(dir, 'cm.yaml');
  writeFileSync(cm, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: watched\n  namespace: kc\ndata:\n  a: b\n');
  await kubectl('create', '-f', cm);
  const end = Date.now() + 15_000;
  while (!/watched/.test(out) && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
  w.kill();
  t.regex(out, /watched/);
});

test.serial('delete and namespace teardown', async (t) => {
  t.regex(await kubectl('delete', 'configmap', 'watched', '-n', 'kc'), /deleted/);
  t.regex(await kubectl('delete', 'pod', 'web', '-n', 'kc', '--grace-period=0', '--force'), /deleted/);
  const err = await kubectlFails('get', 'pod', 'web', '-n', 'kc');
  t.regex(err, /NotFound|not found/);
  t.regex(await kubectl('delete', 'namespace', 'kc'), /deleted/);
  const end = Date.now() + 20_000;
  let gone = false;
  while (!gone && Date.now() < end) {
    gone = !(await kubectl('get', 'namespaces', '-o', 'name')).includes('namespace/kc');
    if (!gone) await new Promise((r) => setTimeout(r, 250));
  }
  t.true(gone);
});
