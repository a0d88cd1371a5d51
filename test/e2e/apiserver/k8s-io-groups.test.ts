import test from 'ava';
import { execFile } from 'node:child_process';
import { webcrypto } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';
import { request } from 'undici';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { eventually } from '../agent/agent-process';
import { startNode, type NodeUnderTest } from '../checkpoint/checkpoint-env';

// Issue 17, item 3: stock clients, which name the groups under k8s.io and the labels and taints
// under kubernetes.io, against a real svc-apiserver (and a real svc-node on the CRI simulator).
// Each client runs as a process with a bounded timeout; each wait is bounded.

const SDK = '/usr/lib/google-cloud-sdk/bin';
/** kubectl 1.32 (/usr/bin/kubectl) posts protobuf for typed creates (auth whoami, create role, certificate approve, ...). */
const KUBECTL_132 = '/usr/bin/kubectl';
/** kubectl 1.31 posts the same requests as JSON: the k8s.io names tested with and without the protobuf codec. */
const KUBECTL_131 = `${SDK}/kubectl.1.31`;
const KUBECTL_127 = `${SDK}/kubectl.1.27`;
const PYTHON = '/usr/bin/python3'; // Debian's, with python3-kubernetes (not the pyenv one on PATH)
const NODE = 'groups-node';

let s: RunningApiServer;
let node: NodeUnderTest;
let dir: string;

test.before(async () => {
  s = await startApiServer();
  dir = mkdtempSync(join(tmpdir(), 'svc-k8s-io-'));
  node = await startNode(s, join(dir, 'node'), NODE);
});
test.after.always(async () => {
  await node?.agent.stop();
  await s?.stop();
});

function run(bin: string, args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = execFile(bin, args, { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${bin} ${args.join(' ')} failed: ${stderr}${stdout}${err.message}`));
      else resolve(stdout);
    });
    p.stdin!.end(input ?? '');
  });
}

const kubectl = (bin: string, ...args: string[]) => run(bin, ['--kubeconfig', s.kubeconfig, ...args]);
const kubectlIn = (bin: string, input: string, ...args: string[]) => run(bin, ['--kubeconfig', s.kubeconfig, ...args], input);

/** kubectl with -v=8: its stdout, and how many requests it logged sending with a protobuf body. */
function kubectlLogged(bin: string, ...args: string[]): Promise<{ stdout: string; protobufRequests: number }> {
  return new Promise((resolve, reject) => {
    const p = execFile(bin, ['--kubeconfig', s.kubeconfig, '-v=8', ...args], { encoding: 'utf8', timeout: 60_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${bin} ${args.join(' ')} failed: ${stderr}${stdout}${err.message}`));
      else resolve({ stdout, protobufRequests: protobufRequests(stderr) });
    });
    p.stdin!.end();
  });
}

/** Counts request headers (logged after "<METHOD> <url>", before "Response Status") naming a protobuf body. */
function protobufRequests(log: string): number {
  let inRequest = false;
  let n = 0;
  for (const line of log.split('\n')) {
    if (/\] (GET|POST|PUT|PATCH|DELETE) https:\/\//.test(line)) inRequest = true;
    else if (/Response Status:/.test(line)) inRequest = false;
    else if (inRequest && /Content-Type: application\/vnd\.kubernetes\.protobuf$/.test(line)) n++;
  }
  return n;
}

async function get(path: string): Promise<{ status: number; body: any }> {
  const res = await request(`${s.url}${path}`, { dispatcher: s.admin });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
}

async function csrPem(cn: string): Promise<string> {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']);
  return (await x509.Pkcs10CertificateRequestGenerator.create({ name: `CN=${cn}`, keys, signingAlgorithm: alg })).toString('pem');
}

