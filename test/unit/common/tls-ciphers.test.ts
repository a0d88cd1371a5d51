/** serverCipherPreference over real handshakes: the server's order decides, as Go's; clients offering less still connect. */
import test from 'ava';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { connect, createServer, type ConnectionOptions } from 'node:tls';
import { serverCipherPreference } from '../../../common/tls-ciphers';
import { createCA, issue } from '../../../apiserver/pki/certs';

async function negotiated(client: Partial<ConnectionOptions>): Promise<{ name: string; version: string }> {
  const ca = await createCA('ca');
  const serving = await issue(ca, { commonName: 'localhost', usage: 'server', validityMs: 86_400_000, dnsNames: ['localhost'] });
  const server = createServer({ cert: serving.certPem, key: serving.keyPem, minVersion: 'TLSv1.2', ...serverCipherPreference }, (s) => s.end());
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const c = connect({ port: (server.address() as AddressInfo).port, host: '127.0.0.1', servername: 'localhost', ca: ca.certPem, ...client });
    c.on('error', () => undefined);
    await once(c, 'secureConnect');
    const cipher = c.getCipher();
    c.destroy();
    return { name: cipher.name, version: cipher.version };
  } finally {
    server.close();
  }
}

test("TLS 1.3: AES-128-GCM though Node's client lists AES-256-GCM first", async (t) => {
  t.deepEqual(await negotiated({}), { name: 'TLS_AES_128_GCM_SHA256', version: 'TLSv1.3' });
});

test('a client that offers only AES-256-GCM or only ChaCha20 gets it', async (t) => {
  t.is((await negotiated({ ciphers: 'TLS_AES_256_GCM_SHA384' })).name, 'TLS_AES_256_GCM_SHA384');
  t.is((await negotiated({ ciphers: 'TLS_CHACHA20_POLY1305_SHA256' })).name, 'TLS_CHACHA20_POLY1305_SHA256');
});

test("TLS 1.2 clients keep Node's default suites (ECDHE with AES-128-GCM first for an ECDSA key)", async (t) => {
  t.deepEqual(await negotiated({ maxVersion: 'TLSv1.2' }), { name: 'ECDHE-ECDSA-AES128-GCM-SHA256', version: 'TLSv1.2' });
});
