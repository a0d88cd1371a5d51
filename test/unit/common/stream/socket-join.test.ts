import test from 'ava';
import { createServer, connect, type Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { joinSockets } from '../../../../common/stream/socket-join';

/** Two connected loopback sockets: [near, far]. */
async function socketPair(): Promise<[Socket, Socket]> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const accepted = new Promise<Socket>((r) => srv.once('connection', r));
  const far = connect((srv.address() as { port: number }).port, '127.0.0.1');
  const near = await accepted;
  srv.close();
  return [near, far];
}

test('a side that ends cleanly has every byte it sent delivered before the other is closed (the other writes slowly, as TLS queues)', async (t) => {
  const received: Buffer[] = [];
  // b takes each write some time to complete; destroying it early would drop the rest.
  const b = new Duplex({ read() {}, write(chunk: Buffer, _enc, cb) { setTimeout(() => { received.push(chunk); cb(); }, 5); } });
  const a = new Duplex({ read() {}, write(_chunk, _enc, cb) { cb(); }, allowHalfOpen: false });
  const joined = joinSockets(a, b);
  const sent = Array.from({ length: 10 }, (_, i) => `chunk ${i};`);
  for (const c of sent) a.push(Buffer.from(c));
  a.push(null);
  await joined.closed;
  t.is(Buffer.concat(received).toString(), sent.join(''));
  t.true(a.destroyed && b.destroyed);
});

test('an error on either side, or cut(), closes both at once', async (t) => {
  const [a, aPeer] = await socketPair();
  const [b, bPeer] = await socketPair();
  aPeer.on('error', () => undefined);
  bPeer.on('error', () => undefined);
  const joined = joinSockets(a, b);
  a.destroy(new Error('reset'));
  await joined.closed;
  t.true(b.destroyed);

  const [c, cPeer] = await socketPair();
  const [d, dPeer] = await socketPair();
  cPeer.on('error', () => undefined);
  dPeer.on('error', () => undefined);
  const second = joinSockets(c, d);
  second.cut();
  await second.closed;
  t.true(c.destroyed && d.destroyed);
  for (const s of [aPeer, bPeer, cPeer, dPeer]) s.destroy();
});
