import test from 'ava';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { clientCertProblem } from '../../../../agent/bootstrap/tls-bootstrap';
import { ClientError } from '../../../../agent/client/client-error';
import { HttpApiClient } from '../../../../agent/client/http-api-client';
import { KubeconfigError, loadKubeconfig } from '../../../../agent/client/kubeconfig';
import { nodesResource } from '../../../../agent/client/resources';
import { createCA, issue, type KeyPairPem } from '../../../../apiserver/pki/certs';

// Kubeconfig users with an exec credential plugin (spec 5.8), end to end inside the agent's
// client: the kubeconfig loader builds the plugin source, the HTTP client runs the real plugin
// script (test/fixtures/exec-plugin) and sends what it printed to a real HTTPS server.

const PLUGIN = resolve(__dirname, '../../../../../test/fixtures/exec-plugin/credential-plugin.js');
const V1 = 'client.authentication.svc.io/v1';
const V1BETA1 = 'client.authentication.svc.io/v1beta1';

let ca: KeyPairPem;
let serving: KeyPairPem;
let nodeCert: KeyPairPem;
let root: string;

test.before(async () => {
  ca = await createCA('exec-test-ca');
  serving = await issue(ca, { commonName: 'server', ips: ['127.0.0.1'], usage: 'server', validityMs: 3600_000 });
  nodeCert = await issue(ca, { commonName: 'system:node:exec', organizations: ['system:nodes'], usage: 'client', validityMs: 3600_000 });
  root = mkdtempSync(join(tmpdir(), 'svc-exec-kc-'));
});
test.after.always(() => rmSync(root, { recursive: true, force: true }));

interface Seen {
  url: string;
  auth: string | undefined;
  cn: string | undefined;
}

