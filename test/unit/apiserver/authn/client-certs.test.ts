import test from 'ava';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { ApiError } from '../../../../apiserver/api/errors';
import type { Authenticator } from '../../../../apiserver/authn/authenticator';
import { CertPool } from '../../../../apiserver/authn/cert-chain';
import { RequestAuthenticator } from '../../../../apiserver/authn/request-authenticator';
import { RequestHeaderAuthenticator } from '../../../../apiserver/authn/request-header';
import { X509ClientCertAuthenticator } from '../../../../apiserver/authn/x509-client-cert';
import { createCA, issue, type KeyPairPem } from '../../../../apiserver/pki/certs';

const DAY = 86_400_000;

interface Pki {
  serverCa: KeyPairPem;
  serving: KeyPairPem;
  clientCa: KeyPairPem;
  proxyCa: KeyPairPem;
  otherCa: KeyPairPem;
  alice: KeyPairPem;
  expired: KeyPairPem;
  stranger: KeyPairPem;
  proxy: KeyPairPem;
  rogueProxy: KeyPairPem;
}

let server: Server;
let url: string;
let pki: Pki;

test.before(async () => {
  const [serverCa, clientCa, proxyCa, otherCa] = await Promise.all([createCA('server-ca'), createCA('client-ca'), createCA('proxy-ca'), createCA('other-ca')]);
  pki = {
    serverCa,
    clientCa,
    proxyCa,
    otherCa,
    serving: await issue(serverCa, { commonName: 'svc', dnsNames: ['localhost'], ips: ['127.0.0.1'], usage: 'server', validityMs: DAY }),
    alice: await issue(clientCa, { commonName: 'alice', organizations: ['dev', 'ops'], usage: 'client', validityMs: DAY }),
    expired: await issue(clientCa, { commonName: 'old', usage: 'client', validityMs: DAY, now: new Date(Date.now() - 3 * DAY) }),
    stranger: await issue(otherCa, { commonName: 'mallory', usage: 'client', validityMs: DAY }),
    proxy: await issue(proxyCa, { commonName: 'front-proxy', usage: 'client', validityMs: DAY }),
    rogueProxy: await issue(proxyCa, { commonName: 'someone-else', usage: 'client', validityMs: DAY }),
  };
  const methods: Authenticator[] = [
    new RequestHeaderAuthenticator({
      usernameHeaders: ['X-Remote-User'],
      groupHeaders: ['X-Remote-Group'],
      extraHeaderPrefixes: ['X-Remote-Extra-'],
      allowedNames: ['front-proxy'],
      clientCa: new CertPool(proxyCa.certPem),
    }),
    new X509ClientCertAuthenticator(new CertPool(clientCa.certPem)),
  ];
  const authn = new RequestAuthenticator(
    () => methods,
    () => ({ enabled: true, conditions: [{ path: '/livez' }] }),
  );
  // As the lead is to wire it: the TLS layer names both CAs and leaves the verdict to the authenticators.
  server = createServer({ cert: pki.serving.certPem, key: pki.serving.keyPem, ca: [clientCa.certPem, proxyCa.certPem], requestCert: true, rejectUnauthorized: false }, (req, res) => {
    authn.authenticate(req).then(
      (u) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(u));
      },
      (err: unknown) => {
        res.writeHead(err instanceof ApiError ? err.code : 500);
        res.end(String((err as Error).message));
      },
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

test.after.always(() => {
  server?.closeAllConnections();
  server?.close();
});

async function call(cert: KeyPairPem | undefined, path = '/api', headers: Record<string, string | string[]> = {}) {
  const agent = new Agent({ connect: { ca: pki.serverCa.certPem, ...(cert ? { cert: cert.certPem, key: cert.keyPem } : {}) } });
  try {
    const res = await request(url + path, { dispatcher: agent, headers });
    const text = await res.body.text();
    return { status: res.statusCode, body: res.statusCode === 200 ? JSON.parse(text) : text };
  } finally {
    await agent.close();
  }
}

test('a client certificate from the client CA: CN is the user, each O a group, fingerprint as credential id', async (t) => {
  const r = await call(pki.alice);
  t.is(r.status, 200);
  t.is(r.body.username, 'alice');
  t.deepEqual(r.body.groups, ['dev', 'ops', 'system:authenticated']);
  t.regex(r.body.extra['authentication.svc.io/credential-id'][0], /^X509SHA256=[0-9a-f]{64}$/);
});

test('certificates from an unknown CA or expired are 401, not anonymous', async (t) => {
  const s = await call(pki.stranger);
  t.is(s.status, 401);
  t.regex(s.body, /unknown authority/);
  const e = await call(pki.expired);
  t.is(e.status, 401);
  t.regex(e.body, /expired/);
  // The proxy's certificate is not a user certificate either.
  t.is((await call(pki.proxy)).status, 401);
});

test('the authenticating proxy: identity headers believed from the allowed proxy certificate only', async (t) => {
  const r = await call(pki.proxy, '/api', { 'X-Remote-User': 'bob', 'X-Remote-Group': ['g1', 'g2,with-comma'], 'X-Remote-Extra-Acme.io%2fScopes': ['read', 'write'] });
  t.is(r.status, 200);
  t.deepEqual(r.body, { username: 'bob', groups: ['g1', 'g2,with-comma', 'system:authenticated'], extra: { 'acme.io/scopes': ['read', 'write'] } });
  const rogue = await call(pki.rogueProxy, '/api', { 'X-Remote-User': 'bob' });
  t.is(rogue.status, 401);
  t.regex(rogue.body, /cn=someone-else is not in the allowed list/);
  t.is((await call(undefined, '/api', { 'X-Remote-User': 'bob' })).status, 401);
  // A user's own certificate with forged headers authenticates as the certificate's user.
  const forged = await call(pki.alice, '/api', { 'X-Remote-User': 'root', 'X-Remote-Group': 'system:masters' });
  t.is(forged.status, 200);
  t.is(forged.body.username, 'alice');
  t.false(forged.body.groups.includes('system:masters'));
});

test('anonymous only where the conditions allow; a bad bearer token is never anonymous', async (t) => {
  const live = await call(undefined, '/livez?verbose');
  t.is(live.status, 200);
  t.deepEqual(live.body, { username: 'system:anonymous', groups: ['system:unauthenticated'] });
  t.is((await call(undefined, '/api')).status, 401);
  t.is((await call(undefined, '/livez', { authorization: 'Bearer nope' })).status, 401);
  t.is((await call(undefined, '/livez', { authorization: 'Basic Zm9vOmJhcg==' })).status, 401);
});
