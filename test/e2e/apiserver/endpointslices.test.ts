import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { request } from 'undici';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { kubectlOk } from '../../helpers/real-clients';

// EndpointSlices (and the NetworkPolicy object) through a real svc-apiserver and the real kubectl (/usr/bin/kubectl): the endpointslice controllers' view of Services.
const run = promisify(execFile);
let s: RunningApiServer;
let dataDir: string;

test.before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-endpointslices-'));
  s = await startApiServer({ dataDir, args: ['--advertise-address=192.0.2.10'] });
});
test.after.always(async () => {
  await s?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

function kubectl(...args: string[]): Promise<string> {
  return kubectlOk(s.kubeconfig, args);
}

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

interface Slice {
  metadata: { name: string; labels: Record<string, string>; ownerReferences: Array<{ kind: string; name: string; controller: boolean }> };
  addressType: string;
  endpoints?: Array<{ addresses: string[]; conditions: { ready: boolean; serving: boolean; terminating: boolean }; targetRef: { name: string } }>;
  ports?: Array<{ name: string; port: number; protocol: string }>;
}

/** Polls the service's slices (bounded count) until check holds. */
async function slicesUntil(check: (items: Slice[]) => boolean, service = 'web'): Promise<Slice[]> {
  let items: Slice[] = [];
  for (let i = 0; i < 100; i++) {
    items = (JSON.parse(await kubectl('get', 'endpointslices', '-l', `kubernetes.io/service-name=${service}`, '-o', 'json')) as { items: Slice[] }).items;
    if (check(items)) return items;
    await new Promise((r) => setTimeout(r, 100));
  }
  return items;
}

const readyPods = (items: Slice[]) =>
  items
    .flatMap((x) => x.endpoints ?? [])
    .filter((e) => e.conditions.ready)
    .map((e) => e.targetRef.name)
    .sort();

test.serial('kubectl get endpointslices -l kubernetes.io/service-name=web lists the pods of the service with their readiness, and follows it', async (t) => {
  for (const name of ['web-a', 'web-b', 'web-c']) {
    const manifest = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default', labels: { app: 'web' } },
      spec: { containers: [{ name: 'c', image: 'busybox:1.36', ports: [{ name: 'http', containerPort: 8080 }] }] },
    });
    await run('/bin/sh', ['-c', `echo '${manifest}' | /usr/bin/kubectl --kubeconfig ${s.kubeconfig} create -f -`]);
  }
  await kubectl('create', 'service', 'clusterip', 'web', '--tcp=80:http');
  await setPodStatus('web-a', '10.244.0.10', true);
  await setPodStatus('web-b', '10.244.0.11', true);
  await setPodStatus('web-c', '10.244.0.12', false);
  const items = await slicesUntil((x) => readyPods(x).length === 2 && x.flatMap((y) => y.endpoints ?? []).length === 3);
  t.deepEqual(readyPods(items), ['web-a', 'web-b']);
  t.is(items.length, 1);
  const [slice] = items;
  t.regex(slice.metadata.name, /^web-[a-z0-9]{5}$/);
  t.is(slice.metadata.labels['endpointslice.kubernetes.io/managed-by'], 'endpointslice-controller.k8s.io');
  t.deepEqual(slice.metadata.ownerReferences.map((r) => [r.kind, r.name, r.controller]), [['Service', 'web', true]]);
  t.deepEqual([slice.addressType, slice.ports], ['IPv4', [{ name: '80-http', port: 8080, protocol: 'TCP' }]]);
  const c = slice.endpoints!.find((e) => e.targetRef.name === 'web-c')!;
  t.deepEqual(c.conditions, { ready: false, serving: false, terminating: false });
  // The table as kubectl prints it, under the upstream group name too.
  const table = await kubectl('get', 'endpointslices.discovery.k8s.io', '-l', 'kubernetes.io/service-name=web');
  t.regex(table, new RegExp(`${slice.metadata.name}\\s+IPv4\\s+8080\\s+10\\.244\\.0\\.10,10\\.244\\.0\\.11,10\\.244\\.0\\.12\\s`));
  // kubectl's typed describer reads it too.
  const described = await kubectl('describe', 'endpointslices', '-l', 'kubernetes.io/service-name=web');
  t.regex(described, /AddressType:\s+IPv4/);
  t.regex(described, /TargetRef:\s+Pod\/web-c/);
  // Readiness changes follow; a pod's deletion removes its endpoint.
  await setPodStatus('web-c', '10.244.0.12', true);
  t.deepEqual(readyPods(await slicesUntil((x) => readyPods(x).length === 3)), ['web-a', 'web-b', 'web-c']);
  await kubectl('delete', 'pod', 'web-a', '--grace-period=0', '--force');
  t.deepEqual(readyPods(await slicesUntil((x) => readyPods(x).length === 2 && x.flatMap((y) => y.endpoints ?? []).length === 2)), ['web-b', 'web-c']);
});