/** An HTTPS server accepting only `token` (or a client certificate with CN `cn`); 401 otherwise. */
async function serve(accept: { token?: string; cn?: string }) {
  const seen: Seen[] = [];
  const server = createServer({ key: serving.keyPem, cert: serving.certPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: false }, (req: IncomingMessage, res: ServerResponse) => {
    const peer = (req.socket as TLSSocket).getPeerCertificate();
    const s: Seen = { url: req.url!, auth: req.headers['authorization'], cn: peer && peer.subject ? (peer.subject.CN as string) : undefined };
    seen.push(s);
    const ok = (accept.token !== undefined && s.auth === `Bearer ${accept.token}`) || (accept.cn !== undefined && s.cn === accept.cn);
    res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
    if (!ok) {
      res.end(JSON.stringify({ kind: 'Status', status: 'Failure', reason: 'Unauthorized', message: 'Unauthorized', code: 401 }));
      return;
    }
    if (req.url!.includes('watch=1')) {
      res.write(JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'n1' } } }) + '\n');
      res.end();
      return;
    }
    res.end(JSON.stringify({ metadata: { name: 'n1' } }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

let n = 0;
/** A fresh dir holding the plugin's reply and state, and a kubeconfig whose user runs the plugin. */
function setup(server: string, reply: object, exec: Record<string, unknown> = {}): { dir: string; kubeconfig: string; runs: () => number; info: () => any; args: () => any } {
  const dir = join(root, `case-${++n}`);
  mkdirSync(join(dir, 'state'), { recursive: true });
  writeFileSync(join(dir, 'state', 'reply.json'), JSON.stringify(reply));
  const kubeconfig = join(dir, 'kubeconfig');
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'ctx',
    contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u' } }],
    clusters: [
      {
        name: 'c',
        cluster: {
          server,
          'certificate-authority-data': Buffer.from(ca.certPem).toString('base64'),
          extensions: [{ name: 'client.authentication.svc.io/exec', extension: { audience: 'svc' } }],
        },
      },
    ],
    users: [
      {
        name: 'u',
        user: {
          exec: {
            apiVersion: V1,
            command: PLUGIN,
            args: ['--flag', 'value'],
            env: [
              { name: 'PLUGIN_DIR', value: join(dir, 'state') },
              { name: 'PLUGIN_EXTRA', value: 'extra-1' },
            ],
            interactiveMode: 'IfAvailable',
            provideClusterInfo: true,
            ...exec,
          },
        },
      },
    ],
  };
  writeFileSync(kubeconfig, JSON.stringify(doc));
  const read = (f: string) => readFileSync(join(dir, 'state', f), 'utf8');
  return {
    dir,
    kubeconfig,
    runs: () => {
      try {
        return read('runs').trim().split('\n').length;
      } catch {
        return 0;
      }
    },
    info: () => JSON.parse(read('info.json')),
    args: () => JSON.parse(read('args.json')),
  };
}

test('a token from the plugin is sent, cached until expiry, with args, env and cluster info given to the plugin', async (t) => {
  const s = await serve({ token: 'exec-token' });
  const c = setup(s.url, { tokens: ['exec-token'], expirationTimestamp: '2099-01-01T00:00:00Z' });
  const rc = await loadKubeconfig(c.kubeconfig);
  t.truthy(rc.exec);
  t.is(c.runs(), 0, 'the plugin runs at the first request, not when the kubeconfig is read');
  // svc-node's start-up accepts such a kubeconfig as an identity (the server judges the credential later).
  t.is(clientCertProblem(rc, Date.now()), undefined);
  const client = new HttpApiClient(rc);
  try {
    for (let i = 0; i < 3; i++) await client.get(nodesResource, 'n1');
    t.is(c.runs(), 1);
    t.true(s.seen.every((x) => x.auth === 'Bearer exec-token' && x.cn === undefined));
    t.deepEqual(c.args(), { args: ['--flag', 'value'], extra: 'extra-1' });
    t.deepEqual(c.info(), {
      apiVersion: V1,
      kind: 'ExecCredential',
      // A daemon has no terminal: IfAvailable runs non-interactively.
      spec: { interactive: false, cluster: { server: s.url, 'certificate-authority-data': Buffer.from(ca.certPem).toString('base64'), config: { audience: 'svc' } } },
    });
  } finally {
    await client.close();
    await s.close();
  }
});

test('an expired credential runs the plugin again', async (t) => {
  const s = await serve({ token: 'exec-token' });
  const c = setup(s.url, { tokens: ['exec-token'], expirationTimestamp: '2001-01-01T00:00:00Z' }, { apiVersion: V1BETA1, interactiveMode: undefined, provideClusterInfo: false });
  const client = new HttpApiClient(await loadKubeconfig(c.kubeconfig));
  try {
    await client.get(nodesResource, 'n1');
    await client.get(nodesResource, 'n1');
    t.is(c.runs(), 2);
    // v1beta1 without interactiveMode defaults to IfAvailable; no cluster without provideClusterInfo.
    t.deepEqual(c.info(), { apiVersion: V1BETA1, kind: 'ExecCredential', spec: { interactive: false } });
  } finally {
    await client.close();
    await s.close();
  }
});

test('a 401 drops the credential, runs the plugin again and retries once', async (t) => {
  const s = await serve({ token: 'fresh' });
  const c = setup(s.url, { tokens: ['stale', 'fresh'] });
  const client = new HttpApiClient(await loadKubeconfig(c.kubeconfig));
  try {
    const got = await client.get(nodesResource, 'n1');
    t.is(got.metadata.name, 'n1');
    t.is(c.runs(), 2);
    t.deepEqual(
      s.seen.map((x) => x.auth),
      ['Bearer stale', 'Bearer fresh'],
    );
    await client.get(nodesResource, 'n1');
    t.is(c.runs(), 2, 'the fresh credential is cached');
  } finally {
    await client.close();
    await s.close();
  }
});

test('a second 401 is the caller\'s: exactly one retry per request', async (t) => {
  const s = await serve({ token: 'never-issued' });
  const c = setup(s.url, { tokens: ['bad'] });
  const client = new HttpApiClient(await loadKubeconfig(c.kubeconfig));
  try {
    const err = await t.throwsAsync(client.get(nodesResource, 'n1'), { instanceOf: ClientError });
    t.is(err.status, 401);
    t.is(s.seen.length, 2);
    t.is(c.runs(), 2);
  } finally {
    await client.close();
    await s.close();
  }
});

test('a watch answered 401 is opened again with fresh credentials', async (t) => {
  const s = await serve({ token: 'fresh' });
  const c = setup(s.url, { tokens: ['stale', 'fresh'] });
  const client = new HttpApiClient(await loadKubeconfig(c.kubeconfig));
  try {
    const names: string[] = [];
    for await (const ev of client.watch(nodesResource, {})) names.push(ev.object.metadata.name ?? '');
    t.deepEqual(names, ['n1']);
    t.deepEqual(
      s.seen.map((x) => x.auth),
      ['Bearer stale', 'Bearer fresh'],
    );
  } finally {
    await client.close();
    await s.close();
  }
});

test('a client certificate from the plugin is presented on the TLS connection', async (t) => {
  const s = await serve({ cn: 'system:node:exec' });
  const dir = join(root, 'certs');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'tls.crt'), nodeCert.certPem);
  writeFileSync(join(dir, 'tls.key'), nodeCert.keyPem);
  const c = setup(s.url, { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') });
  const client = new HttpApiClient(await loadKubeconfig(c.kubeconfig));
  try {
    await client.get(nodesResource, 'n1');
    await client.get(nodesResource, 'n1');
    t.is(c.runs(), 1);
    t.true(s.seen.every((x) => x.cn === 'system:node:exec' && x.auth === undefined));
  } finally {
    await client.close();
    await s.close();
  }
});

test('a failing plugin is a retriable ClientError that carries its message', async (t) => {
  const s = await serve({ token: 'x' });
  const c = setup(s.url, { exit: 3, stderr: 'cannot reach the vault' });
  const client = new HttpApiClient(await loadKubeconfig(c.kubeconfig));
  try {
    const err = await t.throwsAsync(client.get(nodesResource, 'n1'), { instanceOf: ClientError });
    t.is(err.reason, 'CredentialPluginFailed');
    t.true(err.retriable);
    t.regex(err.message, /exit code 3: cannot reach the vault/);
    t.is(s.seen.length, 0);
  } finally {
    await client.close();
    await s.close();
  }
});

test('exec blocks the agent cannot use are refused when the kubeconfig is read, naming the field', async (t) => {
  const url = 'https://127.0.0.1:1';
  await t.throwsAsync(loadKubeconfig(setup(url, {}, { interactiveMode: 'Always' }).kubeconfig), { instanceOf: KubeconfigError, message: /exec\.interactiveMode: Always requires a terminal/ });
  await t.throwsAsync(loadKubeconfig(setup(url, {}, { interactiveMode: undefined }).kubeconfig), { message: /interactiveMode: Required value: must be set for client.authentication.svc.io\/v1/ });
  await t.throwsAsync(loadKubeconfig(setup(url, {}, { apiVersion: 'client.authentication.k8s.io/v1' }).kubeconfig), { message: /apiVersion: Unsupported value: "client.authentication.k8s.io\/v1"/ });
  await t.throwsAsync(loadKubeconfig(setup(url, {}, { command: '' }).kubeconfig), { message: /command: Required value/ });
  await t.throwsAsync(loadKubeconfig(setup(url, {}, { env: [{ name: 'A' }] }).kubeconfig), { message: /exec\.env\[0\] must have a name and a string value/ });
  await t.throwsAsync(loadKubeconfig(setup(url, {}, { args: 'x' }).kubeconfig), { message: /exec\.args must be a list of strings/ });
  const withToken = setup(url, {});
  const doc = JSON.parse(readFileSync(withToken.kubeconfig, 'utf8'));
  doc.users[0].user.token = 'static';
  writeFileSync(withToken.kubeconfig, JSON.stringify(doc));
  await t.throwsAsync(loadKubeconfig(withToken.kubeconfig), { message: /exec cannot be combined with token/ });
});

test('a relative command resolves against the kubeconfig directory', async (t) => {
  const s = await serve({ token: 'rel' });
  const c = setup(s.url, { tokens: ['rel'] });
  mkdirSync(join(c.dir, 'bin'));
  writeFileSync(join(c.dir, 'bin', 'plugin'), `#!/bin/sh\nexec node ${JSON.stringify(PLUGIN)} "$@"\n`, { mode: 0o755 });
  const doc = JSON.parse(readFileSync(c.kubeconfig, 'utf8'));
  doc.users[0].user.exec.command = './bin/plugin';
  writeFileSync(c.kubeconfig, JSON.stringify(doc));
  const client = new HttpApiClient(await loadKubeconfig(c.kubeconfig));
  try {
    await client.get(nodesResource, 'n1');
    t.is(c.runs(), 1);
    t.is(s.seen[0].auth, 'Bearer rel');
  } finally {
    await client.close();
    await s.close();
  }
});
