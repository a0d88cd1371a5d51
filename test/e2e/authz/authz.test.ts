import test from 'ava';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Agent } from 'undici';
import { issue } from '../../../apiserver/pki/certs';
import { kubeconfig } from '../../../apiserver/pki/bootstrap';
import { startApiServer, repoRoot, type RunningApiServer } from '../../helpers/apiserver-process';
import { call } from '../../helpers/http';

// A real svc-apiserver with --authorization-mode=Node,RBAC, driven by real identities: node client
// certificates signed by the server's CA, static tokens for ordinary users, and stock kubectl.
const run = promisify(execFile);
let s: RunningApiServer;
let dir: string;
const agents: Agent[] = [];

async function eventually<T>(fn: () => Promise<T | undefined>, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function nodeAgent(name: string): Promise<{ agent: Agent; certPem: string; keyPem: string }> {
  const ca = { certPem: readFileSync(join(s.dataDir, 'pki', 'ca.crt'), 'utf8'), keyPem: readFileSync(join(s.dataDir, 'pki', 'ca.key'), 'utf8') };
  const kp = await issue(ca, { commonName: `system:node:${name}`, organizations: ['system:nodes'], usage: 'client', validityMs: 3600_000 });
  const agent = new Agent({ connect: { ca: s.caPem, cert: kp.certPem, key: kp.keyPem, servername: 'localhost' } });
  agents.push(agent);
  return { agent, ...kp };
}

function tokenAgent(): Agent {
  const a = new Agent({ connect: { ca: s.caPem, servername: 'localhost' } });
  agents.push(a);
  return a;
}

const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-authz-e2e-'));
  const tokens = join(dir, 'tokens.csv');
  writeFileSync(tokens, 'alice-token,alice,u-alice,"devs"\nbob-token,bob,u-bob\n');
  s = await startApiServer({ args: ['--authorization-mode=Node,RBAC', `--token-auth-file=${tokens}`] });
  const a = s.admin;
  await call(a, 'POST', `${s.url}/api/v1/namespaces`, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } });
  const rb = await call(a, 'POST', `${s.url}/apis/rbac.authorization.svc.io/v1/namespaces/team/rolebindings`, {
    apiVersion: 'rbac.authorization.svc.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'alice-edit' },
    roleRef: { apiGroup: 'rbac.authorization.svc.io', kind: 'ClusterRole', name: 'edit' },
    subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.svc.io', name: 'alice' }],
  });
  if (rb.status !== 201) throw new Error(`rolebinding: ${rb.status} ${rb.text}`);
});
test.after.always(async () => {
  for (const a of agents) await a.close();
  await s?.stop();
});

test.serial('anonymous callers see health but nothing else; unbound users get 403 with upstream wording', async (t) => {
  t.is((await call(s.anonymous, 'GET', `${s.url}/livez`)).status, 200);
  t.is((await call(s.anonymous, 'GET', `${s.url}/version`)).status, 200);
  t.is((await call(s.anonymous, 'GET', `${s.url}/api/v1/namespaces`)).status, 403);
  const bob = await call(tokenAgent(), 'GET', `${s.url}/api/v1/namespaces/team/pods`, undefined, bearer('bob-token'));
  t.is(bob.status, 403);
  t.is(bob.body.reason, 'Forbidden');
  t.is(bob.body.message, 'pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "team"');
  t.is((await call(tokenAgent(), 'GET', `${s.url}/apis`, undefined, bearer('bob-token'))).status, 200);
});

