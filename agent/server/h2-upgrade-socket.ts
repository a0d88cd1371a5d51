/**
 * The agent's end of an upgrade tunnelled over an HTTP/2 stream (../../common/stream/h2-tunnel.ts):
 * the stream seen as the raw socket of an HTTP/1.1 upgrade, so the upgrade handlers (WebSocket,
 * SPDY, the proxy to a runtime's stream server) serve it unchanged. What they write first is an
 * HTTP/1.1 answer head: it becomes the stream's response headers (101 as 200, hop-by-hop headers
 * dropped), and every byte after it is the stream's data; what the peer sends is read as from
 * the socket.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { constants, type ServerHttp2Stream } from 'node:http2';
import { Duplex } from 'node:stream';
import { h2Headers, UPGRADE_METHOD_HEADER } from '../../common/stream/h2-tunnel';

/** An answer head longer than this is refused (ours are a few hundred bytes). */
const MAX_HEAD = 64 * 1024;

/** The status code and headers of an HTTP/1.1 answer head (without its blank line). */
export function parseAnswerHead(head: string): { status: number; headers: Record<string, string | string[]> } {
  const lines = head.split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(lines[0] ?? '');
  if (!m) throw new Error(`not an HTTP/1.1 answer: ${JSON.stringify((lines[0] ?? '').slice(0, 80))}`);
  const headers: Record<string, string | string[]> = {};
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    if (i <= 0) continue;
    const name = line.slice(0, i).trim().toLowerCase();
    const value = line.slice(i + 1).trim();
    const had = headers[name];
    headers[name] = had === undefined ? value : [...(Array.isArray(had) ? had : [had]), value];
  }
  return { status: Number(m[1]), headers };
}

/**
 * The request an upgrade handler reads, from an extended CONNECT's headers: the client's method,
 * the agent path, the Upgrade token and Connection: Upgrade put back, every other header as sent.
 * `socket` is the connection's TLS socket (the authenticator reads its peer certificate).
 */
export function tunnelledRequest(h: IncomingHttpHeaders, socket: unknown): IncomingMessage {
  const headers: IncomingHttpHeaders = { ...h2Headers(h) } as IncomingHttpHeaders;
  const method = String(h[UPGRADE_METHOD_HEADER] ?? 'GET').toUpperCase();
  delete headers[UPGRADE_METHOD_HEADER];
  headers.connection = 'Upgrade';
  headers.upgrade = String(h[':protocol'] ?? '');
  const rawHeaders = Object.entries(headers).flatMap(([k, v]) => (Array.isArray(v) ? v.flatMap((x) => [k, x]) : [k, String(v)]));
  return { method, url: String(h[':path'] ?? '/'), headers, rawHeaders, socket, httpVersion: '1.1' } as unknown as IncomingMessage;
}

export class H2UpgradeSocket extends Duplex {
  /** The answer head read so far; undefined once it was sent as the response headers. */
  private head: Buffer | undefined = Buffer.alloc(0);
  /** The answer was a refusal (not 101): once it is sent, nothing more is read or written. */
  private refused = false;

  constructor(private readonly stream: ServerHttp2Stream) {
    super({ allowHalfOpen: true });
    stream.on('data', (d: Buffer) => {
      if (!this.push(d)) stream.pause();
    });
    stream.once('end', () => this.push(null));
    stream.once('error', (e) => this.destroy(e));
    // Closed cleanly (both ends sent END_STREAM): closed once what was read has been consumed;
    // reset by the peer or with the connection, or after a refusal (whose handler reads nothing):
    // closed at once, as a socket the peer reset.
    stream.once('close', () => {
      if (stream.rstCode !== constants.NGHTTP2_NO_ERROR || this.readableEnded || this.refused) this.destroy();
      else this.once('end', () => this.destroy());
    });
  }

  override _read(): void {
    this.stream.resume();
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (e?: Error | null) => void): void {
    if (this.head === undefined) {
      this.stream.write(chunk, cb);
      return;
    }
    const head = Buffer.concat([this.head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) {
      this.head = head;
      cb(head.length > MAX_HEAD ? new Error('the upgrade answer head is over 64 KiB') : null);
      return;
    }
    this.head = undefined;
    let answer: ReturnType<typeof parseAnswerHead>;
    try {
      answer = parseAnswerHead(head.subarray(0, end).toString('latin1'));
    } catch (e) {
      cb(e as Error);
      return;
    }
    this.refused = answer.status !== 101;
    this.stream.respond({ ...h2Headers(answer.headers), ':status': answer.status === 101 ? 200 : answer.status });
    const rest = head.subarray(end + 4);
    if (rest.length > 0) this.stream.write(rest, cb);
    else cb();
  }

  override _final(cb: (e?: Error | null) => void): void {
    // Ended before any answer: nothing was said, which the API server reports as a failed upgrade.
    if (this.head !== undefined && !this.stream.headersSent) {
      this.refused = true;
      this.stream.respond({ ':status': 502 });
    }
    this.stream.end(cb);
    // A refusal is a complete response: the stream is closed once it is out (RST_STREAM NO_ERROR,
    // RFC 9113 section 8.1), as Node does for a server stream it never read. Left open until the
    // peer ends its side, which a client that will send nothing more need not do, it would count
    // against the connection's concurrent streams and hold its graceful close for good.
    if (this.refused) this.stream.close(constants.NGHTTP2_NO_ERROR);
  }

  override _destroy(err: Error | null, cb: (e?: Error | null) => void): void {
    // Both sides ended: the stream closes by itself once its last frame is out; a reset here could
    // overtake data still queued for the peer. Otherwise the stream is reset (its data flushed first).
    if (!this.stream.closed && !(err === null && this.writableFinished && this.readableEnded)) {
      this.stream.close(err ? constants.NGHTTP2_INTERNAL_ERROR : constants.NGHTTP2_CANCEL);
    }
    cb(err);
  }

  /**
   * An end() after the socket finished or was destroyed does nothing but call its callback: the
   * WebSocket library ends its socket on the peer's close frame and again on the socket's end, and
   * Writable.end answers each late call by building an error nobody reads (a stack trace each,
   * about 30 µs an exec).
   */
  override end(...args: unknown[]): this {
    if (this.destroyed || this.writableFinished) {
      const cb = args.find((a) => typeof a === 'function') as (() => void) | undefined;
      if (cb) process.nextTick(cb);
      return this;
    }
    return super.end(...(args as Parameters<Duplex['end']>));
  }

  /** As a socket's: the stream's own inactivity timeout (the handlers' idle cut). */
  setTimeout(ms: number, cb?: () => void): this {
    this.stream.setTimeout(ms, cb);
    return this;
  }

  /** No-ops: the connection's socket is shared by every stream and set up once. */
  setNoDelay(): this {
    return this;
  }

  setKeepAlive(): this {
    return this;
  }
}
