/**
 * Adversarial suite, the process itself (issue 16's probe classes "slowloris", "file modes" and
 * "secrets in logs"), against a real svc-apiserver started under umask 000 at debug level:
 * connections that trickle their headers do not stop other clients being served; every file the
 * server writes that holds a key, a credential or the store is private to its owner however
 * permissive the umask; and no secret value, token or key reaches the log.
 */
import { readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import test from 'ava';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { call } from '../../helpers/http';

const SECRET_VALUE = 'hunter2-do-not-log-7f3a9c';
const BOOT_ID = 'b7c8d9';
const BOOT_SECRET = 'fedcba9876543210';

let api: RunningApiServer;

test.before(async () => {
  // The server must not rely on the umask it inherits to keep its files private.
  const old = process.umask(0);
  try {
    api = await startApiServer({ args: ['--enable-bootstrap-token-auth'], logLevel: 'debug' });
  } finally {
    process.umask(old);
  }
});

test.after.always(async () => {
  await api?.stop();
  if (api) rmSync(api.dataDir, { recursive: true, force: true });
});

test.serial('200 connections trickling their headers do not keep other clients waiting', async (t) => {
  const held: TLSSocket[] = [];
  try {
    await Promise.all(
      Array.from({ length: 200 }, () =>
        new Promise<void>((resolve, reject) => {
          const s = connect({ host: '127.0.0.1', port: api.port, ca: api.caPem, servername: 'localhost' }, () => {
            // A request line and one header, never finished.
            s.write('GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\nX-Slow: ');
            resolve();
          });
          s.on('error', reject);
          held.push(s);
        }),
      ),
    );
    for (let i = 0; i < 20; i++) {
      const r = await call(api.admin, 'GET', `${api.url}/api/v1/namespaces/default`);
      t.is(r.status, 200, r.text);
    }
  } finally {
    for (const s of held) s.destroy();
  }
});

test.serial('keys, credentials and the store are private to the owner under umask 000', async (t) => {
  // Writes first, so the store's journal files exist too.
  for (let i = 0; i < 5; i++) {
    t.is((await call(api.admin, 'POST', `${api.url}/api/v1/namespaces/default/configmaps`, { metadata: { name: `m${i}` } })).status, 201);
  }
  const publicFiles = /\.(crt|pub)$/;
  const seen: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      const st = statSync(p);
      const mode = st.mode & 0o777;
      seen.push(`${mode.toString(8)} ${p.slice(api.dataDir.length)}`);
      if (st.isDirectory()) {
        t.is(mode & 0o077, 0, `directory ${p} is ${mode.toString(8)}`);
        walk(p);
      } else if (publicFiles.test(name)) {
        t.is(mode & 0o022, 0, `${p} is writable by others: ${mode.toString(8)}`);
      } else {
        t.is(mode & 0o077, 0, `${p} is ${mode.toString(8)}`);
      }
    }
  };
  t.is(statSync(api.dataDir).mode & 0o077, 0);
  walk(api.dataDir);
  t.true(seen.some((l) => l.endsWith('/store/state.db')), seen.join('\n'));
  t.true(seen.some((l) => l.endsWith('/pki/ca.key')), seen.join('\n'));
});

test.serial('secret values, tokens and keys never reach the log, at debug level', async (t) => {
  const put = (path: string, body: unknown) => call(api.admin, 'POST', `${api.url}${path}`, body);
  t.is((await put('/api/v1/namespaces/default/secrets', { metadata: { name: 's' }, stringData: { password: SECRET_VALUE } })).status, 201);
  // A refused write carrying the secret: the error path must not echo it either.
  t.is((await put('/api/v1/namespaces/default/secrets', { metadata: { name: 'Bad_Name' }, stringData: { password: SECRET_VALUE } })).status, 422);
  t.true([201, 409].includes((await put('/api/v1/namespaces', { metadata: { name: 'svc-system' } })).status));
  t.is(
    (
      await put('/api/v1/namespaces/svc-system/secrets', {
        metadata: { name: `bootstrap-token-${BOOT_ID}` },
        type: 'bootstrap.svc.io/token',
        stringData: { 'token-id': BOOT_ID, 'token-secret': BOOT_SECRET, 'usage-bootstrap-authentication': 'true' },
      })
    ).status,
    201,
  );
  const tokens: string[] = [];
  // The service account controller creates "default" shortly after the namespace: retry until it has.
  const deadline = Date.now() + 20_000;
  let sa = await put('/api/v1/namespaces/default/serviceaccounts/default/token', { kind: 'TokenRequest', apiVersion: 'authentication.svc.io/v1', spec: {} });
  while (sa.status === 404 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    sa = await put('/api/v1/namespaces/default/serviceaccounts/default/token', { kind: 'TokenRequest', apiVersion: 'authentication.svc.io/v1', spec: {} });
  }
  t.is(sa.status, 201, sa.text);
  tokens.push(sa.body.status.token as string);
  // Credentials used, good and bad: each leaves debug lines about the attempt, never the credential.
  const bearer = (tk: string) => call(api.anonymous, 'GET', `${api.url}/api/v1/namespaces/default/pods`, undefined, { authorization: `Bearer ${tk}` });
  for (const tk of [tokens[0], `${tokens[0]}x`, `${BOOT_ID}.${BOOT_SECRET}`, `${BOOT_ID}.0000000000000000`, 'static-looking-token-5a5a5a5a']) await bearer(tk);
  t.is((await call(api.admin, 'GET', `${api.url}/api/v1/namespaces/default/secrets/s`)).status, 200);
  const out = api.output();
  t.true(out.length > 0);
  const caKey = readFileSync(join(api.dataDir, 'pki', 'ca.key'), 'utf8').split('\n')[1];
  for (const [what, value] of [
    ['secret value', SECRET_VALUE],
    ['secret value, base64', Buffer.from(SECRET_VALUE).toString('base64')],
    ['bootstrap token secret', BOOT_SECRET],
    ['service account token', tokens[0]],
    ['service account token signature', tokens[0].split('.')[2]],
    ['presented token', 'static-looking-token-5a5a5a5a'],
    ['CA key', caKey],
  ] as const) {
    t.false(out.includes(value), `the log holds the ${what}`);
  }
});
