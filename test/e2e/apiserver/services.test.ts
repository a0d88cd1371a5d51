import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { request } from 'undici';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { kubectlOk } from '../../helpers/real-clients';

// Service allocation through a real svc-apiserver and the real kubectl (/usr/bin/kubectl), across a restart on the same data dir.
const run = promisify(execFile);
let s: RunningApiServer;
let dataDir: string;
const serverArgs = ['--service-node-port-range=30000-30100', '--advertise-address=192.0.2.10', '--cluster-cidr=10.244.0.0/16'];

test.before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-services-'));
  s = await startApiServer({ dataDir, args: serverArgs });
});
test.after.always(async () => {
  await s?.stop();
  rmSync(dataDir, { recursive: true, force: true });
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

function inServiceRange(ip: string): boolean {
  const [a, b] = ip.split('.').map(Number);
  return a === 10 && b >= 96 && b <= 111;
}

test.serial('kubectl get svc kubernetes: the first address of the range, port 443, the API server as its endpoint', async (t) => {
  let eps = '';
  for (let i = 0; i < 100 && !eps.includes(`192.0.2.10:${s.port}`); i++) {
    eps = await kubectl('get', 'endpoints', 'kubernetes', '-n', 'default').catch(() => '');
    if (!eps.includes(`192.0.2.10:${s.port}`)) await new Promise((r) => setTimeout(r, 100));
  }
  t.regex(eps, new RegExp(`kubernetes\\s+192\\.0\\.2\\.10:${s.port}`));
  const row = (await kubectl('get', 'svc', 'kubernetes', '-n', 'default')).split('\n')[1].split(/\s+/);
  t.deepEqual(row.slice(0, 5), ['kubernetes', 'ClusterIP', '10.96.0.1', '<none>', '443/TCP']);
});

test.serial('kubectl expose and create service show a cluster IP; a NodePort service gets a port in range', async (t) => {
  await kubectl('create', 'deployment', 'web', '--image=nginx:1.27');
  await kubectl('expose', 'deployment', 'web', '--port=80');
  const table = await kubectl('get', 'svc', 'web');
  const row = table.split('\n')[1].split(/\s+/);
  t.is(row[1], 'ClusterIP');
  t.true(inServiceRange(row[2]), `CLUSTER-IP ${row[2]}`);
  await kubectl('create', 'service', 'clusterip', 'fixed', '--tcp=80:8080', '--clusterip=10.96.0.50');
  t.is(await kubectl('get', 'svc', 'fixed', '-o', 'jsonpath={.spec.clusterIP}'), '10.96.0.50');
  await kubectl('create', 'service', 'nodeport', 'np', '--tcp=80:80');
  const port = Number(await kubectl('get', 'svc', 'np', '-o', 'jsonpath={.spec.ports[0].nodePort}'));
  t.true(port >= 30000 && port <= 30100, `nodePort ${port}`);
  t.regex(await kubectl('get', 'svc', 'np'), new RegExp(`80:${port}/TCP`));
});

test.serial('a taken cluster IP is refused with upstream message, also after a restart; a deleted service gives its address back', async (t) => {
  const refused = await kubectlFails('create', 'service', 'clusterip', 'taken', '--tcp=80', '--clusterip=10.96.0.50');
  t.regex(refused, /Service "taken" is invalid: spec\.clusterIPs: Invalid value: \["10\.96\.0\.50"\]: failed to allocate IP 10\.96\.0\.50: provided IP is already allocated/);
  const outside = await kubectlFails('create', 'service', 'nodeport', 'far', '--tcp=80', '--node-port=31000');
  t.regex(outside, /spec\.ports\[0\]\.nodePort: Invalid value: 31000: provided port is not in the valid range\. The range of valid ports is 30000-30100/);
  const port = s.port;
  await s.stop();
  s = await startApiServer({ dataDir, port, args: serverArgs });
  t.is(await kubectl('get', 'svc', 'fixed', '-o', 'jsonpath={.spec.clusterIP}'), '10.96.0.50');
  t.regex(await kubectlFails('create', 'service', 'clusterip', 'taken', '--tcp=80', '--clusterip=10.96.0.50'), /provided IP is already allocated/);
  await kubectl('delete', 'svc', 'fixed');
  // The release follows the delete event in the allocation controller: bounded retries, no sleeps on a timer alone.
  let created = '';
  for (let i = 0; i < 50 && !created; i++) {
    created = await kubectl('create', 'service', 'clusterip', 'taken', '--tcp=80', '--clusterip=10.96.0.50').catch(() => '');
    if (!created) await new Promise((r) => setTimeout(r, 100));
  }
  t.regex(created, /service\/taken created/);
});

/** Writes a pod's status as svc-node would: its address and Ready condition. */
async function setPodStatus(name: string, ip: string, ready: boolean): Promise<void> {
  const status = { phase: 'Running', podIP: ip, podIPs: [{ ip }], conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] };
  const res = await request(`${s.url}/api/v1/namespaces/default/pods/${name}/status`, {
    method: 'PATCH',
    dispatcher: s.admin,
    headers: { 'content-type': 'application/merge-patch+json' },
    body: JSON.stringify({ status }),
  });
  if (res.statusCode !== 200) throw new Error(`status of ${name}: ${res.statusCode} ${await res.body.text()}`);
  await res.body.dump();
}

async function waitForEndpoints(name: string, want: RegExp): Promise<string> {
  let out = '';
  for (let i = 0; i < 100 && !want.test(out); i++) {
    out = await kubectl('get', 'endpoints', name, '-o', 'wide').catch(() => '');
    if (!want.test(out)) await new Promise((r) => setTimeout(r, 100));
  }
  return out;
}

test.serial('kubectl get endpoints lists the ready pods a service selects, on their named target port, and follows readiness', async (t) => {
  for (const [name, port] of [['ep-a', 8080], ['ep-b', 8080]] as const) {
    const manifest = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default', labels: { app: 'ep' } },
      spec: { containers: [{ name: 'c', image: 'busybox:1.36', ports: [{ name: 'http', containerPort: port }] }] },
    });
    await run('/bin/sh', ['-c', `echo '${manifest}' | /usr/bin/kubectl --kubeconfig ${s.kubeconfig} create -f -`]);
  }
  await kubectl('create', 'service', 'clusterip', 'ep', '--tcp=80:http');
  await setPodStatus('ep-a', '10.244.0.10', true);
  await setPodStatus('ep-b', '10.244.0.11', false);
  t.regex(await waitForEndpoints('ep', /10\.244\.0\.10:8080/), /ep\s+10\.244\.0\.10:8080\s/);
  await setPodStatus('ep-b', '10.244.0.11', true);
  t.regex(await waitForEndpoints('ep', /10\.244\.0\.11/), /10\.244\.0\.10:8080,10\.244\.0\.11:8080/);
  const nr = JSON.parse(await kubectl('get', 'endpoints', 'ep', '-o', 'json'));
  t.deepEqual(nr.subsets[0].addresses.map((a: { targetRef: { name: string } }) => a.targetRef.name), ['ep-a', 'ep-b']);
  await kubectl('delete', 'svc', 'ep');
  let gone = '';
  for (let i = 0; i < 100 && !gone.includes('NotFound'); i++) {
    gone = await kubectlFails('get', 'endpoints', 'ep').catch(() => '');
    if (!gone.includes('NotFound')) await new Promise((r) => setTimeout(r, 100));
  }
  t.regex(gone, /NotFound/);
});

async function podCidr(node: string): Promise<string> {
  let cidr = '';
  for (let i = 0; i < 100 && !cidr; i++) {
    cidr = await kubectl('get', 'node', node, '-o', 'jsonpath={.spec.podCIDR}').catch(() => '');
    if (!cidr) await new Promise((r) => setTimeout(r, 100));
  }
  return cidr;
}

test.serial('nodes get podCIDRs from --cluster-cidr, one each, kept across a restart', async (t) => {
  const node = (name: string) => run('/bin/sh', ['-c', `echo '${JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name } })}' | /usr/bin/kubectl --kubeconfig ${s.kubeconfig} create -f -`]);
  await node('n1');
  const first = await podCidr('n1');
  t.regex(first, /^10\.244\.\d+\.0\/24$/);
  const port = s.port;
  await s.stop();
  s = await startApiServer({ dataDir, port, args: serverArgs });
  await node('n2');
  const second = await podCidr('n2');
  t.regex(second, /^10\.244\.\d+\.0\/24$/);
  t.not(second, first);
  t.is(await kubectl('get', 'node', 'n1', '-o', 'jsonpath={.spec.podCIDRs[0]}'), first);
});