test.serial('kubectl auth whoami: the SelfSubjectReview of authentication.k8s.io (protobuf from 1.32, v1 from 1.31, v1beta1 from 1.27)', async (t) => {
  const logged = await kubectlLogged(KUBECTL_132, 'auth', 'whoami', '-o', 'json');
  t.is(logged.protobufRequests, 1, 'kubectl 1.32 posts the review as protobuf');
  t.is((JSON.parse(logged.stdout) as { status: { userInfo: { username: string } } }).status.userInfo.username, 'svc-admin');
  for (const bin of [KUBECTL_132, KUBECTL_131, KUBECTL_127]) {
    const out = await kubectl(bin, 'auth', 'whoami', '-o', 'json');
    const review = JSON.parse(out) as { apiVersion: string; status: { userInfo: { username: string; groups: string[] } } };
    t.regex(review.apiVersion, /^authentication\.k8s\.io\/v1(beta1)?$/, bin);
    t.is(review.status.userInfo.username, 'svc-admin', bin);
    t.true(review.status.userInfo.groups.includes('system:masters'), bin);
  }
});

test.serial('kubectl create role, rolebinding, clusterrole, clusterrolebinding: rbac.authorization.k8s.io objects that grant, read through both names', async (t) => {
  await kubectl(KUBECTL_132, 'create', 'namespace', 'team');
  // kubectl 1.31 posts its generated objects as JSON.
  t.regex(await kubectl(KUBECTL_131, 'create', 'role', 'lease-reader', '-n', 'team', '--verb=get,list', '--resource=leases.coordination.k8s.io'), /role\.rbac\.authorization\.k8s\.io\/lease-reader created/);
  t.regex(await kubectl(KUBECTL_131, 'create', 'rolebinding', 'ann-leases', '-n', 'team', '--role=lease-reader', '--user=ann'), /rolebinding\.rbac\.authorization\.k8s\.io\/ann-leases created/);
  t.regex(await kubectl(KUBECTL_131, 'create', 'clusterrole', 'csr-reader', '--verb=get,list', '--resource=certificatesigningrequests.certificates.svc.io'), /clusterrole\.rbac\.authorization\.k8s\.io\/csr-reader created/);
  t.regex(await kubectl(KUBECTL_131, 'create', 'clusterrolebinding', 'ann-csrs', '--clusterrole=csr-reader', '--user=ann'), /clusterrolebinding\.rbac\.authorization\.k8s\.io\/ann-csrs created/);
  // kubectl 1.32 posts them as protobuf.
  for (const args of [
    ['role', 'event-reader', '-n', 'team', '--verb=list', '--resource=events.events.k8s.io'],
    ['rolebinding', 'bob-events', '-n', 'team', '--role=event-reader', '--user=bob'],
    ['clusterrole', 'node-reader', '--verb=get', '--resource=nodes'],
    ['clusterrolebinding', 'bob-nodes', '--clusterrole=node-reader', '--user=bob'],
  ]) {
    const created = await kubectlLogged(KUBECTL_132, 'create', ...args);
    t.regex(created.stdout, new RegExp(`^${args[0]}\\.rbac\\.authorization\\.k8s\\.io/${args[1]} created$`, 'm'));
    t.is(created.protobufRequests, 1, `kubectl 1.32 create ${args[0]} posts protobuf`);
  }
  // Stored once, read through both names, each in its own group.
  const viaK8s = await get('/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings/ann-leases');
  const viaSvc = await get('/apis/rbac.authorization.svc.io/v1/namespaces/team/rolebindings/ann-leases');
  t.is(viaK8s.body.apiVersion, 'rbac.authorization.k8s.io/v1');
  t.is(viaSvc.body.apiVersion, 'rbac.authorization.svc.io/v1');
  t.is(viaK8s.body.metadata.uid, viaSvc.body.metadata.uid);
  t.is(viaK8s.body.roleRef.apiGroup, 'rbac.authorization.k8s.io');
  // The roles grant under both names (rules name coordination.k8s.io; a role naming certificates.svc.io grants certificates.k8s.io).
  for (const [who, verb, what, ns] of [
    ['ann', 'list', 'leases.coordination.svc.io', 'team'],
    ['ann', 'list', 'leases.coordination.k8s.io', 'team'],
    ['ann', 'get', 'certificatesigningrequests.certificates.k8s.io', ''],
    ['bob', 'list', 'events.events.svc.io', 'team'],
    ['bob', 'get', 'nodes', ''],
  ]) {
    t.is((await kubectl(KUBECTL_132, 'auth', 'can-i', verb, what, `--as=${who}`, ...(ns ? ['-n', ns] : []))).trim(), 'yes', `${who} ${verb} ${what}`);
  }
  const no = await kubectl(KUBECTL_132, 'auth', 'can-i', 'delete', 'leases.coordination.k8s.io', '--as=ann', '-n', 'team').catch((e: Error) => e.message);
  t.regex(no, /no/);
  // And the real requests, impersonated, through the k8s.io path.
  await t.notThrowsAsync(kubectl(KUBECTL_132, 'get', 'leases.coordination.k8s.io', '-n', 'team', '--as=ann'));
  const denied = await kubectl(KUBECTL_132, 'get', 'roles.rbac.authorization.k8s.io', '-n', 'team', '--as=ann').catch((e: Error) => e.message);
  t.regex(denied, /cannot list resource "roles" in API group "rbac\.authorization\.k8s\.io"/);
});

