import test from 'ava';
import { createServer, type ConnectionOptions, type Server, type TLSSocket } from 'node:tls';
import { createCA, issue } from '../../../../apiserver/pki/certs';
import { WarmTlsConnections } from '../../../../apiserver/handlers/warm-connections';

interface Backend {
  server: Server;
  /** The server side of every connection accepted, in order. */
  accepted: TLSSocket[];
  options: ConnectionOptions;
}

async function backend(): Promise<Backend> {
  const ca = await createCA('test-ca');
  const serving = await issue(ca, { commonName: 'agent', ips: ['127.0.0.1'], usage: 'server', validityMs: 3600_000 });
  const accepted: TLSSocket[] = [];
  const server = createServer({ cert: serving.certPem, key: serving.keyPem }, (s) => {
    accepted.push(s);
    s.on('error', () => undefined);
    // Echo, so a test can see which connection it holds.
    s.pipe(s);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return { server, accepted, options: { host: '127.0.0.1', port, ca: ca.certPem } };
}

const connected = (s: TLSSocket) => new Promise<void>((resolve, reject) => (s.pending || s.connecting ? (s.once('secureConnect', () => resolve()), s.once('error', reject)) : resolve()));
const closed = (s: TLSSocket) => new Promise<void>((r) => (s.closed ? r() : s.once('close', () => r())));
const sessionOf = (s: TLSSocket) => new Promise<void>((r) => s.once('session', () => r()));
const echo = (s: TLSSocket, text: string) =>
  new Promise<string>((resolve) => {
    s.once('data', (d: Buffer) => resolve(d.toString()));
    s.write(text);
  });

test('an upgrade after another to the same backend takes the spare dialled after it, resuming the TLS session', async (t) => {
  const b = await backend();
  const warm = new WarmTlsConnections({ maxIdleMs: 60_000 });
  const first = warm.take('b', b.options);
  const gotSession = sessionOf(first);
  await connected(first);
  t.is(await echo(first, 'one'), 'one');
  await gotSession;
  warm.prepare('b', b.options);
  warm.prepare('b', b.options); // one spare per backend
  const second = warm.take('b', b.options);
  await connected(second);
  t.is(await echo(second, 'two'), 'two');
  t.true(second.isSessionReused());
  t.deepEqual(warm.counts, { taken: 1, dialled: 1 });
  t.is(b.accepted.length, 2);
  first.destroy();
  second.destroy();
  b.server.close();
});

test('a spare older than maxIdleMs is closed and a new connection dialled', async (t) => {
  const b = await backend();
  let now = 0;
  const warm = new WarmTlsConnections({ maxIdleMs: 1_000, now: () => now });
  warm.prepare('b', b.options);
  while (b.accepted.length === 0) await new Promise((r) => setImmediate(r));
  now = 1_000;
  const s = warm.take('b', b.options);
  await connected(s);
  t.deepEqual(warm.counts, { taken: 0, dialled: 1 });
  t.is(await echo(s, 'fresh'), 'fresh');
  t.is(b.accepted.length, 2);
  await closed(b.accepted[0]);
  s.destroy();
  b.server.close();
});

test('a spare the backend closed is forgotten; close() ends the waiting spares', async (t) => {
  const b = await backend();
  const warm = new WarmTlsConnections({ maxIdleMs: 60_000 });
  warm.prepare('b', b.options);
  while (b.accepted.length === 0) await new Promise((r) => setImmediate(r));
  b.accepted[0].destroy();
  while (warm.has('b')) await new Promise((r) => setImmediate(r));
  const fresh = warm.take('b', b.options);
  await connected(fresh);
  t.deepEqual(warm.counts, { taken: 0, dialled: 1 });
  t.is(await echo(fresh, 'x'), 'x');
  warm.prepare('b', b.options);
  while (b.accepted.length < 3) await new Promise((r) => setImmediate(r));
  warm.close();
  await closed(b.accepted[2]);
  t.true(b.accepted[2].destroyed);
  fresh.destroy();
  b.server.close();
});