test.serial('a node cannot read another node\'s secrets or patch another node', async (t) => {
  const n1 = await nodeAgent('n1');
  const a = s.admin;
  // The node registers itself (create is allowed for its own name only).
  t.is((await call(n1.agent, 'POST', `${s.url}/api/v1/nodes`, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { 'svc.io/hostname': 'n1' } } })).status, 201);
  const other = await call(n1.agent, 'POST', `${s.url}/api/v1/nodes`, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n2' } });
  t.is(other.status, 403);
  t.regex(other.body.message, /node "n1" is not allowed to modify node "n2"/);
  const restricted = await call(n1.agent, 'PATCH', `${s.url}/api/v1/nodes/n1`, { metadata: { labels: { 'node-restriction.svc.io/trusted': 'yes' } } }, { 'content-type': 'application/merge-patch+json' });
  t.is(restricted.status, 403);
  await call(a, 'POST', `${s.url}/api/v1/nodes`, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n2' } });
  const patch = await call(n1.agent, 'PATCH', `${s.url}/api/v1/nodes/n2`, { metadata: { labels: { x: 'y' } } }, { 'content-type': 'application/merge-patch+json' });
  t.is(patch.status, 403);
  t.regex(patch.body.message, /node "n1" is not allowed to modify node "n2"/);
  // Reading another Node is granted by system:node-proxier (bound to system:nodes: svc-node embeds
  // kube-proxy, as k3s's agent holds kube-proxy's credentials); the Node authorizer alone refuses it.
  t.is((await call(n1.agent, 'GET', `${s.url}/api/v1/nodes/n2`)).status, 200);
  t.is((await call(n1.agent, 'GET', `${s.url}/api/v1/nodes/n1`)).status, 200);
  t.is((await call(n1.agent, 'PATCH', `${s.url}/api/v1/nodes/n1/status`, { status: { conditions: [{ type: 'Ready', status: 'True' }] } }, { 'content-type': 'application/merge-patch+json' })).status, 200);

  for (const [name, node] of [['s1', 'n1'], ['s2', 'n2']]) {
    t.is((await call(a, 'POST', `${s.url}/api/v1/namespaces/team/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData: { k: 'v' } })).status, 201);
    const pod = await call(a, 'POST', `${s.url}/api/v1/namespaces/team/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `pod-${node}` },
      spec: { nodeName: node, containers: [{ name: 'c', image: 'busybox' }], volumes: [{ name: 'v', secret: { secretName: name } }] },
    });
    t.is(pod.status, 201, pod.text);
  }
  await eventually(async () => ((await call(n1.agent, 'GET', `${s.url}/api/v1/namespaces/team/secrets/s1`)).status === 200 ? true : undefined), 'n1 reads s1');
  const theirs = await call(n1.agent, 'GET', `${s.url}/api/v1/namespaces/team/secrets/s2`);
  t.is(theirs.status, 403);
  t.regex(theirs.body.message, /no relationship found between node 'n1' and this object/);
  t.is((await call(n1.agent, 'GET', `${s.url}/api/v1/namespaces/team/secrets`)).status, 403);
  // Its own pods by field selector; not everyone's.
  const mine = await call(n1.agent, 'GET', `${s.url}/api/v1/pods?fieldSelector=spec.nodeName%3Dn1`);
  t.is(mine.status, 200);
  t.deepEqual(mine.body.items.map((p: { metadata: { name: string } }) => p.metadata.name), ['pod-n1']);
  // Listing every pod is granted by system:svc-node-network-policy (NetworkPolicy peers run on other
  // nodes); reading one of another node's pods by name stays refused, as upstream.
  t.is((await call(n1.agent, 'GET', `${s.url}/api/v1/pods`)).status, 200);
  t.is((await call(n1.agent, 'GET', `${s.url}/api/v1/namespaces/team/pods/pod-n2`)).status, 403);
  // Status of its own pod, not of another node's.
  t.is((await call(n1.agent, 'PATCH', `${s.url}/api/v1/namespaces/team/pods/pod-n1/status`, { status: { phase: 'Running' } }, { 'content-type': 'application/merge-patch+json' })).status, 200);
  t.is((await call(n1.agent, 'PATCH', `${s.url}/api/v1/namespaces/team/pods/pod-n2/status`, { status: { phase: 'Running' } }, { 'content-type': 'application/merge-patch+json' })).status, 403);
  // Its own Lease only.
  const lease = (n: string) => ({ apiVersion: 'coordination.svc.io/v1', kind: 'Lease', metadata: { name: n }, spec: { holderIdentity: n, leaseDurationSeconds: 40 } });
  t.is((await call(n1.agent, 'POST', `${s.url}/apis/coordination.svc.io/v1/namespaces/svc-node-lease/leases`, lease('n1'))).status, 201);
  t.is((await call(n1.agent, 'POST', `${s.url}/apis/coordination.svc.io/v1/namespaces/svc-node-lease/leases`, lease('n2'))).status, 403);
});