test.serial('kubectl certificate approve and deny a CSR created through certificates.k8s.io', async (t) => {
  for (const name of ['csr-approve', 'csr-deny', 'csr-approve-131', 'csr-deny-127']) {
    const csr = {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { name },
      spec: { request: Buffer.from(await csrPem(name)).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'] },
    };
    t.regex(await kubectlIn(KUBECTL_132, JSON.stringify(csr), 'create', '-f', '-'), new RegExp(`certificatesigningrequest\\.certificates\\.k8s\\.io/${name} created`));
  }
  // kubectl 1.32 reads the CSR and puts the approval sub-resource as protobuf; 1.31 and 1.27 as
  // JSON. Each looks the CSR up by its bare name, which resolves to the first group serving it in
  // discovery: certificates.k8s.io, the only one they accept.
  const approve = await kubectlLogged(KUBECTL_132, 'certificate', 'approve', 'csr-approve');
  t.regex(approve.stdout, /csr-approve approved/);
  t.is(approve.protobufRequests, 1, 'kubectl 1.32 puts the approval as protobuf');
  t.regex((await kubectlLogged(KUBECTL_132, 'certificate', 'deny', 'csr-deny')).stdout, /csr-deny denied/);
  t.regex(await kubectl(KUBECTL_131, 'certificate', 'approve', 'csr-approve-131'), /csr-approve-131 approved/);
  t.regex(await kubectl(KUBECTL_127, 'certificate', 'deny', 'csr-deny-127'), /csr-deny-127 denied/);
  const conditions = async (group: string, name: string) => {
    const csr = (await get(`/apis/${group}/v1/certificatesigningrequests/${name}`)).body;
    t.is(csr.apiVersion, `${group}/v1`);
    return csr.status.conditions.map((c: { type: string; status: string }) => [c.type, c.status]) as string[][];
  };
  t.deepEqual(await conditions('certificates.k8s.io', 'csr-approve'), [['Approved', 'True']]);
  t.deepEqual(await conditions('certificates.svc.io', 'csr-deny'), [['Denied', 'True']]);
  t.deepEqual(await conditions('certificates.k8s.io', 'csr-approve-131'), [['Approved', 'True']]);
  t.deepEqual(await conditions('certificates.svc.io', 'csr-deny-127'), [['Denied', 'True']]);
  // Upstream's signer name is the built-in client signer: the approved request gets its certificate.
  const issued = await eventually('the approved CSR signed', async () => (await get('/apis/certificates.k8s.io/v1/certificatesigningrequests/csr-approve')).body?.status?.certificate as string | undefined, 30_000, 200);
  t.regex(Buffer.from(issued, 'base64').toString('utf8'), /BEGIN CERTIFICATE/);
});

test.serial('the node agent labels its Node with both families; kubectl describe node reads it', async (t) => {
  const n = (await get(`/api/v1/nodes/${NODE}`)).body;
  for (const [svc, k8s] of [
    ['svc.io/hostname', 'kubernetes.io/hostname'],
    ['svc.io/os', 'kubernetes.io/os'],
    ['svc.io/arch', 'kubernetes.io/arch'],
  ]) {
    t.truthy(n.metadata.labels[svc], svc);
    t.is(n.metadata.labels[k8s], n.metadata.labels[svc], k8s);
  }
  t.is(n.metadata.labels['kubernetes.io/hostname'], NODE);
  const out = await kubectl(KUBECTL_132, 'describe', 'node', NODE);
  t.regex(out, new RegExp(`Name:\\s+${NODE}`));
  t.regex(out, new RegExp(`kubernetes\\.io/hostname=${NODE}`));
  t.regex(out, /kubernetes\.io\/os=linux/);
});

test.serial('a pod with nodeSelector kubernetes.io/os: linux is scheduled; tolerating node.kubernetes.io/unschedulable, onto a cordoned node', async (t) => {
  const podOf = (name: string, extra: Record<string, unknown>) =>
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default' },
      spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'app', image: 'svc.local/busybox:latest', imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }], ...extra },
    });
  await kubectlIn(KUBECTL_132, podOf('linux-only', { nodeSelector: { 'kubernetes.io/os': 'linux' } }), 'create', '-f', '-');
  await kubectlIn(KUBECTL_132, podOf('windows-only', { nodeSelector: { 'kubernetes.io/os': 'windows' } }), 'create', '-f', '-');
  const bound = await eventually('linux-only bound', async () => (await get('/api/v1/namespaces/default/pods/linux-only')).body?.spec?.nodeName as string | undefined, 30_000, 200);
  t.is(bound, NODE);
  const unschedulable = await eventually('windows-only found unschedulable', async () => {
    const p = (await get('/api/v1/namespaces/default/pods/windows-only')).body;
    const c = (p?.status?.conditions ?? []).find((x: { type: string }) => x.type === 'PodScheduled');
    return c?.status === 'False' ? (c as { reason: string; message: string }) : undefined;
  }, 30_000, 200);
  t.is(unschedulable.reason, 'Unschedulable');
  t.is((await get('/api/v1/namespaces/default/pods/windows-only')).body.spec.nodeName, undefined);

  // Cordoned: the controller taints node.svc.io/unschedulable; a toleration in upstream's spelling tolerates it.
  await kubectl(KUBECTL_132, 'cordon', NODE);
  await eventually('the unschedulable taint', async () => ((await get(`/api/v1/nodes/${NODE}`)).body.spec.taints ?? []).some((x: { key: string }) => x.key === 'node.svc.io/unschedulable') || undefined, 30_000, 200);
  await kubectlIn(KUBECTL_132, podOf('tolerant', { nodeSelector: { 'kubernetes.io/os': 'linux' }, tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }] }), 'create', '-f', '-');
  await kubectlIn(KUBECTL_132, podOf('intolerant', {}), 'create', '-f', '-');
  t.is(await eventually('tolerant bound', async () => (await get('/api/v1/namespaces/default/pods/tolerant')).body?.spec?.nodeName as string | undefined, 30_000, 200), NODE);
  const refused = await eventually('intolerant found unschedulable', async () => {
    const c = ((await get('/api/v1/namespaces/default/pods/intolerant')).body?.status?.conditions ?? []).find((x: { type: string }) => x.type === 'PodScheduled');
    return c?.status === 'False' ? (c as { message: string }) : undefined;
  }, 30_000, 200);
  t.regex(refused.message, /unschedulable|untolerated taint/);
  // DefaultTolerationSeconds added the svc.io not-ready toleration to the tolerant pod, not a second unschedulable one.
  const tolerations = (await get('/api/v1/namespaces/default/pods/tolerant')).body.spec.tolerations.map((x: { key: string }) => x.key);
  t.deepEqual(tolerations.sort(), ['node.kubernetes.io/unschedulable', 'node.svc.io/not-ready', 'node.svc.io/unreachable']);
  await kubectl(KUBECTL_132, 'uncordon', NODE);
});

