/**
 * peerCertificates over a real TLS connection: the leaf and the certificates sent after it, the
 * same on every read of the socket (Node hands the chain to the first read only), nothing for a
 * peer without a certificate; peerLeaf agrees with it on the leaf; subjectNames reads CN and every O.
 */
import test from 'ava';
import { once } from 'node:events';
import { createServer, connect, type TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { peerCertificates, peerLeaf, subjectNames } from '../../../common/peer-cert';
import { createCA, issue, type KeyPairPem } from '../../../apiserver/pki/certs';
import { intermediate } from '../../helpers/intermediate-ca';

const DAY = 86_400_000;

/** The server side of one connection from a client presenting `client` (cert chain PEM and key), or none. */
async function serverSocket(t: { teardown(f: () => void): void }, root: KeyPairPem, client?: { cert: string; key: string }): Promise<TLSSocket> {
  const srv = await issue(root, { commonName: 'localhost', usage: 'server', validityMs: DAY, dnsNames: ['localhost'] });
  const server = createServer({ cert: srv.certPem, key: srv.keyPem, ca: root.certPem, requestCert: true, rejectUnauthorized: false });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const accepted = once(server, 'secureConnection');
  const c = connect({ port: (server.address() as AddressInfo).port, host: '127.0.0.1', servername: 'localhost', ca: root.certPem, ...(client ?? {}) });
  c.on('error', () => {});
  const [sock] = (await accepted) as [TLSSocket];
  t.teardown(() => {
    c.destroy();
    sock.destroy();
    server.close();
  });
  return sock;
}

test('the leaf and the certificates sent after it, on every read of the socket', async (t) => {
  const root = await createCA('root');
  const mid = await intermediate(root);
  const leaf = await issue(mid, { commonName: 'bob', organizations: ['devs', 'ops'], usage: 'client', validityMs: DAY });
  const sock = await serverSocket(t, root, { cert: leaf.certPem + mid.certPem, key: leaf.keyPem });
  for (const read of ['first', 'second']) {
    const certs = peerCertificates(sock);
    t.deepEqual(certs?.map((c) => c.subject), ['O=devs\nO=ops\nCN=bob', 'CN=intermediate'], `${read} read`);
  }
  t.true(sock.authorized, 'OpenSSL verified the chain through the intermediate');
  t.deepEqual(subjectNames(peerCertificates(sock)![0]), { cn: 'bob', orgs: ['devs', 'ops'] });
  t.deepEqual(peerLeaf(sock), { fingerprint256: peerCertificates(sock)![0].fingerprint256, cn: 'bob', orgs: ['devs', 'ops'] }, 'the leaf as getPeerCertificate details it');
});

test('nothing for a peer that sent no certificate, or a socket without TLS', async (t) => {
  const root = await createCA('root');
  const none = await serverSocket(t, root);
  t.is(peerCertificates(none), undefined);
  t.is(peerLeaf(none), undefined);
  t.is(peerCertificates({}), undefined);
  t.is(peerLeaf({}), undefined);
  t.is(peerCertificates(undefined), undefined);
});
