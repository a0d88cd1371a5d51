/**
 * The API server's TLS options over a real handshake: a client's certificate is still sent and
 * readable though no CA is named; the server sends its own certificate only (not the CA after it);
 * Go's cipher preference; a session is never resumed (the tickets sent are stateful and the server
 * keeps no cache for them).
 */
import test from 'ava';
import { once } from 'node:events';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { connect, type TLSSocket } from 'node:tls';
import { servingTlsOptions } from '../../../../apiserver/wiring/serving-tls';
import { createCA, issue } from '../../../../apiserver/pki/certs';
import { peerLeaf } from '../../../../common/peer-cert';

const DAY = 86_400_000;

test('a client certificate is sent without CA names; only the serving certificate is sent; no session is resumed', async (t) => {
  const ca = await createCA('ca');
  const serving = await issue(ca, { commonName: 'localhost', usage: 'server', validityMs: DAY, dnsNames: ['localhost'] });
  const alice = await issue(ca, { commonName: 'alice', organizations: ['devs'], usage: 'client', validityMs: DAY });
  const server = createServer(servingTlsOptions(serving));
  const seen: unknown[] = [];
  server.on('secureConnection', (s: TLSSocket) => seen.push(peerLeaf(s)));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => server.close());
  const port = (server.address() as AddressInfo).port;
  let session: Buffer | undefined;
  for (const attempt of ['first', 'second']) {
    const accepted = once(server, 'secureConnection');
    const c = connect({ port, host: '127.0.0.1', servername: 'localhost', ca: ca.certPem, cert: alice.certPem, key: alice.keyPem, ...(session ? { session } : {}) });
    // TLS 1.3 sends session state after the handshake: the first connection waits for it.
    const gotSession = attempt === 'first' ? once(c, 'session') : undefined;
    c.on('session', (s: Buffer) => (session = s));
    await once(c, 'secureConnect');
    t.true(c.authorized, `${attempt}: the client verified the server`);
    t.is(c.getCipher().name, 'TLS_AES_128_GCM_SHA256', `${attempt}: Go's cipher preference`);
    t.is(c.getPeerX509Certificate()?.issuerCertificate, undefined, `${attempt}: nothing sent after the serving certificate`);
    await Promise.all([gotSession, accepted]);
    t.false(c.isSessionReused(), `${attempt}: not resumed`);
    c.destroy();
  }
  t.truthy(session, 'the client had a session to offer on its second connection');
  t.deepEqual(seen.map((l) => (l as { cn: string; orgs: string[] }).cn), ['alice', 'alice']);
});