test.serial('the Debian Python client: CoordinationV1Api, RbacAuthorizationV1Api, CertificatesV1Api, EventsV1Api list, create and read', async (t) => {
  const script = join(dir, 'client.py');
  writeFileSync(
    script,
    `
import json, sys
from kubernetes import client, config
config.load_kube_config(config_file=sys.argv[1])
out = {}
coord = client.CoordinationV1Api()
coord.create_namespaced_lease('team', client.V1Lease(metadata=client.V1ObjectMeta(name='py-lease'), spec=client.V1LeaseSpec(holder_identity='py', lease_duration_seconds=30)))
lease = coord.read_namespaced_lease('py-lease', 'team')
out['lease'] = [lease.api_version, lease.spec.holder_identity, [l.metadata.name for l in coord.list_namespaced_lease('team').items]]
rbac = client.RbacAuthorizationV1Api()
rbac.create_namespaced_role('team', client.V1Role(metadata=client.V1ObjectMeta(name='py-role'), rules=[client.V1PolicyRule(api_groups=['coordination.k8s.io'], resources=['leases'], verbs=['get'])]))
rbac.create_namespaced_role_binding('team', client.V1RoleBinding(metadata=client.V1ObjectMeta(name='py-binding'), role_ref=client.V1RoleRef(api_group='rbac.authorization.k8s.io', kind='Role', name='py-role'), subjects=[client.V1Subject(api_group='rbac.authorization.k8s.io', kind='User', name='carol')]))
role = rbac.read_namespaced_role('py-role', 'team')
out['rbac'] = [role.api_version, sorted(r.metadata.name for r in rbac.list_namespaced_role('team').items), rbac.read_namespaced_role_binding('py-binding', 'team').role_ref.api_group]
certs = client.CertificatesV1Api()
certs.create_certificate_signing_request(client.V1CertificateSigningRequest(metadata=client.V1ObjectMeta(name='py-csr'), spec=client.V1CertificateSigningRequestSpec(request=sys.argv[2], signer_name='kubernetes.io/kube-apiserver-client', usages=['client auth'])))
csr = certs.read_certificate_signing_request('py-csr')
out['certs'] = [csr.api_version, csr.spec.signer_name, sorted(c.metadata.name for c in certs.list_certificate_signing_request().items)]
events = client.EventsV1Api()
events.create_namespaced_event('team', client.EventsV1Event(metadata=client.V1ObjectMeta(name='py-event'), event_time='2025-03-01T12:00:00.000000Z', action='Test', reason='Tested', note='from python', reporting_controller='example.com/py', reporting_instance='py-1', type='Normal', regarding=client.V1ObjectReference(kind='Lease', name='py-lease', namespace='team')))
ev = events.read_namespaced_event('py-event', 'team')
out['events'] = [ev.api_version, ev.reason, [e.metadata.name for e in events.list_namespaced_event('team').items]]
print(json.dumps(out))
`,
  );
  const request64 = Buffer.from(await csrPem('py-csr')).toString('base64');
  const out = JSON.parse(await run(PYTHON, [script, s.kubeconfig, request64])) as Record<string, unknown[]>;
  t.deepEqual(out.lease, ['coordination.k8s.io/v1', 'py', ['py-lease']]);
  t.deepEqual(out.rbac, ['rbac.authorization.k8s.io/v1', ['event-reader', 'lease-reader', 'py-role'], 'rbac.authorization.k8s.io']);
  t.is(out.certs[0], 'certificates.k8s.io/v1');
  t.is(out.certs[1], 'kubernetes.io/kube-apiserver-client');
  t.true((out.certs[2] as string[]).includes('py-csr'));
  t.deepEqual(out.events, ['events.k8s.io/v1', 'Tested', ['py-event']]);
  // What Python wrote through k8s.io is the svc.io object, and carol's binding grants.
  t.is((await get('/apis/coordination.svc.io/v1/namespaces/team/leases/py-lease')).body.spec.holderIdentity, 'py');
  t.is((await kubectl(KUBECTL_132, 'auth', 'can-i', 'get', 'leases.coordination.svc.io', '--as=carol', '-n', 'team')).trim(), 'yes');
});

