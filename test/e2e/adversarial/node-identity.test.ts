/**
 * Adversarial probe, node identities (issue 16, defects 4 and 5): a real svc-apiserver with the
 * default authorization (Node,RBAC) and a node client certificate signed by its CA, as a stolen
 * node credential would be. The node may not mint service account tokens through a mirror pod
 * (no account, not even "default", no secrets, config maps, claims, trust bundles; the owner
 * reference names its Node with the Node's uid), and may change only the status of its pods
 * (never their labels or annotations). Bounded: one server, a fixed list of requests.
 */
import test from 'ava';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { kubeconfig } from '../../../apiserver/pki/bootstrap';
import { issue } from '../../../apiserver/pki/certs';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { call } from '../../helpers/http';
import { startAgent } from '../agent/agent-process';

const NS = 'victim';
const merge = { 'content-type': 'application/merge-patch+json' };
let s: RunningApiServer;
let n1: Agent;
let nodeUid = '';

async function nodeCert(name: string): Promise<{ certPem: string; keyPem: string }> {
  const ca = { certPem: readFileSync(join(s.dataDir, 'pki', 'ca.crt'), 'utf8'), keyPem: readFileSync(join(s.dataDir, 'pki', 'ca.key'), 'utf8') };
  return issue(ca, { commonName: `system:node:${name}`, organizations: ['system:nodes'], usage: 'client', validityMs: 3600_000 });
}

async function nodeAgent(name: string): Promise<Agent> {
  const kp = await nodeCert(name);
  return new Agent({ connect: { ca: s.caPem, cert: kp.certPem, key: kp.keyPem, servername: 'localhost' } });
}

/** Polls (bounded by count) until fn gives a value. */
async function eventually<T>(fn: () => Promise<T | undefined>, what: string, tries = 150): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await fn();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`gave up waiting for ${what}`);
}

function mirrorPod(name: string, spec: Record<string, unknown> = {}, meta: Record<string, unknown> = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      annotations: { 'svc.io/config.mirror': 'hash' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: nodeUid, controller: true }],
      ...meta,
    },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }], ...spec },
  };
}

test.before(async () => {
  s = await startApiServer();
  n1 = await nodeAgent('n1');
  const ns = await call(s.admin, 'POST', `${s.url}/api/v1/namespaces`, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  if (ns.status !== 201) throw new Error(`namespace: ${ns.status} ${ns.text}`);
  // The default account the exploit was after: the controller creates it with the namespace.
  await eventually(async () => ((await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/${NS}/serviceaccounts/default`)).status === 200 ? true : undefined), 'the default service account');
  const reg = await call(n1, 'POST', `${s.url}/api/v1/nodes`, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { 'svc.io/hostname': 'n1' } } });
  if (reg.status !== 201) throw new Error(`node registration: ${reg.status} ${reg.text}`);
  nodeUid = reg.body.metadata.uid;
});

test.after.always(async () => {
  await n1?.close();
  await s?.stop();
});

test.serial('a node cannot mint the default service account token of a namespace through a mirror pod', async (t) => {
  const created = await call(n1, 'POST', `${s.url}/api/v1/namespaces/${NS}/pods`, mirrorPod('static-web'));
  t.is(created.status, 201, created.text);
  t.is(created.body.spec.serviceAccountName, undefined, 'a mirror pod runs with no service account');
  t.false(JSON.stringify(created.body.spec.volumes ?? []).includes('serviceAccountToken'), 'and gets no token volume');
  const token = await call(n1, 'POST', `${s.url}/api/v1/namespaces/${NS}/serviceaccounts/default/token`, {
    apiVersion: 'authentication.svc.io/v1',
    kind: 'TokenRequest',
    spec: { audiences: [], boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'static-web', uid: created.body.metadata.uid } },
  });
  t.is(token.status, 403, token.text);
  t.is(token.body?.status?.token, undefined);
});

test.serial('every reference a mirror pod may not carry is refused with 403 naming it', async (t) => {
  const refused: [string, ReturnType<typeof mirrorPod>, RegExp][] = [
    ['sa-default', mirrorPod('sa-default', { serviceAccountName: 'default' }), /node "n1" can not create pods that reference a service account/],
    ['sa-builder', mirrorPod('sa-builder', { serviceAccount: 'builder' }), /can not create pods that reference a service account/],
    ['secret-vol', mirrorPod('secret-vol', { volumes: [{ name: 'v', secret: { secretName: 's' } }] }), /can not create pods that reference secrets/],
    ['pull-secret', mirrorPod('pull-secret', { imagePullSecrets: [{ name: 's' }] }), /can not create pods that reference secrets/],
    ['cm-env', mirrorPod('cm-env', { containers: [{ name: 'c', image: 'busybox', env: [{ name: 'E', valueFrom: { configMapKeyRef: { name: 'cm', key: 'k' } } }] }] }), /can not create pods that reference configmaps/],
    ['projected-cm', mirrorPod('projected-cm', { volumes: [{ name: 'v', projected: { sources: [{ configMap: { name: 'kube-root-ca.crt' } }] } }] }), /can not create pods that reference configmaps/],
    ['trust-bundle', mirrorPod('trust-bundle', { volumes: [{ name: 'v', projected: { sources: [{ clusterTrustBundle: { name: 'b', path: 'ca.pem' } }] } }] }), /can not create pods that reference clustertrustbundles/],
    ['claim', mirrorPod('claim', { volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'data' } }] }), /can not create pods that reference persistentvolumeclaims/],
    ['wrong-uid', mirrorPod('wrong-uid', {}, { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'wrong-uid', controller: true }] }), /node n1 UID mismatch: expected .+ got wrong-uid/],
    ['no-owner', mirrorPod('no-owner', {}, { ownerReferences: [] }), /can only create pods with an owner reference set to itself/],
    ['not-controller', mirrorPod('not-controller', {}, { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: nodeUid }] }), /controller owner reference/],
  ];
  for (const [name, body, re] of refused) {
    const r = await call(n1, 'POST', `${s.url}/api/v1/namespaces/${NS}/pods`, body);
    t.is(r.status, 403, `${name}: ${r.text}`);
    t.like(r.body, { kind: 'Status', reason: 'Forbidden', code: 403 }, name);
    t.regex(r.body?.message ?? '', re, name);
    t.is((await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/${NS}/pods/${name}`)).status, 404, `${name} was not stored`);
  }
});

