/**
 * Test clients for the stream protocols, written against the wire (not against our servers'
 * code paths): a SPDY/3.1 upgrade over TLS followed by a client SpdySession, and WebSocket
 * channel helpers over `ws`. Used by the agent's streaming e2e tests.
 */
import { randomBytes } from 'node:crypto';
import { connect as netConnect, type Socket } from 'node:net';
import { connect, type ConnectionOptions } from 'node:tls';
import WebSocket from 'ws';
import { SpdySession } from '../../common/stream/spdy-connection';
import type { SpdyStream } from '../../common/stream/spdy-stream';

export interface Target {
  port: number;
  path: string;
  headers?: Record<string, string>;
  tls?: Pick<ConnectionOptions, 'cert' | 'key'>;
  /** Plain TCP instead of TLS (a runtime's stream server on http://). */
  plain?: boolean;
  host?: string;
}

/** Connects to the target (TLS unless plain); resolves once connected. */
async function dial(t: Target): Promise<Socket> {
  const host = t.host ?? '127.0.0.1';
  const socket: Socket = t.plain ? netConnect(t.port, host) : connect({ host, port: t.port, rejectUnauthorized: false, ...t.tls });
  await new Promise<void>((resolve, reject) => {
    socket.once(t.plain ? 'connect' : 'secureConnect', resolve);
    socket.once('error', reject);
  });
  return socket;
}

/** The answer to an upgrade that was refused. */
export interface Refusal {
  status: number;
  body: string;
}

/** Upgrades to SPDY/3.1 offering `protocols`; resolves the session and the protocol chosen, or the refusal. */
export async function spdyUpgrade(t: Target, protocols: string[]): Promise<{ session: SpdySession; protocol: string; socket: Socket } | Refusal> {
  const socket = await dial(t);
  const lines = [`GET ${t.path} HTTP/1.1`, `Host: 127.0.0.1:${t.port}`, 'Connection: Upgrade', 'Upgrade: SPDY/3.1', ...protocols.map((p) => `X-Stream-Protocol-Version: ${p}`), ...Object.entries(t.headers ?? {}).map(([k, v]) => `${k}: ${v}`)];
  socket.write(lines.join('\r\n') + '\r\n\r\n');
  let buf = Buffer.alloc(0);
  const head = await new Promise<string>((resolve, reject) => {
    const onData = (c: Buffer): void => {
      buf = Buffer.concat([buf, c]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      socket.pause();
      const h = buf.subarray(0, end).toString('latin1');
      buf = buf.subarray(end + 4);
      resolve(h);
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.once('close', () => reject(new Error(`closed before an answer: ${buf.toString()}`)));
  });
  const status = Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1]);
  if (status !== 101) {
    // The rest of the body (Content-Length or until close).
    const len = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? '-1');
    socket.resume();
    while (len >= 0 ? buf.length < len : !socket.destroyed) {
      const more = await new Promise<Buffer | undefined>((resolve) => {
        socket.once('data', resolve);
        socket.once('close', () => resolve(undefined));
      });
      if (!more) break;
      buf = Buffer.concat([buf, more]);
    }
    socket.destroy();
    return { status, body: buf.toString('utf8') };
  }
  const protocol = /x-stream-protocol-version: (\S+)/i.exec(head)?.[1] ?? '';
  if (buf.length > 0) socket.unshift(buf);
  const session = new SpdySession(socket, { server: false });
  socket.resume();
  return { session, protocol, socket };
}

/** Reads a stream to its end. */
export function readAll(s: SpdyStream): Promise<string> {
  const parts: Buffer[] = [];
  return new Promise((resolve) => {
    s.on('data', (b: Buffer) => parts.push(b));
    s.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    s.on('close', () => resolve(Buffer.concat(parts).toString('utf8')));
    s.on('error', () => resolve(Buffer.concat(parts).toString('utf8')));
  });
}

