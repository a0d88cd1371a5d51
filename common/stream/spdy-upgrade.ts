/**
 * The HTTP/1.1 upgrade to SPDY/3.1 for the stream protocols (upstream's httpstream and
 * httpstream/spdy packages): the client asks `Connection: Upgrade`, `Upgrade: SPDY/3.1` and lists
 * the stream protocols it speaks in X-Stream-Protocol-Version headers; the server picks the first
 * of the client's it serves and answers 101 naming it. A client that names none gets the oldest
 * protocol (channel.k8s.io); one that names only unknown ones gets 403 with the list the server
 * accepts, as upstream.
 */
import type { Duplex } from 'node:stream';
import { STREAM_PROTOCOL_V1 } from './remotecommand';

export const SPDY_UPGRADE = 'SPDY/3.1';
export const PROTOCOL_HEADER = 'x-stream-protocol-version';
export const ACCEPTED_PROTOCOLS_HEADER = 'X-Accepted-Stream-Protocol-Versions';

/** True when the request asks for the SPDY/3.1 upgrade. */
export function isSpdyUpgrade(headers: Record<string, string | string[] | undefined>): boolean {
  const up = headers.upgrade;
  const value = Array.isArray(up) ? up.join(',') : (up ?? '');
  return value.split(',').some((v) => v.trim().toLowerCase() === SPDY_UPGRADE.toLowerCase());
}

/** The stream protocols a request offers, in its order (repeated headers and comma lists alike). */
export function offeredProtocols(headers: Record<string, string | string[] | undefined>): string[] {
  const raw = headers[PROTOCOL_HEADER];
  const values = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
  return values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '');
}

/** The protocol to speak, or an error message when the client offers only unknown ones. */
export function negotiateStreamProtocol(offered: readonly string[], served: readonly string[]): { protocol: string } | { error: string } {
  if (offered.length === 0) return served.includes(STREAM_PROTOCOL_V1) ? { protocol: STREAM_PROTOCOL_V1 } : { error: 'no stream protocol was requested' };
  const protocol = offered.find((p) => served.includes(p));
  if (protocol) return { protocol };
  return { error: `unable to upgrade: unable to negotiate protocol: client supports [${offered.join(' ')}], server accepts [${served.join(' ')}]` };
}

/** Answers the upgrade with 101 on the raw socket; the SPDY session starts after it. */
export function acceptSpdyUpgrade(socket: Duplex, protocol: string): void {
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${SPDY_UPGRADE}\r\nX-Stream-Protocol-Version: ${protocol}\r\n\r\n`);
}

/** Refuses an upgrade on the raw socket with a plain-text answer and closes it. */
export function refuseUpgrade(socket: Duplex, code: number, reason: string, message: string, extra: Record<string, string> = {}): void {
  const body = message.endsWith('\n') ? message : `${message}\n`;
  const headers = Object.entries({ 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': String(Buffer.byteLength(body)), Connection: 'close', ...extra })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.end(`HTTP/1.1 ${code} ${reason}\r\n${headers}\r\n${body}`);
}
