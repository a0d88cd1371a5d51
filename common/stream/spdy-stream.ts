/**
 * One SPDY stream as a Node Duplex: what the peer sends is read, what is written goes out as DATA
 * frames (at most 32 KiB each, within the send windows), end() sends an empty DATA frame with FIN.
 * With a peer that keeps windows, data read is acknowledged with WINDOW_UPDATE as the consumer
 * takes it, which is what holds that peer back. A peer that keeps none (Go's spdystream, see
 * SpdySessionOptions.peerKeepsWindows) gets no WINDOW_UPDATE and is held back by TCP: while the
 * consumer is behind, the session stops reading its socket, as spdystream's own reader blocks.
 * Never both: pausing the socket while our sending waits for the peer's WINDOW_UPDATEs would hold
 * those up too (a deadlock when our consumer waits on our sends).
 */
import { Duplex } from 'node:stream';
import { FLAG_FIN, RstStatus } from './spdy-frame';
import type { SpdyHeaders } from './spdy-header-codec';
import { DEFAULT_WINDOW, SendWindow } from './spdy-flow';

/** What a stream needs of its session (./spdy-connection.ts). */
export interface StreamSession {
  readonly sendWindow: SendWindow;
  /** The peer keeps flow-control windows: we honour its and acknowledge ours (else neither, TCP holds both sides back). */
  readonly peerKeepsWindows: boolean;
  readonly peerInitialWindow: number;
  sendFrame(f: { type: 'data'; streamId: number; flags: number; data: Buffer } | { type: 'rst_stream'; streamId: number; status: number } | { type: 'window_update'; streamId: number; delta: number }): Promise<void>;
  sendHeaders(f: { type: 'syn_reply'; streamId: number; flags: number }, headers: SpdyHeaders): Promise<void>;
  ackSession(bytes: number): void;
  release(id: number): void;
  setReading(on: boolean): void;
}

const MAX_DATA_FRAME = 32 * 1024;

export class SpdyStream extends Duplex {
  readonly sendWindow: SendWindow;
  /** Resolves when the peer answered our SYN_STREAM (streams we opened), rejects on reset. */
  readonly replied: Promise<SpdyHeaders>;
  private resolveReply!: (h: SpdyHeaders) => void;
  private rejectReply!: (e: Error) => void;
  private localFin = false;
  private remoteFin = false;
  private done = false;
  private unacked = 0;
  private paused = false;
  /** The RST_STREAM status, when the peer reset the stream. */
  resetStatus: number | undefined;

  constructor(
    private readonly session: StreamSession,
    readonly id: number,
    /** The SYN_STREAM's headers (ours when we opened it). */
    readonly headers: SpdyHeaders,
    readonly local: boolean,
  ) {
    super({ allowHalfOpen: true });
    this.sendWindow = new SendWindow(session.peerInitialWindow, session.peerKeepsWindows);
    this.replied = new Promise((resolve, reject) => {
      this.resolveReply = resolve;
      this.rejectReply = reject;
    });
    // Nobody may wait on it (peer-opened streams); a rejection must not be unhandled.
    this.replied.catch(() => undefined);
  }

  /** Answers a stream the peer opened (SYN_REPLY), optionally closing our side at once. Never rejects (a lost session closes the stream). */
  reply(headers: SpdyHeaders = {}, fin = false): Promise<void> {
    const p = this.session.sendHeaders({ type: 'syn_reply', streamId: this.id, flags: fin ? FLAG_FIN : 0 }, headers).catch(() => undefined);
    if (fin) this.markLocalFin();
    return p;
  }

  /** Resets the stream (RST_STREAM, CANCEL by default) and destroys it. */
  reset(status: number = RstStatus.CANCEL): void {
    if (this.done) return;
    void this.session.sendFrame({ type: 'rst_stream', streamId: this.id, status }).catch(() => undefined);
    this.finish();
    this.destroy();
  }

  markLocalFin(): void {
    this.localFin = true;
    if (this.remoteFin) this.finish();
  }

  // --- from the session ---------------------------------------------------------------------

  onReply(headers: SpdyHeaders, fin: boolean): void {
    this.resolveReply(headers);
    if (fin) this.onRemoteFin();
  }

  onData(data: Buffer, fin: boolean): void {
    if (data.length > 0 && !this.remoteFin) {
      this.unacked += data.length;
      if (this.push(data)) this.ack(false);
      else if (!this.session.peerKeepsWindows) {
        this.paused = true;
        this.session.setReading(false);
      }
    }
    if (fin) this.onRemoteFin();
  }

  onRemoteFin(): void {
    if (this.remoteFin) return;
    this.remoteFin = true;
    this.push(null);
    if (this.localFin) this.finish();
  }

  onReset(status: number): void {
    this.resetStatus = status;
    this.rejectReply(new Error(`stream ${this.id} was reset (status ${status})`));
    this.finish();
    this.destroy();
  }

  onSessionClosed(): void {
    this.rejectReply(new Error('the SPDY session closed'));
    this.finish();
    // A peer commonly closes the connection right after its last FIN: what it sent is still read
    // to its end before the stream goes (destroying now would drop it and the 'end').
    if (this.remoteFin && !this.readableEnded) this.once('end', () => this.destroy());
    else this.destroy();
  }

  /** The peer has sent FIN (everything it will send has arrived). */
  get remoteEnded(): boolean {
    return this.remoteFin;
  }

  // --- Duplex -------------------------------------------------------------------------------

  override _read(): void {
    if (this.paused) {
      this.paused = false;
      this.session.setReading(true);
    }
    this.ack(true);
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.sendData(chunk).then(() => cb(), cb);
  }

  override _final(cb: (err?: Error | null) => void): void {
    if (this.done || this.localFin) {
      cb();
      return;
    }
    this.session.sendFrame({ type: 'data', streamId: this.id, flags: FLAG_FIN, data: Buffer.alloc(0) }).then(() => {
      this.markLocalFin();
      cb();
    }, cb);
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    // Destroyed by our side before both directions finished: tell the peer.
    if (!this.done) this.reset(RstStatus.CANCEL);
    cb(err);
  }

  private async sendData(chunk: Buffer): Promise<void> {
    let at = 0;
    while (at < chunk.length) {
      if (this.done) throw new Error(`stream ${this.id} is closed`);
      await this.sendWindow.whenOpen();
      await this.session.sendWindow.whenOpen();
      const n = this.session.sendWindow.allowance(this.sendWindow.allowance(Math.min(MAX_DATA_FRAME, chunk.length - at)));
      if (n === 0) continue;
      this.sendWindow.consume(n);
      this.session.sendWindow.consume(n);
      await this.session.sendFrame({ type: 'data', streamId: this.id, flags: 0, data: chunk.subarray(at, at + n) });
      at += n;
    }
  }

  /**
   * Sends WINDOW_UPDATE for what the consumer took: at once when asked (it is waiting), else from
   * half a window on. Never to a peer that keeps no windows (Go's spdystream): it would not read
   * it, and one unread as it closes turns its close into a TCP RST (see SpdySessionOptions).
   */
  private ack(now: boolean): void {
    if (!this.session.peerKeepsWindows || this.unacked === 0 || this.done || this.remoteFin) return;
    if (!now && this.unacked < DEFAULT_WINDOW / 2) return;
    const delta = this.unacked;
    this.unacked = 0;
    void this.session.sendFrame({ type: 'window_update', streamId: this.id, delta }).catch(() => undefined);
    this.session.ackSession(delta);
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    this.sendWindow.release();
    if (this.paused) {
      this.paused = false;
      this.session.setReading(true);
    }
    this.session.release(this.id);
  }
}
