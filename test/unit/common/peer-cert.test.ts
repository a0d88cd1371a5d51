/**
 * peerCertificates over a real TLS connection: the leaf and the certificates sent after it, the
 * same on every read of the socket (Node hands the chain to the first read only), nothing for a
 * peer without a certificate; subjectNames reads CN and every O.
 */
import test from 'ava';
import { createPrivateKey, webcrypto } from 'node:crypto';
import { once } from 'node:events';
import { createServer, connect, type TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { peerCertificates, subjectNames } from '../../../common/peer-cert';
import { x509 } from '../../../common/x509';
import { createCA, issue, type KeyPairPem } from '../../../apiserver/pki/certs';

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 86_400_000;

/** An intermediate CA signed by `root` (pki/certs issues leaves only). */
async function intermediate(root: KeyPairPem): Promise<KeyPairPem> {
  const keys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
  const rootCert = new x509.X509Certificate(root.certPem);
  const rootKey = await webcrypto.subtle.importKey('pkcs8', createPrivateKey(root.keyPem).export({ format: 'der', type: 'pkcs8' }), ALG, false, ['sign']);
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: '0a',
    subject: 'CN=intermediate',
    issuer: rootCert.subject,
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + DAY),
    signingKey: rootKey,
    publicKey: keys.publicKey,
    signingAlgorithm: ALG,
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true)],
  });
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  return { certPem: cert.toString('pem') + '\n', keyPem: createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }).export({ format: 'pem', type: 'pkcs8' }).toString() };
}

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
});

test('nothing for a peer that sent no certificate, or a socket without TLS', async (t) => {
  const root = await createCA('root');
  t.is(peerCertificates(await serverSocket(t, root)), undefined);
  t.is(peerCertificates({}), undefined);
  t.is(peerCertificates(undefined), undefined);
});