test.serial("a node changes its pods' status, never their labels or annotations", async (t) => {
  const pod = await call(s.admin, 'POST', `${s.url}/api/v1/namespaces/${NS}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', labels: { app: 'web' }, annotations: { owner: 'team-a' } },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }] },
  });
  t.is(pod.status, 201, pod.text);
  const url = `${s.url}/api/v1/namespaces/${NS}/pods/web/status`;
  const relabel = await call(n1, 'PATCH', url, { metadata: { labels: { app: 'payments' } } }, merge);
  t.is(relabel.status, 403, relabel.text);
  t.regex(relabel.body.message, /node "n1" cannot update metadata\.labels through pods\/status/);
  const unlabel = await call(n1, 'PATCH', url, { metadata: { labels: null } }, merge);
  t.is(unlabel.status, 403, unlabel.text);
  const annotate = await call(n1, 'PATCH', url, { metadata: { annotations: { owner: 'team-b' } } }, merge);
  t.is(annotate.status, 403, annotate.text);
  t.regex(annotate.body.message, /cannot update metadata\.annotations through pods\/status/);
  const claims = await call(n1, 'PATCH', url, { status: { resourceClaimStatuses: [{ name: 'gpu', resourceClaimName: 'someone-elses' }] } }, merge);
  t.is(claims.status, 403, claims.text);
  t.regex(claims.body.message, /cannot update status\.resourceClaimStatuses through pods\/status/);
  // A PUT of the whole object is held to the same rule.
  const current = (await call(n1, 'GET', `${s.url}/api/v1/namespaces/${NS}/pods/web`)).body;
  const put = await call(n1, 'PUT', url, { ...current, metadata: { ...current.metadata, labels: { app: 'payments' } } });
  t.is(put.status, 403, put.text);
  const after = await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/${NS}/pods/web`);
  t.deepEqual(after.body.metadata.labels, { app: 'web' });
  t.deepEqual(after.body.metadata.annotations, { owner: 'team-a' });
  // The status itself is the node's to write, together with labels and annotations left as they are.
  const ok = await call(n1, 'PATCH', url, { metadata: { labels: { app: 'web' } }, status: { phase: 'Running' } }, merge);
  t.is(ok.status, 200, ok.text);
  t.is(ok.body.status.phase, 'Running');
});

test.serial('through nodes/status a node writes its status, annotations and kubelet labels, not restricted labels', async (t) => {
  const url = `${s.url}/api/v1/nodes/n1/status`;
  const ok = await call(n1, 'PATCH', url, { metadata: { annotations: { 'svc.io/note': 'x' }, labels: { 'svc.io/arch': 'amd64' } }, status: { conditions: [{ type: 'Ready', status: 'True' }] } }, merge);
  t.is(ok.status, 200, ok.text);
  const restricted = await call(n1, 'PATCH', url, { metadata: { labels: { 'node-restriction.svc.io/trusted': 'yes' } } }, merge);
  t.is(restricted.status, 403, restricted.text);
  t.regex(restricted.body.message, /is not allowed to modify labels: node-restriction\.svc\.io\/trusted/);
});

test.serial('svc-node itself makes mirror pods NodeRestriction accepts: controlled by its Node with the uid, no account, status written', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-node-identity-'));
  const manifests = join(dir, 'manifests');
  mkdirSync(manifests);
  writeFileSync(join(manifests, 'static-web.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: static-web\nspec:\n  containers:\n  - name: c\n    image: svc.local/busybox:latest\n');
  const kc = join(dir, 'node.kubeconfig');
  writeFileSync(kc, kubeconfig({ server: s.url, caPem: s.caPem, user: 'system:node:n2', ...(await nodeCert('n2')) }), { mode: 0o600 });
  const agent = startAgent({ dir, nodeName: 'n2', kubeconfig: kc, args: ['--node-ip=127.0.0.1'], configLines: [`staticPodPath: ${manifests}`, 'fileCheckFrequency: 1s'] });
  t.teardown(async () => {
    await agent.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  const mirror = await eventually(async () => {
    const r = await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/default/pods/static-web-n2`);
    return r.status === 200 && r.body.status?.phase === 'Running' ? r.body : undefined;
  }, 'the mirror pod of the static pod, Running', 400);
  const node = await call(s.admin, 'GET', `${s.url}/api/v1/nodes/n2`);
  t.deepEqual(mirror.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: 'n2', uid: node.body.metadata.uid, controller: true }]);
  t.is(mirror.spec.serviceAccountName, undefined);
  t.false(agent.output().includes('can not create pods'), 'no mirror pod was refused');
});
