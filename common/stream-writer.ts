/**
 * The writing side of a long HTTP response (a watch, a followed log) that ends with its
 * connection. Node's `res.write` returning false means the peer has not taken what was written;
 * waiting for 'drain' alone never ends once the socket is gone (no 'drain' comes after a close, a
 * reset or an error), and a peer that stays connected but stops reading would hold the producer
 * and what it holds forever. StreamWriter waits for whichever comes first: 'drain', the
 * connection's end ('close', 'error'), the caller's signal, or the write deadline; at the deadline
 * it destroys the response, which closes the socket. Its `signal` aborts when the stream is over
 * for any of those reasons, so producers stop and release what they hold.
 *
 * Memory per stream stays bounded by the response's own buffer (its highWaterMark) plus the one
 * chunk that filled it: nothing is written while the peer is behind.
 */

/** What StreamWriter uses of a response; Node's ServerResponse satisfies it. */
export interface StreamResponse {
  write(chunk: string | Buffer): boolean;
  end(chunk?: string | Buffer): void;
  destroy(error?: Error): void;
  readonly destroyed: boolean;
  readonly writableEnded: boolean;
  readonly writableNeedDrain: boolean;
  readonly writableFinished: boolean;
  once(event: 'drain' | 'finish' | 'close', fn: () => void): unknown;
  on(event: 'close' | 'error', fn: () => void): unknown;
  off(event: 'drain' | 'finish' | 'close' | 'error', fn: () => void): unknown;
}

/** One-shot timers: calls fn after ms; the returned function cancels it (the informer Clock's `after`). */
export type After = (ms: number, fn: () => void) => () => void;

const realAfter: After = (ms, fn) => {
  const t = setTimeout(fn, ms);
  return () => clearTimeout(t);
};

/**
 * How long a write may wait for the peer before the stream is cut: 60 s, the default of
 * kube-apiserver's --request-timeout (the longest an ordinary request may take there). A peer that
 * takes none of a pending chunk for that long is treated as gone. Upstream reaches the same end
 * differently: its watch cache terminates a watcher whose buffer stays full ("Forcing watcher close
 * due to unresponsiveness") and the client re-watches from its last resourceVersion.
 */
export const WRITE_DEADLINE_MS = 60_000;

export interface StreamWriterOptions {
  /** See WRITE_DEADLINE_MS (the default). */
  writeDeadlineMs?: number;
  /** The stream also ends when this aborts (server shutdown, the request's own timeout). */
  signal?: AbortSignal;
  after?: After;
}

/** Why a stream ended: the peer went away (close, error), the deadline passed, or the caller's signal. */
export type StreamEnd = 'closed' | 'deadline' | 'aborted';

export class StreamWriter {
  private readonly ac = new AbortController();
  private why: StreamEnd | undefined;
  private readonly deadlineMs: number;
  private readonly after: After;
  private readonly onClose = (): void => this.finish('closed');
  private readonly onAbort = (): void => this.finish('aborted');

  constructor(
    private readonly res: StreamResponse,
    private readonly o: StreamWriterOptions = {},
  ) {
    this.deadlineMs = o.writeDeadlineMs ?? WRITE_DEADLINE_MS;
    this.after = o.after ?? realAfter;
    res.on('close', this.onClose);
    // A write error also closes the socket; listening keeps it from becoming an uncaught 'error'.
    res.on('error', this.onClose);
    if (o.signal?.aborted) this.finish('aborted');
    else o.signal?.addEventListener('abort', this.onAbort, { once: true });
    if (res.destroyed) this.finish('closed');
  }

  /** Aborts once the stream is over; producers watch it to stop and let go of what they hold. */
  get signal(): AbortSignal {
    return this.ac.signal;
  }

  /** Why the stream is over, or undefined while it runs. */
  get ended(): StreamEnd | undefined {
    return this.why;
  }

  /**
   * Writes the chunk and resolves once the peer may take more: true then, false when the stream
   * is over (nothing more should be produced). Never rejects.
   */
  async write(chunk: string | Buffer): Promise<boolean> {
    if (this.why || this.res.destroyed) return false;
    if (this.res.write(chunk)) return !this.why;
    return this.waitForDrain();
  }

  /**
   * Writes only when the peer is keeping up (heartbeats, bookmarks: dropping one costs nothing);
   * returns whether it was written.
   */
  offer(chunk: string | Buffer): boolean {
    if (this.why || this.res.writableNeedDrain) return false;
    this.res.write(chunk);
    return true;
  }

  /**
   * Ends the response (when the stream is still open) with an optional last chunk, and stops
   * listening. What the peer has not taken yet still gets the write deadline: a peer that never
   * reads does not keep the socket.
   */
  end(last?: string | Buffer): void {
    const res = this.res;
    if (!res.destroyed && !res.writableEnded) {
      if (last !== undefined && !this.why) res.end(last);
      else res.end();
    }
    this.release();
    if (res.destroyed || res.writableFinished) return;
    const cancel = this.after(this.deadlineMs, () => {
      res.off('finish', settled);
      res.off('close', settled);
      if (!res.destroyed) res.destroy();
    });
    const settled = (): void => {
      cancel();
      res.off('finish', settled);
      res.off('close', settled);
    };
    res.once('finish', settled);
    res.once('close', settled);
  }

  private waitForDrain(): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const done = (): void => {
        cancel();
        this.res.off('drain', done);
        this.ac.signal.removeEventListener('abort', done);
        resolve(!this.why);
      };
      const cancel = this.after(this.deadlineMs, () => {
        this.finish('deadline');
        done();
      });
      this.res.once('drain', done);
      this.ac.signal.addEventListener('abort', done, { once: true });
    });
  }

  private finish(why: StreamEnd): void {
    if (this.why) return;
    this.why = why;
    // A peer that does not read must not keep the socket: it would hold the unsent bytes and, at
    // shutdown, the server's close. (A stream the caller stops is ended normally by end().)
    if (why === 'deadline' && !this.res.destroyed) this.res.destroy();
    this.release();
    this.ac.abort();
  }

  private release(): void {
    this.res.off('close', this.onClose);
    this.res.off('error', this.onClose);
    this.o.signal?.removeEventListener('abort', this.onAbort);
  }
}
