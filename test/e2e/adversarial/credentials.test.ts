/**
 * Adversarial suite, forged credentials and escalation (issue 16's probe classes "forged
 * credentials of every kind" and "RBAC escalation"), against a real svc-apiserver: every forged,
 * tampered, expired or foreign credential is a 401 (never a fall-through to anonymous), and a user
 * who may write RBAC objects cannot grant more than it holds nor impersonate without the right.
 */
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, createSign } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { Agent } from 'undici';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { call } from '../../helpers/http';

const EDITOR_TOKEN = 'editor-token-0123456789abcdef';
const BOOT_ID = 'a1b2c3';
const BOOT_SECRET = '0123456789abcdef';
const RBAC = 'rbac.authorization.svc.io';

let api: RunningApiServer;
let dir: string;

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-adv-creds-'));
  const tokens = join(dir, 'tokens.csv');
  writeFileSync(tokens, `${EDITOR_TOKEN},editor,uid-editor\n`, { mode: 0o600 });
  api = await startApiServer({ args: [`--token-auth-file=${tokens}`, '--enable-bootstrap-token-auth'] });
  await must(call(api.admin, 'POST', `${api.url}/api/v1/namespaces`, { metadata: { name: 'team' } }));
  await must(call(api.admin, 'POST', `${api.url}/api/v1/namespaces/team/serviceaccounts`, { metadata: { name: 'robot' } }));
  await must(call(api.admin, 'POST', `${api.url}/api/v1/namespaces`, { metadata: { name: 'svc-system' } }), [201, 409]);
  // editor: may manage roles and bindings in "team" and read configmaps there, nothing more.
  await must(
    call(api.admin, 'POST', `${api.url}/apis/${RBAC}/v1/namespaces/team/roles`, {
      metadata: { name: 'rbac-editor' },
      rules: [
        // Not '*': as upstream, '*' includes the escalate and bind verbs, which lift the check.
        { apiGroups: [RBAC], resources: ['roles', 'rolebindings'], verbs: ['create', 'get', 'list', 'update', 'patch', 'delete'] },
        { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] },
      ],
    }),
  );
  await must(
    call(api.admin, 'POST', `${api.url}/apis/${RBAC}/v1/namespaces/team/rolebindings`, {
      metadata: { name: 'rbac-editor' },
      roleRef: { apiGroup: RBAC, kind: 'Role', name: 'rbac-editor' },
      subjects: [{ apiGroup: RBAC, kind: 'User', name: 'editor' }],
    }),
  );
});