test.serial('an edit user cannot create a role granting more than it holds', async (t) => {
  const alice = tokenAgent();
  const url = `${s.url}/apis/rbac.authorization.svc.io/v1/namespaces/team/roles`;
  const role = (name: string, rules: unknown[]) => ({ apiVersion: 'rbac.authorization.svc.io/v1', kind: 'Role', metadata: { name }, rules });
  t.is((await call(alice, 'POST', url, role('x', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]), bearer('alice-token'))).status, 403, 'edit has no role writes');
  // With create on roles (but not escalate) granted by an admin, the escalation check applies.
  await call(s.admin, 'POST', `${s.url}/apis/rbac.authorization.svc.io/v1/namespaces/team/roles`, role('role-writer', [{ verbs: ['create'], apiGroups: ['rbac.authorization.svc.io'], resources: ['roles'] }]));
  await call(s.admin, 'POST', `${s.url}/apis/rbac.authorization.svc.io/v1/namespaces/team/rolebindings`, {
    apiVersion: 'rbac.authorization.svc.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'alice-role-writer' },
    roleRef: { apiGroup: 'rbac.authorization.svc.io', kind: 'Role', name: 'role-writer' },
    subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.svc.io', name: 'devs' }],
  });
  const ok = await eventually(async () => {
    const r = await call(alice, 'POST', url, role('pod-reader', [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods', 'secrets'] }]), bearer('alice-token'));
    return r.status === 201 ? r : undefined;
  }, 'alice may create roles');
  t.is(ok.status, 201);
  const more = await call(alice, 'POST', url, role('node-reader', [{ verbs: ['get'], apiGroups: [''], resources: ['nodes'] }, { verbs: ['*'], apiGroups: ['*'], resources: ['*'] }]), bearer('alice-token'));
  t.is(more.status, 403);
  t.regex(more.body.message, /roles.rbac.authorization.svc.io "node-reader" is forbidden: user "alice" \(groups=\["devs" "system:authenticated"\]\) is attempting to grant RBAC permissions not currently held/);
  t.regex(more.body.message, /\{APIGroups:\["\*"\], Resources:\["\*"\], Verbs:\["\*"\]\}/);
});

async function kubectl(cfg: string, ...args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout } = await run('/usr/bin/kubectl', ['--kubeconfig', cfg, ...args], { timeout: 30_000 });
    return { code: 0, out: stdout.trim() };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, out: `${e.stdout ?? ''}${e.stderr ?? ''}`.trim() };
  }
}

test.serial('kubectl auth can-i answers through SelfSubjectAccessReview and SelfSubjectRulesReview', async (t) => {
  const cfg = join(dir, 'alice.kubeconfig');
  writeFileSync(cfg, kubeconfig({ server: s.url, caPem: s.caPem, user: 'alice', token: 'alice-token' }));
  t.deepEqual(await kubectl(cfg, 'auth', 'can-i', 'create', 'pods', '-n', 'team'), { code: 0, out: 'yes' });
  t.deepEqual(await kubectl(cfg, 'auth', 'can-i', 'get', 'secrets', '-n', 'team'), { code: 0, out: 'yes' });
  const no = await kubectl(cfg, 'auth', 'can-i', 'create', 'pods', '-n', 'default');
  t.is(no.code, 1);
  t.regex(no.out, /^no/);
  t.is((await kubectl(cfg, 'auth', 'can-i', 'delete', 'nodes')).code, 1);
  t.is((await kubectl(s.kubeconfig, 'auth', 'can-i', 'delete', 'nodes')).out, 'yes');
  const list = await kubectl(cfg, 'auth', 'can-i', '--list', '-n', 'team');
  t.is(list.code, 0, list.out);
  t.regex(list.out, /pods\s+\[\]\s+\[\]\s+\[.*create.*\]/);
  t.regex(list.out, /selfsubjectaccessreviews\.authorization\.svc\.io/);
});

