/**
 * Port-forward servers (upstream's kubelet portforward package):
 * - SPDY (`portforward.k8s.io`, also what kubectl 1.31+ tunnels inside a WebSocket under the
 *   subprotocol `SPDY/3.1+portforward.k8s.io`): per forwarded connection the client opens an
 *   error stream and a data stream carrying the same `port` and `requestID` headers (older clients
 *   without requestID: the data stream's id is the error stream's + 2); once both are there the
 *   server dials the port and copies bytes both ways; a failure is written on the error stream.
 * - WebSocket v4 (`v4.channel.k8s.io`, `v4.base64.channel.k8s.io`) on `?ports=a,b`: port i has
 *   data channel 2i and error channel 2i+1; the server's first message on each starts with the port
 *   (two bytes, little endian); one connection per port for the life of the WebSocket.
 */
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import { PassThrough } from 'node:stream';
import { SpdySession } from './spdy-connection';
import { RstStatus } from './spdy-frame';
import { headerValue } from './spdy-header-codec';
import type { SpdyStream } from './spdy-stream';
import { decodeChannelMessage, encodeChannelMessage, portPrefix, wsProtocolTraits } from './ws-channel';

/** Connects to a port of the pod; rejects with a message the client sees. */
export type PortDialer = (port: number, signal: AbortSignal) => Promise<Duplex>;

export interface PortForwardOptions {
  dial: PortDialer;
  /** For error messages: "<namespace>/<pod>, uid <uid>". */
  podLabel: string;
  /** How long half a pair may wait for the other (upstream's streamCreationTimeout). */
  streamCreationTimeoutMs: number;
}

/** Parses a port header or query value (1-65535). */
export function parsePort(v: string | undefined): number | undefined {
  if (v === undefined || !/^\d{1,5}$/.test(v)) return undefined;
  const n = Number(v);
  return n >= 1 && n <= 65535 ? n : undefined;
}

/** Copies between a client stream and a dialled connection until either ends; resolves when both are done. */
function splice(client: Duplex, conn: Duplex): Promise<void> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      client.unpipe(conn);
      conn.unpipe(client);
      if (!conn.destroyed) conn.destroy();
      resolve();
    };
    client.pipe(conn);
    conn.pipe(client);
    conn.on('close', finish);
    conn.on('error', finish);
    client.on('close', finish);
    client.on('error', finish);
  });
}

/** Serves port-forward SPDY streams on an upgraded socket (or a WebSocket tunnel's byte stream). */
export function serveSpdyPortForward(socket: Duplex, o: PortForwardOptions): SpdySession {
  const ac = new AbortController();
  const halves = new Map<string, { data?: SpdyStream; error?: SpdyStream; timer: NodeJS.Timeout }>();
  const session = new SpdySession(socket, {
    server: true,
    onStream: (stream) => {
      const type = headerValue(stream.headers, 'streamtype');
      const port = parsePort(headerValue(stream.headers, 'port'));
      if ((type !== 'data' && type !== 'error') || port === undefined) {
        stream.reset(RstStatus.PROTOCOL_ERROR);
        return;
      }
      stream.on('error', () => undefined);
      void stream.reply();
      const key = headerValue(stream.headers, 'requestid') ?? String(type === 'error' ? stream.id : stream.id - 2);
      let pair = halves.get(key);
      if (!pair) {
        const timer = setTimeout(() => {
          halves.delete(key);
          pair?.data?.reset();
          pair?.error?.reset();
        }, o.streamCreationTimeoutMs);
        timer.unref();
        pair = { timer };
        halves.set(key, pair);
      }
      if (pair[type]) {
        stream.reset(RstStatus.PROTOCOL_ERROR);
        return;
      }
      pair[type] = stream;
      if (pair.data && pair.error) {
        clearTimeout(pair.timer);
        halves.delete(key);
        void forward(pair.data, pair.error, port, o, ac.signal);
      }
    },
  });
  session.on('close', () => {
    ac.abort();
    for (const p of halves.values()) clearTimeout(p.timer);
    halves.clear();
  });
  return session;
}

async function forward(data: SpdyStream, error: SpdyStream, port: number, o: PortForwardOptions, signal: AbortSignal): Promise<void> {
  let conn: Duplex;
  try {
    conn = await o.dial(port, signal);
  } catch (e) {
    error.end(`error forwarding port ${port} to pod ${o.podLabel}: ${(e as Error).message}`);
    data.end();
    return;
  }
  await splice(data, conn);
  if (!error.destroyed) error.end();
  if (!data.destroyed) data.end();
}

/** Bytes a WebSocket port-forward lets wait unsent to the client before it stops reading the pod. */
export const MAX_UNSENT = 1024 * 1024;

/**
 * Serves WebSocket v4 port-forward for `ports` on an open WebSocket, with back-pressure both ways
 * (a slow pod pauses the WebSocket, a slow client pauses the pod), as upstream's copies block.
 */
export function serveWebSocketPortForward(ws: WebSocket, protocol: string, ports: readonly number[], o: PortForwardOptions): void {
  const traits = wsProtocolTraits(protocol);
  const ac = new AbortController();
  const inputs = ports.map(() => new PassThrough());
  const send = (channel: number, data: Buffer, sent?: () => void): void => {
    if (ws.readyState === ws.OPEN) ws.send(encodeChannelMessage(channel, data, traits.base64), sent);
  };
  ws.on('message', (msg: Buffer, isBinary: boolean) => {
    let m;
    try {
      m = decodeChannelMessage(isBinary ? msg : msg.toString('utf8'), traits);
    } catch {
      ws.close(1002, 'malformed channel message');
      return;
    }
    if (m.kind !== 'data' || m.channel % 2 !== 0) return;
    const input = inputs[m.channel / 2];
    // A pod that reads slower than the client sends: stop reading the WebSocket until it drains.
    if (input && !input.write(m.data)) {
      ws.pause();
      input.once('drain', () => ws.resume());
    }
  });
  ws.on('close', () => {
    ac.abort();
    for (const i of inputs) i.destroy();
  });
  let open = ports.length;
  ports.forEach((port, i) => {
    send(2 * i, portPrefix(port));
    send(2 * i + 1, portPrefix(port));
    void (async () => {
      try {
        const conn = await o.dial(port, ac.signal);
        // A client that reads slower than the pod sends: stop reading the pod while more than
        // MAX_UNSENT bytes wait in the WebSocket (nothing would bound them otherwise).
        const sent = (): void => {
          if (conn.isPaused() && ws.bufferedAmount <= MAX_UNSENT) conn.resume();
        };
        conn.on('data', (b: Buffer) => {
          send(2 * i, b, sent);
          if (ws.bufferedAmount > MAX_UNSENT) conn.pause();
        });
        inputs[i].pipe(conn);
        await new Promise<void>((resolve) => {
          conn.on('close', () => resolve());
          conn.on('error', () => resolve());
          ac.signal.addEventListener('abort', () => {
            conn.destroy();
            resolve();
          });
        });
      } catch (e) {
        send(2 * i + 1, Buffer.from(`error forwarding port ${port} to pod ${o.podLabel}: ${(e as Error).message}`));
      }
      if (--open === 0 && ws.readyState === ws.OPEN) ws.close(1000);
    })();
  });
}