/** Reads from a stream until `text` has been seen. */
export function readUntil(s: NodeJS.ReadableStream, text: string): Promise<string> {
  let seen = '';
  return new Promise((resolve, reject) => {
    const onData = (b: Buffer): void => {
      seen += b.toString('utf8');
      if (seen.includes(text)) {
        s.off('data', onData);
        resolve(seen);
      }
    };
    s.on('data', onData);
    s.once('end', () => reject(new Error(`ended before ${JSON.stringify(text)}; saw ${JSON.stringify(seen)}`)));
  });
}

/** A WebSocket to the agent; resolves once open (or the refusal's status). */
export function wsConnect(t: Target, protocols: string[]): Promise<{ ws: WebSocket; protocol: string } | Refusal> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${t.plain ? 'ws' : 'wss'}://${t.host ?? '127.0.0.1'}:${t.port}${t.path}`, protocols, { rejectUnauthorized: false, headers: t.headers ?? {}, ...t.tls });
    ws.once('open', () => resolve({ ws, protocol: ws.protocol }));
    ws.once('unexpected-response', (_req, res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString('utf8') }));
    });
    ws.once('error', reject);
  });
}

/** Collects a channel WebSocket's messages by channel until it closes. */
export function wsCollect(ws: WebSocket): Promise<{ channels: Map<number, Buffer>; code: number }> {
  const channels = new Map<number, Buffer>();
  ws.on('message', (m: Buffer) => {
    const ch = m[0];
    channels.set(ch, Buffer.concat([channels.get(ch) ?? Buffer.alloc(0), m.subarray(1)]));
  });
  return new Promise((resolve) => ws.once('close', (code) => resolve({ channels, code })));
}

/**
 * A WebSocket handshake written by hand, for subprotocols the ws client refuses to send (RFC 6455
 * tokens have no "/", but upstream's SPDY/3.1+portforward.k8s.io does, and Go clients send it).
 * The open socket is then handed to a ws WebSocket in client mode (masked frames).
 */
export async function rawWsConnect(t: Target, protocol: string): Promise<{ ws: WebSocket; protocol: string } | Refusal> {
  const socket = await dial(t);
  const key = randomBytes(16).toString('base64');
  const lines = [`GET ${t.path} HTTP/1.1`, `Host: 127.0.0.1:${t.port}`, 'Connection: Upgrade', 'Upgrade: websocket', 'Sec-WebSocket-Version: 13', `Sec-WebSocket-Key: ${key}`, `Sec-WebSocket-Protocol: ${protocol}`, ...Object.entries(t.headers ?? {}).map(([k, v]) => `${k}: ${v}`)];
  socket.write(lines.join('\r\n') + '\r\n\r\n');
  let buf = Buffer.alloc(0);
  const head = await new Promise<string>((resolve, reject) => {
    const onData = (c: Buffer): void => {
      buf = Buffer.concat([buf, c]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      socket.pause();
      const h = buf.subarray(0, end).toString('latin1');
      buf = buf.subarray(end + 4);
      resolve(h);
    };
    socket.on('data', onData);
    socket.once('error', reject);
  });
  const status = Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1]);
  if (status !== 101) {
    socket.destroy();
    return { status, body: buf.toString('utf8') };
  }
  const accepted = /sec-websocket-protocol: (\S+)/i.exec(head)?.[1] ?? '';
  const ws = new (WebSocket as unknown as new (a: null, p: undefined, o: object) => WebSocket)(null, undefined, { autoPong: true });
  // Client mode for a socket opened by hand: ws masks what a client sends (internal fields, test only).
  (ws as unknown as { _isServer: boolean })._isServer = false;
  (ws as unknown as { setSocket(s: Socket, h: Buffer, o: object): void }).setSocket(socket, buf, { maxPayload: 64 * 1024 * 1024, skipUTF8Validation: false });
  socket.resume();
  return { ws, protocol: accepted };
}
