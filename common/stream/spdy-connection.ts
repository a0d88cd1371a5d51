/**
 * A SPDY/3.1 session over a byte stream (a TCP/TLS socket after the `SPDY/3.1` upgrade, or a
 * WebSocket tunnel): streams opened by either side (SYN_STREAM, answered by SYN_REPLY), data with
 * FIN half-closes, RST_STREAM, PING answered, GOAWAY, SETTINGS, and flow control (./spdy-flow.ts)
 * with peers that keep windows (see SpdySessionOptions.peerKeepsWindows).
 * Frames are handled strictly in arrival order and written in submission order, because header
 * blocks share one zlib context per direction.
 *
 * Stream ids: the client's odd, the server's even (draft 3.1, 2.3.2). A stream is done when both
 * sides have sent FIN, or either reset it; the session ends when its socket does, and every open
 * stream is destroyed with it.
 */
import { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';
import { FLAG_FIN, FrameDecoder, RstStatus, SETTINGS_INITIAL_WINDOW_SIZE, encodeFrame, type SpdyFrame } from './spdy-frame';
import { HeaderCompressor, HeaderDecompressor, type SpdyHeaders } from './spdy-header-codec';
import { DEFAULT_WINDOW, SendWindow } from './spdy-flow';
import { SpdyStream } from './spdy-stream';

export interface SpdySessionOptions {
  /** Server side: accepts odd stream ids and opens even ones. */
  server: boolean;
  /** Called for every stream the peer opens; reply (or reset) it. Default: reset REFUSED_STREAM. */
  onStream?: (stream: SpdyStream) => void;
  /**
   * Whether the peer keeps SPDY/3.1 flow-control windows (true), or relies on TCP alone (false,
   * the default). Go's spdystream, which kubectl, client-go, kubelet and the container runtimes'
   * stream servers use, keeps none: it never sends WINDOW_UPDATE and drops those it reads (an
   * unhandled frame type). Towards such a peer, unlike the draft (2.6.8, flow control is
   * mandatory), our sending does not wait on windows (it would stop after 64 KiB) and we send no
   * WINDOW_UPDATE: spdystream closes its connection right after its last frames without reading
   * on, and a WINDOW_UPDATE arriving then (or still unread) makes its kernel answer with a TCP
   * RST, which discards what it has not sent yet (an exec's last output and its exit status) and
   * fails our next write. true is for peers known to keep windows (tests): we then honour theirs
   * and acknowledge ours, and the session does not pause its socket for a slow stream, which
   * would hold up the very WINDOW_UPDATEs our sending waits for.
   */
  peerKeepsWindows?: boolean;
  /** Largest frame accepted, bytes (default the format's 16 MiB - 1). */
  maxFrame?: number;
}

type HeaderFrame = Extract<SpdyFrame, { type: 'syn_stream' | 'syn_reply' | 'headers' }>;
/** A header-bearing frame before its block is compressed. */
type HeaderFrameFields = HeaderFrame extends infer F ? (F extends HeaderFrame ? Omit<F, 'headerBlock'> : never) : never;

/** The session. Emits 'close' once, when its socket has closed and every stream with it. */
export class SpdySession extends EventEmitter {
  private readonly streams = new Map<number, SpdyStream>();
  private readonly decoder: FrameDecoder;
  private readonly compressor = new HeaderCompressor();
  private readonly decompressor = new HeaderDecompressor();
  private writeChain: Promise<void> = Promise.resolve();
  private readChain: Promise<void> = Promise.resolve();
  private nextId: number;
  private nextPing: number;
  private readonly pings = new Map<number, () => void>();
  private lastPeerId = 0;
  private closed = false;
  private goingAway = false;
  /** Our side of the socket is ended (after GOAWAY): nothing more may be written. */
  private ended = false;
  /** Session-level send window (SPDY/3.1: stream 0 WINDOW_UPDATEs). */
  readonly sendWindow: SendWindow;
  /** The peer keeps flow-control windows (SpdySessionOptions.peerKeepsWindows). */
  readonly peerKeepsWindows: boolean;
  peerInitialWindow = DEFAULT_WINDOW;
  private unackedSession = 0;

  constructor(
    private readonly socket: Duplex,
    private readonly o: SpdySessionOptions,
  ) {
    super();
    this.nextId = o.server ? 2 : 1;
    this.nextPing = o.server ? 2 : 1;
    this.peerKeepsWindows = o.peerKeepsWindows === true;
    this.sendWindow = new SendWindow(DEFAULT_WINDOW, this.peerKeepsWindows);
    this.decoder = new FrameDecoder(o.maxFrame);
    socket.on('data', (chunk: Buffer) => this.onBytes(chunk));
    // The peer has stopped sending (or the connection failed): the frames already read are handled first (a header block
    // inflates asynchronously, so the frames after it wait in readChain; closing at once dropped
    // the last DATA of a stream, an exec's final output, when the peer closed right after it).
    socket.on('error', () => this.teardownAfterReads());
    socket.on('close', () => this.teardownAfterReads());
    socket.on('end', () => this.teardownAfterReads());
  }

  /** Open streams (for tests and limits). */
  get openStreams(): number {
    return this.streams.size;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Opens a stream with SYN_STREAM; resolves once the peer's SYN_REPLY arrives, rejects on RST_STREAM or close. */
  async openStream(headers: SpdyHeaders, o: { fin?: boolean } = {}): Promise<SpdyStream> {
    if (this.closed || this.goingAway) throw new Error('the SPDY session is closed');
    const id = this.nextId;
    this.nextId += 2;
    const stream = new SpdyStream(this, id, headers, true);
    this.streams.set(id, stream);
    await this.sendHeaders({ type: 'syn_stream', streamId: id, associatedId: 0, priority: 0, flags: o.fin ? FLAG_FIN : 0 }, headers);
    if (o.fin) stream.markLocalFin();
    await stream.replied;
    return stream;
  }

  /** Sends a PING and resolves when its echo arrives (rejects when the session closes first). */
  ping(): Promise<void> {
    const id = this.nextPing;
    this.nextPing += 2;
    return new Promise((resolve, reject) => {
      if (this.closed) {
        reject(new Error('the SPDY session is closed'));
        return;
      }
      this.pings.set(id, resolve);
      this.once('close', () => reject(new Error('the SPDY session closed before the ping was answered')));
      this.post({ type: 'ping', id });
    });
  }

  /**
   * Sends GOAWAY and ends the socket once everything queued is written. Whatever the peer still
   * sends is read, but nothing more is written: a write after the end (a WINDOW_UPDATE for a late
   * resize, say) is an error on the socket, which would destroy it with our last frames (a
   * command's output and exit status) still queued in TLS.
   */
  close(): void {
    if (this.closed || this.goingAway) return;
    this.goingAway = true;
    this.post({ type: 'goaway', lastGoodStreamId: this.lastPeerId, status: 0 });
    this.writeChain = this.writeChain.then(() => {
      this.ended = true;
      this.socket.end();
    });
  }

  /** Cuts the socket at once; every stream is destroyed. */
  destroy(): void {
    this.socket.destroy();
    this.teardown();
  }

  // --- used by SpdyStream -------------------------------------------------------------------

  /** Queues a frame without a header block. */
  sendFrame(f: SpdyFrame): Promise<void> {
    return this.enqueue(() => encodeFrame(f));
  }

  /** Queues a frame and forgets it (a failure means the session is gone, which is reported by 'close'). */
  post(f: SpdyFrame): void {
    this.sendFrame(f).catch(() => undefined);
  }

  /** Queues a frame whose header block is compressed when its turn comes. */
  sendHeaders(f: HeaderFrameFields, headers: SpdyHeaders): Promise<void> {
    return this.enqueue(async () => encodeFrame({ ...f, headerBlock: await this.compressor.compress(headers) }));
  }

  /** Acknowledges data the consumer of a stream has taken (session-level part); nothing towards a peer that keeps no windows. */
  ackSession(bytes: number): void {
    if (!this.peerKeepsWindows) return;
    this.unackedSession += bytes;
    if (this.unackedSession >= DEFAULT_WINDOW / 2) {
      const delta = this.unackedSession;
      this.unackedSession = 0;
      this.post({ type: 'window_update', streamId: 0, delta });
    }
  }

  /** Forgets a finished stream. */
  release(id: number): void {
    this.streams.delete(id);
    if (this.streams.size === 0) this.emit('idle');
  }

  /** Pauses or resumes reading the socket (a stream's consumer is behind). */
  setReading(on: boolean): void {
    if (on) this.socket.resume();
    else this.socket.pause();
  }

  // --- internals ----------------------------------------------------------------------------

  private enqueue(build: () => Buffer | Promise<Buffer>): Promise<void> {
    const next = this.writeChain.then(async () => {
      if (this.closed || this.ended) throw new Error('the SPDY session is closed');
      const buf = await build();
      if (!this.socket.write(buf)) await new Promise<void>((resolve) => {
        const done = (): void => {
          this.socket.off('drain', done);
          this.socket.off('close', done);
          resolve();
        };
        this.socket.on('drain', done);
        this.socket.on('close', done);
      });
    });
    // The chain itself never rejects; the caller sees the failure.
    this.writeChain = next.catch(() => undefined);
    return next;
  }

  private onBytes(chunk: Buffer): void {
    if (this.closed) return;
    let frames: SpdyFrame[];
    try {
      frames = this.decoder.push(chunk);
    } catch (e) {
      this.protocolError(e as Error);
      return;
    }
    for (const f of frames) {
      this.readChain = this.readChain.then(() => this.handle(f)).catch((e: unknown) => this.protocolError(e as Error));
    }
  }

  private protocolError(e: Error): void {
    if (this.closed) return;
    // For logs: a listener learns why the session ended.
    this.emit('protocol-error', e);
    this.sendFrame({ type: 'goaway', lastGoodStreamId: this.lastPeerId, status: 1 })
      .catch(() => undefined)
      .finally(() => this.destroy());
  }

  private async handle(f: SpdyFrame): Promise<void> {
    if (this.closed) return;
    switch (f.type) {
      case 'syn_stream':
        return this.onSynStream(f, await this.decompressor.decompress(f.headerBlock));
      case 'syn_reply': {
        const headers = await this.decompressor.decompress(f.headerBlock);
        const s = this.streams.get(f.streamId);
        if (s) s.onReply(headers, (f.flags & FLAG_FIN) !== 0);
        return;
      }
      case 'headers': {
        await this.decompressor.decompress(f.headerBlock);
        if (f.flags & FLAG_FIN) this.streams.get(f.streamId)?.onRemoteFin();
        return;
      }
      case 'data': {
        const s = this.streams.get(f.streamId);
        if (!s) {
          // Data for a stream we do not know (already reset or finished): refuse it, as upstream.
          if (f.data.length > 0) this.ackSession(f.data.length);
          return;
        }
        s.onData(f.data, (f.flags & FLAG_FIN) !== 0);
        return;
      }
      case 'rst_stream':
        this.streams.get(f.streamId)?.onReset(f.status);
        return;
      case 'settings':
        for (const e of f.entries) if (e.id === SETTINGS_INITIAL_WINDOW_SIZE) this.onInitialWindow(e.value);
        return;
      case 'ping':
        if ((f.id & 1) === (this.o.server ? 0 : 1)) this.pings.get(f.id)?.();
        else this.post({ type: 'ping', id: f.id });
        this.pings.delete(f.id);
        return;
      case 'goaway':
        this.goingAway = true;
        return;
      case 'window_update':
        if (f.streamId === 0) this.sendWindow.grow(f.delta);
        else this.streams.get(f.streamId)?.sendWindow.grow(f.delta);
        return;
      case 'unknown':
        return;
    }
  }

  private onSynStream(f: Extract<SpdyFrame, { type: 'syn_stream' }>, headers: SpdyHeaders): void {
    const fromClient = (f.streamId & 1) === 1;
    if (fromClient !== this.o.server || f.streamId <= this.lastPeerId || this.streams.has(f.streamId)) {
      this.post({ type: 'rst_stream', streamId: f.streamId, status: RstStatus.PROTOCOL_ERROR });
      return;
    }
    this.lastPeerId = f.streamId;
    if (this.goingAway) {
      this.post({ type: 'rst_stream', streamId: f.streamId, status: RstStatus.REFUSED_STREAM });
      return;
    }
    const stream = new SpdyStream(this, f.streamId, headers, false);
    this.streams.set(f.streamId, stream);
    if (f.flags & FLAG_FIN) stream.onRemoteFin();
    if (this.o.onStream) this.o.onStream(stream);
    else stream.reset(RstStatus.REFUSED_STREAM);
  }

  private onInitialWindow(value: number): void {
    const delta = value - this.peerInitialWindow;
    this.peerInitialWindow = value;
    for (const s of this.streams.values()) s.sendWindow.grow(delta);
  }

  /** Closes once every frame read so far is handled (readChain never rejects). */
  private teardownAfterReads(): void {
    void this.readChain.then(() => this.teardown());
  }

  private teardown(): void {
    if (this.closed) return;
    this.closed = true;
    for (const s of [...this.streams.values()]) s.onSessionClosed();
    this.streams.clear();
    this.compressor.close();
    this.decompressor.close();
    this.socket.destroy();
    this.emit('close');
  }
}