test.serial('discovery and OpenAPI list both names', async (t) => {
  const groups = (await get('/apis')).body.groups.map((g: { name: string }) => g.name);
  for (const g of ['rbac.authorization', 'coordination', 'events', 'certificates', 'authentication', 'authorization']) {
    t.true(groups.includes(`${g}.svc.io`), g);
    t.true(groups.includes(`${g}.k8s.io`), g);
  }
  t.is((await get('/apis/coordination.k8s.io/v1')).body.groupVersion, 'coordination.k8s.io/v1');
  const v2 = (await get('/openapi/v2')).body;
  t.truthy(v2.paths['/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/roles/{name}']);
  t.truthy(v2.paths['/apis/rbac.authorization.svc.io/v1/namespaces/{namespace}/roles/{name}']);
  const gvks = Object.values(v2.definitions as Record<string, { 'x-kubernetes-group-version-kind': Array<{ group: string; kind: string }> }>).flatMap((d) => d['x-kubernetes-group-version-kind']);
  t.true(gvks.some((g) => g.group === 'rbac.authorization.k8s.io' && g.kind === 'Role'));
  t.true(gvks.some((g) => g.group === 'rbac.authorization.svc.io' && g.kind === 'Role'));
  const v3 = (await get('/openapi/v3')).body;
  t.truthy(v3.paths['apis/coordination.k8s.io/v1']);
  t.truthy(v3.paths['apis/coordination.svc.io/v1']);
  // kubectl explain finds the upstream group's schema.
  const explained = await kubectl(KUBECTL_132, 'explain', 'leases.coordination.k8s.io.spec');
  t.regex(explained, /holderIdentity/);
  t.notRegex(explained, /<empty>/);
});

test('--serve-k8s-io-groups=false: only the svc.io names are served and listed', async (t) => {
  const off = await startApiServer({ args: ['--serve-k8s-io-groups=false'] });
  try {
    const call = async (path: string) => {
      const res = await request(`${off.url}${path}`, { dispatcher: off.admin });
      return { status: res.statusCode, body: JSON.parse(await res.body.text()) };
    };
    t.is((await call('/apis/coordination.k8s.io/v1/namespaces/default/leases')).status, 404);
    t.is((await call('/apis/coordination.svc.io/v1/namespaces/default/leases')).status, 200);
    const groups = (await call('/apis')).body.groups.map((g: { name: string }) => g.name);
    t.false(groups.some((g: string) => g.endsWith('.k8s.io')), groups.join(' '));
    t.false(Object.keys((await call('/openapi/v3')).body.paths).some((p) => p.includes('.k8s.io')));
    // kubectl auth can-i still reaches the review API under authorization.k8s.io, as before the flag existed.
    t.is((await run(KUBECTL_132, ['--kubeconfig', off.kubeconfig, 'auth', 'can-i', 'list', 'pods'])).trim(), 'yes');
  } finally {
    await off.stop();
  }
});
