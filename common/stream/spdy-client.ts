/**
 * The client side of the SPDY/3.1 stream protocols, for talking to a runtime's stream server
 * (upstream's client-go SPDY executor): the HTTP upgrade on a fresh connection to the URL, then a
 * client session; for exec and attach, the streams opened as client-go opens them (error first,
 * then stdin, stdout, stderr, resize), each waiting for its reply.
 */
import { connect as tcpConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { ExecOptions } from './exec-streams';
import { SpdySession } from './spdy-connection';
import type { SpdyStream } from './spdy-stream';
import { SPDY_UPGRADE } from './spdy-upgrade';

/** A refused upgrade: the server's status and body. */
export class UpgradeRefusedError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`upgrade refused: ${status} ${body.trim()}`);
  }
}

async function dial(u: URL): Promise<Socket> {
  const tls = u.protocol === 'https:';
  const port = Number(u.port || (tls ? 443 : 80));
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const s: Socket = tls ? tlsConnect({ host, port, rejectUnauthorized: false }) : tcpConnect(port, host);
  // Each stream open waits for its SYN_REPLY: Nagle's algorithm would hold our next frame 40 ms.
  s.setNoDelay(true);
  await new Promise<void>((resolve, reject) => {
    s.once(tls ? 'secureConnect' : 'connect', () => resolve());
    s.once('error', reject);
  });
  return s;
}

/** Reads the answer head; resolves it and the bytes after it. */
function readHead(s: Socket): Promise<{ head: string; rest: Buffer }> {
  let buf = Buffer.alloc(0);
  return new Promise((resolve, reject) => {
    const onData = (c: Buffer): void => {
      buf = Buffer.concat([buf, c]);
      const end = buf.indexOf('\r\n\r\n');
      if (end >= 0) {
        cleanup();
        s.pause();
        resolve({ head: buf.subarray(0, end).toString('latin1'), rest: buf.subarray(end + 4) });
      } else if (buf.length > 64 * 1024) {
        cleanup();
        reject(new Error('the upgrade answer has no end of headers within 64 KiB'));
      }
    };
    const onEnd = (): void => {
      cleanup();
      reject(new UpgradeRefusedError(0, buf.toString('utf8')));
    };
    const cleanup = (): void => {
      s.off('data', onData);
      s.off('end', onEnd);
      s.off('error', reject);
    };
    s.on('data', onData);
    s.once('end', onEnd);
    s.once('error', reject);
  });
}

/** Upgrades a new connection to `url` to SPDY/3.1 offering `protocols`; resolves the client session and the protocol the server chose. */
export async function spdyConnect(url: string, protocols: readonly string[]): Promise<{ session: SpdySession; protocol: string }> {
  const { socket, protocol } = await spdyUpgradeSocket(url, protocols);
  const session = new SpdySession(socket, { server: false });
  socket.resume();
  return { session, protocol };
}

/** The upgrade alone: resolves the connection after the 101 (paused, the bytes after the answer put back) and the protocol chosen. */
export async function spdyUpgradeSocket(url: string, protocols: readonly string[]): Promise<{ socket: Socket; protocol: string }> {
  const u = new URL(url);
  const s = await dial(u);
  const lines = [`GET ${u.pathname}${u.search} HTTP/1.1`, `Host: ${u.host}`, 'Connection: Upgrade', `Upgrade: ${SPDY_UPGRADE}`, ...protocols.map((p) => `X-Stream-Protocol-Version: ${p}`)];
  s.write(lines.join('\r\n') + '\r\n\r\n');
  let answer;
  try {
    answer = await readHead(s);
  } catch (e) {
    s.destroy();
    throw e;
  }
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(answer.head)?.[1] ?? '0');
  if (status !== 101) {
    s.destroy();
    throw new UpgradeRefusedError(status, answer.rest.toString('utf8'));
  }
  const protocol = /^x-stream-protocol-version:\s*(\S+)/im.exec(answer.head)?.[1] ?? '';
  if (answer.rest.length > 0) s.unshift(answer.rest);
  return { socket: s, protocol };
}

export interface ExecClientStreams {
  error: SpdyStream;
  stdin?: SpdyStream;
  stdout?: SpdyStream;
  stderr?: SpdyStream;
  resize?: SpdyStream;
}

/**
 * Opens the exec/attach streams on a client session, with client-go's stream types and order
 * (error, stdin, stdout, stderr, resize) but without its wait for each stream's SYN_REPLY before
 * the next SYN_STREAM: all go out at once and the replies are awaited together, one round trip to
 * the runtime instead of one per stream. Upstream's stream server (k8s.io/apiserver's httpstream,
 * in containerd and CRI-O) replies to each stream as it arrives and tells them apart by type.
 */
export async function openExecStreams(session: SpdySession, o: ExecOptions, protocol: string): Promise<ExecClientStreams> {
  const v = /^v(\d+)\./.exec(protocol);
  const types: (keyof ExecClientStreams)[] = ['error'];
  if (o.stdin) types.push('stdin');
  if (o.stdout) types.push('stdout');
  if (o.stderr && !o.tty) types.push('stderr');
  if (o.tty && v && Number(v[1]) >= 3) types.push('resize');
  // Called in order, each openStream takes the next stream ID and queues its SYN_STREAM at once.
  const opened = types.map((t) => session.openStream({ streamtype: t }));
  const streams = await Promise.all(opened);
  const out = Object.fromEntries(types.map((t, i) => [t, streams[i]])) as unknown as ExecClientStreams;
  for (const s of streams) s.on('error', () => undefined);
  return out;
}