test('--authorization-config with --authorization-mode exits with a clear error', async (t) => {
  const cfg = join(dir, 'authz.yaml');
  writeFileSync(cfg, 'apiVersion: apiserver.config.svc.io/v1\nkind: AuthorizationConfiguration\nauthorizers: [{type: RBAC, name: rbac}]\n');
  const d = mkdtempSync(join(tmpdir(), 'svc-authz-bad-'));
  const out = await new Promise<{ code: number | null; text: string }>((resolve) => {
    const p = spawn(join(repoRoot, 'bin', 'svc-apiserver'), ['--bind-address=127.0.0.1', '--secure-port=1', `--data-dir=${d}`, `--authorization-config=${cfg}`, '--authorization-mode=RBAC'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    p.stdout.on('data', (x) => (text += x));
    p.stderr.on('data', (x) => (text += x));
    p.on('exit', (code) => resolve({ code, text }));
  });
  t.is(out.code, 2);
  t.regex(out.text, /--authorization-config can not be specified together with --authorization-mode/);
});

test('a webhook authorizer written in the test answers allow, deny and no opinion', async (t) => {
  const seen: string[] = [];
  const hook: Server = createServer((req, res) => {
    let b = '';
    req.on('data', (x) => (b += x));
    req.on('end', () => {
      const review = JSON.parse(b) as { apiVersion: string; spec: { user: string } };
      seen.push(review.spec.user);
      const status = review.spec.user === 'alice' ? { allowed: true, reason: 'webhook likes alice' } : review.spec.user === 'bob' ? { allowed: false, denied: true, reason: 'webhook bans bob' } : { allowed: false };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'SubjectAccessReview', status }));
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', () => r()));
  const hookKubeconfig = join(dir, 'hook.kubeconfig');
  writeFileSync(hookKubeconfig, `apiVersion: v1\nkind: Config\nclusters: [{name: hook, cluster: {server: "http://127.0.0.1:${(hook.address() as AddressInfo).port}/authorize"}}]\nusers: [{name: api, user: {}}]\ncontexts: [{name: c, context: {cluster: hook, user: api}}]\ncurrent-context: c\n`);
  const cfg = join(dir, 'authz-webhook.yaml');
  writeFileSync(
    cfg,
    `apiVersion: apiserver.config.svc.io/v1
kind: AuthorizationConfiguration
authorizers:
- type: Webhook
  name: test-hook
  webhook:
    timeout: 3s
    subjectAccessReviewVersion: v1
    matchConditionSubjectAccessReviewVersion: v1
    failurePolicy: NoOpinion
    connectionInfo: {type: KubeConfigFile, kubeConfigFile: ${hookKubeconfig}}
    matchConditions:
    - expression: "has(request.resourceAttributes) && request.resourceAttributes.namespace == 'default'"
- type: RBAC
  name: rbac
`,
  );
  const tokens = join(dir, 'tokens2.csv');
  writeFileSync(tokens, 'alice-token,alice,u-alice\nbob-token,bob,u-bob\ncarol-token,carol,u-carol\n');
  const s2 = await startApiServer({ args: [`--authorization-config=${cfg}`, `--token-auth-file=${tokens}`] });
  const ag = new Agent({ connect: { ca: s2.caPem, servername: 'localhost' } });
  try {
    // bob is cluster-admin through RBAC, but the webhook (asked first) denies him outright.
    await call(s2.admin, 'POST', `${s2.url}/apis/rbac.authorization.svc.io/v1/clusterrolebindings`, {
      apiVersion: 'rbac.authorization.svc.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'bob-admin' },
      roleRef: { apiGroup: 'rbac.authorization.svc.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.svc.io', name: 'bob' }],
    });
    await eventually(async () => ((await call(ag, 'GET', `${s2.url}/api/v1/namespaces/other/pods`, undefined, bearer('bob-token'))).status === 200 ? true : undefined), 'bob admin through RBAC');
    t.is((await call(ag, 'GET', `${s2.url}/api/v1/namespaces/default/pods`, undefined, bearer('alice-token'))).status, 200);
    const bob = await call(ag, 'GET', `${s2.url}/api/v1/namespaces/default/pods`, undefined, bearer('bob-token'));
    t.is(bob.status, 403);
    t.regex(bob.body.message, /webhook bans bob/);
    // carol: no opinion from the webhook, nothing from RBAC → 403.
    t.is((await call(ag, 'GET', `${s2.url}/api/v1/namespaces/default/pods`, undefined, bearer('carol-token'))).status, 403);
    // Outside namespace default the matchCondition skips the webhook: alice has nothing there.
    const before = seen.length;
    t.is((await call(ag, 'GET', `${s2.url}/api/v1/namespaces/other/pods`, undefined, bearer('alice-token'))).status, 403);
    t.is(seen.length, before);
  } finally {
    await ag.close();
    await s2.stop();
    hook.close();
  }
});
