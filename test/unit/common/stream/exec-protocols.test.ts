import test from 'ava';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer } from 'ws';
import { serveSpdyExec, SPDY_EXEC_PROTOCOLS } from '../../../../common/stream/spdy-exec';
import { acceptSpdyUpgrade, negotiateStreamProtocol, offeredProtocols } from '../../../../common/stream/spdy-upgrade';
import { openExecStreams, spdyConnect, UpgradeRefusedError } from '../../../../common/stream/spdy-client';
import { serveWebSocketExec } from '../../../../common/stream/ws-exec';
import type { ExecStreams } from '../../../../common/stream/exec-streams';
import { translateExec } from '../../../../common/stream/translate';
import type { ExitResult } from '../../../../common/stream/remotecommand';

/** An exec that upper-cases stdin onto stdout, writes "err" on stderr and exits with the code named in stdin's last digit. */
async function upperCat(s: ExecStreams): Promise<ExitResult> {
  let all = '';
  if (s.stdin) for await (const c of s.stdin) all += (c as Buffer).toString();
  s.stdout?.write(all.toUpperCase());
  s.stderr?.write('err');
  return { exitCode: Number(/(\d)$/.exec(all)?.[1] ?? '0') };
}

/** A SPDY exec server on loopback running `run` for every upgrade. */
async function spdyServer(run: (s: ExecStreams) => Promise<ExitResult>): Promise<{ url: string; server: Server }> {
  const server = createServer((_req, res) => res.end());
  server.on('upgrade', (req: IncomingMessage, socket: Duplex) => {
    const n = negotiateStreamProtocol(offeredProtocols(req.headers), SPDY_EXEC_PROTOCOLS);
    if ('error' in n) {
      socket.end(`HTTP/1.1 403 Forbidden\r\nContent-Length: ${n.error.length}\r\n\r\n${n.error}`);
      return;
    }
    acceptSpdyUpgrade(socket, n.protocol);
    void serveSpdyExec(socket, { stdin: true, stdout: true, stderr: true, tty: false, protocol: n.protocol, streamCreationTimeoutMs: 10_000 }).then(async (s) => s.finish(await run(s), ['upper']));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/exec`, server };
}

function readAll(s: NodeJS.ReadableStream | undefined): Promise<string> {
  let out = '';
  return new Promise((resolve) => {
    if (!s) return resolve('');
    s.on('data', (b: Buffer) => (out += b.toString()));
    s.on('end', () => resolve(out));
    s.on('close', () => resolve(out));
  });
}

test('SPDY exec client and server: v4 streams, the exit code as a Status; v2 as text; an unknown protocol refused with 403', async (t) => {
  const { url, server } = await spdyServer(upperCat);
  try {
    const v4 = await spdyConnect(url, ['v4.channel.k8s.io']);
    t.is(v4.protocol, 'v4.channel.k8s.io');
    const s = await openExecStreams(v4.session, { stdin: true, stdout: true, stderr: true, tty: false }, v4.protocol);
    const [out, err, status] = [readAll(s.stdout), readAll(s.stderr), readAll(s.error)];
    s.stdin!.end('hello 3');
    t.is(await out, 'HELLO 3');
    t.is(await err, 'err');
    t.like(JSON.parse(await status), { reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: '3' }] } });
    v4.session.destroy();

    const v2 = await spdyConnect(url, ['v2.channel.k8s.io']);
    const s2 = await openExecStreams(v2.session, { stdin: true, stdout: true, stderr: true, tty: false }, v2.protocol);
    const status2 = readAll(s2.error);
    s2.stdin!.end('x 4');
    t.is(await status2, 'command terminated with non-zero exit code: error executing command [upper], exit code 4');
    v2.session.destroy();

    const refused = await t.throwsAsync(spdyConnect(url, ['v9.channel.k8s.io']), { instanceOf: UpgradeRefusedError });
    t.is(refused.status, 403);
  } finally {
    server.close();
  }
});

test('a WebSocket v5 client joined to a SPDY runtime: stdin closed by the signal, output, the exit code handed on', async (t) => {
  const { url, server: runtime } = await spdyServer(upperCat);
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', handleProtocols: () => 'v5.channel.k8s.io' });
  wss.on('connection', (ws) => {
    void (async () => {
      const client = serveWebSocketExec(ws, 'v5.channel.k8s.io', { stdin: true, stdout: true, stderr: true, tty: false });
      const remote = await spdyConnect(url, ['v4.channel.k8s.io']);
      const streams = await openExecStreams(remote.session, { stdin: true, stdout: true, stderr: true, tty: false }, remote.protocol);
      await client.finish(await translateExec(client, streams, remote.session), ['upper']);
    })();
  });
  await new Promise((r) => wss.once('listening', r));
  try {
    const ws = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}/`, ['v5.channel.k8s.io']);
    await new Promise((r) => ws.once('open', r));
    const channels = new Map<number, string>();
    ws.on('message', (m: Buffer) => channels.set(m[0], (channels.get(m[0]) ?? '') + m.subarray(1).toString()));
    const closed = new Promise((r) => ws.once('close', r));
    ws.send(Buffer.concat([Buffer.from([0]), Buffer.from('joined 5')]));
    ws.send(Buffer.from([255, 0]));
    await closed;
    t.is(channels.get(1), 'JOINED 5');
    t.is(channels.get(2), 'err');
    t.like(JSON.parse(channels.get(3)!), { reason: 'NonZeroExitCode', details: { causes: [{ message: '5' }] } });
  } finally {
    wss.close();
    runtime.close();
  }
});
