/**
 * WebSocket v4 port-forward (common/stream/portforward.ts) bounds what it buffers: a client that
 * does not read pauses the pod's connection once MAX_UNSENT bytes wait, and a pod that does not
 * read pauses the WebSocket; both resume when the other side catches up.
 */
import test from 'ava';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer } from 'ws';
import { MAX_UNSENT, serveWebSocketPortForward } from '../../../../common/stream/portforward';

const CHUNK = Buffer.alloc(64 * 1024, 1);

async function forwardTo(pod: Duplex): Promise<{ client: WebSocket; server: WebSocket; close: () => Promise<void> }> {
  const wss = new WebSocketServer({ noServer: true });
  const http: Server = createServer();
  const served = new Promise<WebSocket>((resolve) => {
    http.on('upgrade', (req, socket, head) =>
      wss.handleUpgrade(req, socket, head, (ws) => {
        serveWebSocketPortForward(ws, 'v4.channel.k8s.io', [80], { dial: () => Promise.resolve(pod), podLabel: 'default/p', streamCreationTimeoutMs: 1000 });
        resolve(ws);
      }),
    );
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const client = new WebSocket(`ws://127.0.0.1:${(http.address() as AddressInfo).port}/`, ['v4.channel.k8s.io']);
  await new Promise((r, j) => (client.once('open', r), client.once('error', j)));
  const server = await served;
  return {
    client,
    server,
    close: async () => {
      client.terminate();
      http.closeAllConnections();
      await new Promise((r) => http.close(r));
    },
  };
}

/** Runs turns of the event loop until cond holds, at most `turns` (no timers). */
async function until(cond: () => boolean, turns = 20_000): Promise<boolean> {
  for (let i = 0; i < turns && !cond(); i++) await new Promise((r) => setImmediate(r));
  return cond();
}

test('a client that does not read pauses the pod once MAX_UNSENT bytes wait; reading again resumes it', async (t) => {
  const pod = new Duplex({ read() {}, write(_c, _e, cb) { cb(); } });
  const { client, server, close } = await forwardTo(pod);
  t.teardown(close);
  client.pause();
  // The pod produces until the forwarder stops reading it (bounded: 256 MiB at most).
  let pushed = 0;
  while (!pod.isPaused() && pushed < 256 * 1024 * 1024) {
    pod.push(CHUNK);
    pushed += CHUNK.length;
    await new Promise((r) => setImmediate(r));
  }
  t.true(pod.isPaused(), `pushed ${pushed} bytes`);
  t.true(server.bufferedAmount <= MAX_UNSENT + CHUNK.length + 16, `buffered ${server.bufferedAmount}`);
  client.resume();
  t.true(await until(() => !pod.isPaused()), 'resumed once the client read');
});

test('a pod that does not read pauses the WebSocket; draining resumes it', async (t) => {
  const pending: (() => void)[] = [];
  const pod = new Duplex({ read() {}, write(_c, _e, cb) { pending.push(cb); } });
  const { client, server, close } = await forwardTo(pod);
  t.teardown(close);
  const frame = Buffer.concat([Buffer.from([0]), CHUNK]);
  for (let i = 0; i < 64; i++) client.send(frame);
  t.true(await until(() => server.isPaused), 'the WebSocket paused');
  t.true(pending.length <= 2, `the pod was handed ${pending.length} writes`);
  // The pod takes what it was handed (and whatever follows, as it comes) until every frame is through.
  let received = 0;
  const total = 64 * CHUNK.length;
  t.true(
    await until(() => {
      for (const cb of pending.splice(0)) {
        received += CHUNK.length;
        cb();
      }
      return received >= total;
    }),
    `the pod got ${received} of ${total} bytes`,
  );
  t.false(server.isPaused);
});