test.serial('the kubernetes Service (no selector) gets a slice mirrored from its Endpoints: the API server address', async (t) => {
  const items = await slicesUntil((x) => x.flatMap((y) => y.endpoints ?? []).length === 1, 'kubernetes');
  t.is(items.length, 1);
  t.is(items[0].metadata.labels['endpointslice.kubernetes.io/managed-by'], 'endpointslicemirroring-controller.k8s.io');
  t.deepEqual(items[0].metadata.ownerReferences.map((r) => [r.kind, r.name, r.controller]), [['Endpoints', 'kubernetes', true]]);
  t.deepEqual(items[0].endpoints!.map((e) => [e.addresses, e.conditions.ready]), [[['192.0.2.10'], true]]);
  t.deepEqual(items[0].ports, [{ name: 'https', port: s.port, protocol: 'TCP' }]);
});

test.serial('kubectl stores a NetworkPolicy with its defaults, prints its pod selector, and refuses an ipBlock mixed with a selector', async (t) => {
  const policy = (name: string, from: unknown[]) =>
    JSON.stringify({ apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name, namespace: 'default' }, spec: { podSelector: { matchLabels: { app: 'web' } }, ingress: [{ from, ports: [{ port: 8080 }] }] } });
  await run('/bin/sh', ['-c', `echo '${policy('allow-fe', [{ podSelector: { matchLabels: { role: 'fe' } } }])}' | /usr/bin/kubectl --kubeconfig ${s.kubeconfig} create -f -`]);
  t.regex(await kubectl('get', 'netpol', 'allow-fe'), /allow-fe\s+app=web\s/);
  const stored = JSON.parse(await kubectl('get', 'networkpolicies.networking.k8s.io', 'allow-fe', '-o', 'json'));
  t.deepEqual([stored.spec.policyTypes, stored.spec.ingress[0].ports], [['Ingress'], [{ port: 8080, protocol: 'TCP' }]]);
  const refused = await run('/bin/sh', ['-c', `echo '${policy('bad', [{ podSelector: {}, ipBlock: { cidr: '10.0.0.0/8' } }])}' | /usr/bin/kubectl --kubeconfig ${s.kubeconfig} create -f - 2>&1 || true`]);
  t.regex(refused.stdout, /NetworkPolicy "bad" is invalid: spec\.ingress\[0\]\.from\[0\]: Forbidden: may not specify more than 1 peer type/);
});

test.serial('kubectl stores an IngressClass and prints its controller and parameters', async (t) => {
  const ic = JSON.stringify({ apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name: 'nginx' }, spec: { controller: 'example.com/ingress-nginx', parameters: { kind: 'ConfigMap', name: 'cfg' } } });
  await run('/bin/sh', ['-c', `echo '${ic}' | /usr/bin/kubectl --kubeconfig ${s.kubeconfig} create -f -`]);
  t.regex(await kubectl('get', 'ingressclass', 'nginx'), /nginx\s+example\.com\/ingress-nginx\s+ConfigMap\/cfg\s/);
  t.is(await kubectl('get', 'ingressclasses.networking.k8s.io', 'nginx', '-o', 'jsonpath={.spec.parameters.scope}'), 'Cluster');
});
