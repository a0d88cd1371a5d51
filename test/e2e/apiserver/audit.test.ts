/**
 * Audit logging against a real svc-apiserver (issue 23, item 5): a kubectl session is checked line
 * by line in the JSON log (stages, levels, objectRef, bodies by level, managed fields omitted,
 * impersonation, authorization decision, Pod Security's annotation), a Secret's values appear
 * nowhere, and the same events reach an audit webhook over real TLS in EventList batches.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { stringify } from 'yaml';
import { createCA, issue } from '../../../apiserver/pki/certs';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { kubectl } from '../../helpers/real-clients';
import { eventually } from '../agent/agent-process';

interface Ev {
  auditID: string;
  stage: string;
  level: string;
  verb: string;
  user: { username: string };
  impersonatedUser?: { username: string };
  objectRef?: Record<string, string>;
  responseStatus?: { code: number };
  requestObject?: unknown;
  responseObject?: { metadata?: Record<string, unknown> };
  annotations?: Record<string, string>;
}

const DAY = 86_400_000;
const dir = mkdtempSync(join(tmpdir(), 'svc-audit-'));
const logPath = join(dir, 'audit.log');
const hooked: Ev[] = [];
let hook: Server;
let s: RunningApiServer;

test.before(async () => {
  const ca = await createCA('audit-hook-ca');
  const cert = await issue(ca, { commonName: 'audit-hook', ips: ['127.0.0.1'], usage: 'server', validityMs: DAY });
  hook = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const list = JSON.parse(body) as { kind: string; apiVersion: string; items: Ev[] };
      if (list.kind === 'EventList' && list.apiVersion === 'audit.k8s.io/v1') hooked.push(...list.items);
      res.end('{}');
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', () => r()));
  const hookConfig = join(dir, 'hook.kubeconfig');
  writeFileSync(
    hookConfig,
    stringify({ clusters: [{ name: 'hook', cluster: { server: `https://127.0.0.1:${(hook.address() as AddressInfo).port}/audit`, 'certificate-authority-data': Buffer.from(ca.certPem).toString('base64') } }], users: [{ name: 'api', user: {} }], contexts: [{ name: 'c', context: { cluster: 'hook', user: 'api' } }], 'current-context': 'c' }),
  );
  const policy = join(dir, 'policy.yaml');
  writeFileSync(
    policy,
    stringify({
      apiVersion: 'audit.k8s.io/v1',
      kind: 'Policy',
      rules: [
        { level: 'None', nonResourceURLs: ['/readyz', '/livez', '/healthz', '/openapi*', '/api', '/apis', '/apis/*', '/version'] },
        { level: 'Request', resources: [{ group: '', resources: ['secrets'] }], omitStages: ['RequestReceived'] },
        { level: 'RequestResponse', resources: [{ group: '', resources: ['configmaps'] }], omitManagedFields: true },
        { level: 'Metadata' },
      ],
    }),
  );
  s = await startApiServer({ args: [`--audit-policy-file=${policy}`, `--audit-log-path=${logPath}`, `--audit-webhook-config-file=${hookConfig}`, '--audit-webhook-batch-max-wait=200ms'] });
});
test.after.always(async () => {
  await s?.stop();
  hook?.close();
  rmSync(dir, { recursive: true, force: true });
});

const run = (...args: string[]) => kubectl(s.kubeconfig, args, { timeoutMs: 30_000 });
const logged = (): Ev[] =>
  readFileSync(logPath, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Ev);

test.serial('a kubectl session, line by line', async (t) => {
  t.is((await run('create', 'configmap', 'settings', '--from-literal=color=blue')).code, 0);
  t.is((await run('get', 'configmap', 'settings')).code, 0);
  t.is((await run('create', 'secret', 'generic', 'token', '--from-literal=password=hunter2-very-secret')).code, 0);
  const denied = await run('get', 'pods', '--as=bob');
  t.not(denied.code, 0);
  await run('create', 'namespace', 'audited');
  await run('label', 'namespace', 'audited', 'pod-security.kubernetes.io/audit=restricted');
  t.is((await run('run', 'web', '--image=busybox', '-n', 'audited')).code, 0);

  const events = await eventually('the pod create is logged', () => {
    const all = logged();
    return all.some((e) => e.objectRef?.resource === 'pods' && e.verb === 'create' && e.stage === 'ResponseComplete') ? all : undefined;
  }, 30_000, 100);

  // A configmap create: both stages, the bodies, no managed fields in the response.
  const cm = events.filter((e) => e.objectRef?.resource === 'configmaps' && e.verb === 'create');
  t.deepEqual(cm.map((e) => e.stage), ['RequestReceived', 'ResponseComplete']);
  const done = cm[1];
  t.is(done.level, 'RequestResponse');
  t.like(done.objectRef, { resource: 'configmaps', namespace: 'default', name: 'settings', apiVersion: 'v1' });
  t.is(done.responseStatus?.code, 201);
  t.like(done.requestObject, { data: { color: 'blue' } });
  t.like(done.responseObject, { data: { color: 'blue' } });
  t.is(done.responseObject?.metadata?.managedFields, undefined);
  t.is(done.annotations?.['authorization.k8s.io/decision'], 'allow');
  t.is(cm[0].auditID, done.auditID);

  // The secret: Request level without its values, and without the omitted stage.
  const secret = events.filter((e) => e.objectRef?.resource === 'secrets' && e.verb === 'create');
  t.deepEqual(secret.map((e) => e.stage), ['ResponseComplete']);
  t.is(secret[0].level, 'Request');
  t.like(secret[0].requestObject, { kind: 'Secret', metadata: { name: 'token' } });
  t.is((secret[0].requestObject as { data?: unknown }).data, undefined);
  const text = readFileSync(logPath, 'utf8');
  t.false(text.includes('hunter2-very-secret'));
  t.false(text.includes(Buffer.from('hunter2-very-secret').toString('base64')));

  // Impersonation: the caller is the user, bob the impersonated one, and the refusal is recorded.
  const asBob = events.find((e) => e.impersonatedUser?.username === 'bob' && e.objectRef?.resource === 'pods' && e.stage === 'ResponseComplete');
  t.truthy(asBob);
  t.not(asBob!.user.username, 'bob');
  t.is(asBob!.responseStatus?.code, 403);
  t.is(asBob!.annotations?.['authorization.k8s.io/decision'], 'forbid');

  // Pod Security's audit mode writes its annotation on the pod's event.
  const pod = events.find((e) => e.objectRef?.resource === 'pods' && e.verb === 'create' && e.stage === 'ResponseComplete')!;
  t.regex(pod.annotations?.['pod-security.kubernetes.io/audit-violations'] ?? '', /^would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false/);

  t.is(statSync(logPath).mode & 0o777, 0o600);
});

test.serial('the webhook backend receives the same events in EventList batches over TLS', async (t) => {
  const ids = new Set(logged().map((e) => `${e.auditID}/${e.stage}`));
  await eventually('webhook caught up', () => (hooked.length >= ids.size ? true : undefined), 30_000, 100);
  const got = new Set(hooked.map((e) => `${e.auditID}/${e.stage}`));
  for (const id of ids) t.true(got.has(id), id);
});