test.after.always(async () => {
  await api?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function must(p: ReturnType<typeof call>, ok = [201]): Promise<Awaited<ReturnType<typeof call>>> {
  const r = await p;
  if (!ok.includes(r.status)) throw new Error(`setup: ${r.status} ${r.text}`);
  return r;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
/** A request that only an authenticated, authorized caller may make. */
const probe = (token: string) => call(api.anonymous, 'GET', `${api.url}/api/v1/namespaces/team/configmaps`, undefined, bearer(token));

function b64url(v: unknown): string {
  return Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
}

async function robotToken(): Promise<string> {
  const r = await must(call(api.admin, 'POST', `${api.url}/api/v1/namespaces/team/serviceaccounts/robot/token`, { kind: 'TokenRequest', apiVersion: 'authentication.svc.io/v1', spec: {} }));
  return r.body.status.token as string;
}

test('a genuine service account token authenticates (the control for the forgeries below)', async (t) => {
  const r = await call(api.anonymous, 'POST', `${api.url}/apis/authentication.svc.io/v1/selfsubjectreviews`, { kind: 'SelfSubjectReview', apiVersion: 'authentication.svc.io/v1' }, bearer(await robotToken()));
  t.is(r.status, 201, r.text);
  t.is(r.body.status.userInfo.username, 'system:serviceaccount:team:robot');
});

test('forged service account JWTs are 401: tampered claims, alg none, a foreign key, a stripped signature', async (t) => {
  const real = await robotToken();
  const [header, payload, signature] = real.split('.');
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
  const admin = { ...claims, sub: 'system:serviceaccount:svc-system:default', 'kubernetes.io': undefined };
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const foreignHeader = b64url({ alg: 'RS256', typ: 'JWT', kid: (JSON.parse(Buffer.from(header, 'base64url').toString()) as { kid?: string }).kid });
  const foreignBody = `${foreignHeader}.${b64url(admin)}`;
  const foreignSig = createSign('RSA-SHA256').update(foreignBody).sign(privateKey).toString('base64url');
  const forgeries: Record<string, string> = {
    'tampered claims, original signature': `${header}.${b64url(admin)}.${signature}`,
    'alg none': `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(admin)}.`,
    'signed with a foreign key under the real kid': `${foreignBody}.${foreignSig}`,
    'signature stripped': `${header}.${payload}.`,
    'expired': `${header}.${b64url({ ...claims, exp: 1 })}.${signature}`,
    'random bytes': 'not-a-token-at-all',
  };
  for (const [what, token] of Object.entries(forgeries)) {
    const r = await probe(token);
    t.is(r.status, 401, `${what}: ${r.text}`);
    t.like(r.body, { kind: 'Status', reason: 'Unauthorized' }, what);
  }
});

test('a service account token stops working when its account is deleted', async (t) => {
  await must(call(api.admin, 'POST', `${api.url}/api/v1/namespaces/team/serviceaccounts`, { metadata: { name: 'doomed' } }));
  const r = await must(call(api.admin, 'POST', `${api.url}/api/v1/namespaces/team/serviceaccounts/doomed/token`, { kind: 'TokenRequest', apiVersion: 'authentication.svc.io/v1', spec: {} }));
  const token = r.body.status.token as string;
  const review = () => call(api.anonymous, 'POST', `${api.url}/apis/authentication.svc.io/v1/selfsubjectreviews`, { kind: 'SelfSubjectReview', apiVersion: 'authentication.svc.io/v1' }, bearer(token));
  t.is((await review()).status, 201);
  await must(call(api.admin, 'DELETE', `${api.url}/api/v1/namespaces/team/serviceaccounts/doomed`), [200]);
  // The authenticator's account lookup follows the store through an informer: wait for the deletion to reach it.
  const deadline = Date.now() + 20_000;
  let last = await review();
  while (last.status !== 401 && Date.now() < deadline) {
    await new Promise((res) => setTimeout(res, 100));
    last = await review();
  }
  t.is(last.status, 401, last.text);
});

test('bootstrap tokens: a wrong secret, an expired token and an unknown id are 401', async (t) => {
  const secret = (id: string, expiration: Date) =>
    must(
      call(api.admin, 'POST', `${api.url}/api/v1/namespaces/svc-system/secrets`, {
        metadata: { name: `bootstrap-token-${id}` },
        type: 'bootstrap.svc.io/token',
        stringData: { 'token-id': id, 'token-secret': BOOT_SECRET, expiration: expiration.toISOString().replace(/\.\d+Z$/, 'Z'), 'usage-bootstrap-authentication': 'true' },
      }),
    );
  await secret(BOOT_ID, new Date(Date.now() + 3600_000));
  await secret('d4e5f6', new Date(Date.now() - 60_000));
  const whoami = (token: string) => call(api.anonymous, 'POST', `${api.url}/apis/authentication.svc.io/v1/selfsubjectreviews`, { kind: 'SelfSubjectReview', apiVersion: 'authentication.svc.io/v1' }, bearer(token));
  // The control: the right secret authenticates (after the token cache has the Secret).
  const deadline = Date.now() + 20_000;
  let ok = await whoami(`${BOOT_ID}.${BOOT_SECRET}`);
  while (ok.status !== 201 && Date.now() < deadline) {
    await new Promise((res) => setTimeout(res, 100));
    ok = await whoami(`${BOOT_ID}.${BOOT_SECRET}`);
  }
  t.is(ok.status, 201, ok.text);
  t.is(ok.body.status.userInfo.username, `system:bootstrap:${BOOT_ID}`);
  for (const token of [`${BOOT_ID}.fedcba9876543210`, `d4e5f6.${BOOT_SECRET}`, `f0f0f0.${BOOT_SECRET}`]) {
    t.is((await whoami(token)).status, 401, token);
  }
});

test('a client certificate from a foreign CA claiming system:masters is refused', async (t) => {
  const ca = join(dir, 'foreign-ca');
  const run = (args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  run(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${ca}.key`, '-out', `${ca}.crt`, '-days', '1', '-subj', '/CN=svc-ca']);
  run(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${ca}-client.key`, '-out', `${ca}-client.csr`, '-subj', '/O=system:masters/CN=admin']);
  run(['x509', '-req', '-in', `${ca}-client.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-out', `${ca}-client.crt`, '-days', '1']);
  const forged = new Agent({ connect: { ca: api.caPem, cert: readFileSync(`${ca}-client.crt`), key: readFileSync(`${ca}-client.key`), servername: 'localhost' } });
  try {
    // Upstream asks for a client certificate but does not require one at the TLS layer: the
    // handshake may succeed, and the request must then be refused; a TLS-level refusal is also fine.
    const r = await call(forged, 'GET', `${api.url}/api/v1/namespaces/team/secrets`).catch((err: Error) => ({ status: 0, text: err.message }));
    t.true(r.status === 401 || r.status === 0, `${r.status} ${r.text}`);
  } finally {
    await forged.close();
  }
});

test('RBAC escalation: a user who may write roles cannot grant what it lacks, nor bind cluster-admin, nor impersonate', async (t) => {
  const as = (method: 'POST' | 'GET', path: string, body?: unknown, headers: Record<string, string> = {}) =>
    call(api.anonymous, method, `${api.url}${path}`, body, { ...bearer(EDITOR_TOKEN), ...headers });
  // The control: a role within its own rights is allowed.
  const within = await as('POST', `/apis/${RBAC}/v1/namespaces/team/roles`, { metadata: { name: 'reader' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] });
  t.is(within.status, 201, within.text);
  const secrets = await as('POST', `/apis/${RBAC}/v1/namespaces/team/roles`, { metadata: { name: 'thief' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }] });
  t.is(secrets.status, 403, secrets.text);
  t.regex(secrets.body.message as string, /attempting to grant RBAC permissions not currently held/);
  const bindAdmin = await as('POST', `/apis/${RBAC}/v1/namespaces/team/rolebindings`, {
    metadata: { name: 'root' },
    roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ apiGroup: RBAC, kind: 'User', name: 'editor' }],
  });
  t.is(bindAdmin.status, 403, bindAdmin.text);
  const impersonate = await as('GET', '/api/v1/namespaces/team/secrets', undefined, { 'impersonate-user': 'admin', 'impersonate-group': 'system:masters' });
  t.is(impersonate.status, 403, impersonate.text);
  t.is((await as('GET', '/api/v1/namespaces/team/secrets')).status, 403);
});
