/**
 * Forwards an upgrade request to the runtime's stream server as it came (upstream's kubelet does
 * the same with its UpgradeAwareHandler): the request line for the runtime's URL, the client's
 * headers but its credentials, the bytes already read, then bytes both ways until either side
 * closes (common/stream/socket-join.ts). The protocols are the runtime's (containerd serves SPDY v1-v4 and WebSocket
 * channel.k8s.io/v4, as k8s.io/kubelet's streaming server); the 101 or refusal is the runtime's.
 */
import { connect as tcpConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { InternalError, UnavailableError } from '../errors';
import { joinSockets } from '../../common/stream/socket-join';

/** Headers never passed to the runtime: the caller's credentials and hop-by-hop names we rewrite. */
const DROPPED = new Set(['authorization', 'proxy-authorization', 'cookie', 'host', 'content-length', 'transfer-encoding']);

/** Dials the stream URL; resolves the connected socket. */
export async function dialStreamUrl(url: string): Promise<Socket> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new InternalError(`the runtime answered an invalid stream URL ${JSON.stringify(url)}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new InternalError(`the runtime answered a stream URL of unsupported scheme ${u.protocol}`);
  const tls = u.protocol === 'https:';
  const port = Number(u.port || (tls ? 443 : 80));
  const host = u.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve, reject) => {
    // containerd's stream server uses a self-signed certificate when TLS is on; the URL is a one-time token from the runtime itself.
    const s: Socket = tls ? tlsConnect({ host, port, rejectUnauthorized: false }) : tcpConnect(port, host);
    s.once(tls ? 'secureConnect' : 'connect', () => {
      s.off('error', onError);
      resolve(s);
    });
    const onError = (e: Error): void => reject(new UnavailableError(`cannot reach the runtime's stream server: ${e.message}`));
    s.once('error', onError);
  });
}

/** The request as it goes to the runtime. */
export function upstreamRequest(req: IncomingMessage, url: URL): string {
  const lines = [`${req.method ?? 'GET'} ${url.pathname}${url.search} HTTP/1.1`, `Host: ${url.host}`];
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i];
    if (DROPPED.has(name.toLowerCase())) continue;
    lines.push(`${name}: ${raw[i + 1]}`);
  }
  return lines.join('\r\n') + '\r\n\r\n';
}

/**
 * Connects the client socket with the runtime's stream server through `url`; resolves when both
 * are closed. `onOpen` runs once the runtime is connected (its stream counted from there).
 */
export async function proxyUpgrade(req: IncomingMessage, client: Duplex, head: Buffer, url: string, onOpen: () => () => void): Promise<void> {
  const upstream = await dialStreamUrl(url);
  const release = onOpen();
  upstream.write(upstreamRequest(req, new URL(url)));
  if (head.length > 0) upstream.write(head);
  // Either side going away takes the other with it: no runtime stream outlives its client.
  await joinSockets(upstream, client).closed;
  release();
}
