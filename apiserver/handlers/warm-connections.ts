/**
 * TLS connections to stream backends (node agents) made ahead of need. An upgraded connection is
 * never reused, so every exec, attach or port-forward through the API server used to dial and
 * handshake with the agent while its client waited (about 1.2 ms of a short exec at low load,
 * timed in the handler; bench/streaming-bench.ts shows the gain within its run-to-run noise).
 * After a stream to a backend has ended, one spare connection to it is dialled in the background
 * (resuming its last TLS session) and the next upgrade to it takes that spare. A spare is kept a
 * short while only (well under an HTTP server's headers timeout, 60 s for Node's, after which a
 * server may close a connection that sent nothing), one per backend, for a bounded number of
 * backends; it is unref'd, so it never holds the process, and close() ends them all.
 * Differs from upstream: kube-apiserver's UpgradeAwareHandler dials the kubelet per stream (Go's
 * handshake is cheaper and in parallel threads; here it runs on the one event loop).
 */
import { connect, type ConnectionOptions, type TLSSocket } from 'node:tls';

export interface WarmOptions {
  /** How long a spare may wait for its upgrade (default 15 s). */
  maxIdleMs?: number;
  /** Backends with a spare or a remembered TLS session (default 64): the oldest is forgotten. */
  maxBackends?: number;
  /** Milliseconds, monotonic (injected for tests). */
  now?: () => number;
}

interface Spare {
  socket: TLSSocket;
  since: number;
  timer: NodeJS.Timeout;
  /** Its close and error listener while it waits. */
  gone?: () => void;
}

export class WarmTlsConnections {
  private readonly spares = new Map<string, Spare>();
  private readonly sessions = new Map<string, Buffer>();
  private readonly maxIdleMs: number;
  private readonly maxBackends: number;
  private readonly now: () => number;
  /** Spares taken and connections dialled for an upgrade (for tests and metrics). */
  readonly counts = { taken: 0, dialled: 0 };

  constructor(o: WarmOptions = {}) {
    this.maxIdleMs = o.maxIdleMs ?? 15_000;
    this.maxBackends = o.maxBackends ?? 64;
    this.now = o.now ?? (() => performance.now());
  }

  /**
   * A connection to the backend `key` names (its address, client certificate and CA: callers make
   * keys differ whenever options do): its spare when one is open and young enough, else a new
   * connection with `options`. The caller owns what it gets (errors included).
   */
  take(key: string, options: ConnectionOptions): TLSSocket {
    const spare = this.spares.get(key);
    if (spare) {
      this.drop(key, spare);
      if (!spare.socket.destroyed && this.now() - spare.since < this.maxIdleMs) {
        spare.socket.ref();
        this.counts.taken++;
        return spare.socket;
      }
      spare.socket.destroy();
    }
    this.counts.dialled++;
    return this.dial(key, options);
  }

  /** Dials a spare to the backend (after a stream to it ended), unless one is waiting already. */
  prepare(key: string, options: ConnectionOptions): void {
    if (this.spares.has(key)) return;
    const socket = this.dial(key, options);
    socket.unref();
    const spare: Spare = { socket, since: this.now(), timer: setTimeout(() => this.discard(key, spare), this.maxIdleMs) };
    spare.timer.unref();
    this.spares.set(key, spare);
    // A spare that fails or is closed by the backend is forgotten; its error goes nowhere else.
    const gone = () => this.discard(key, spare);
    socket.on('error', gone);
    socket.once('close', gone);
    spare.gone = gone;
    while (this.spares.size > this.maxBackends) {
      const [k, s] = this.spares.entries().next().value as [string, Spare];
      this.discard(k, s);
    }
  }

  /** Whether a spare to the backend is waiting. */
  has(key: string): boolean {
    return this.spares.has(key);
  }

  /** Closes every spare (server shutdown). */
  close(): void {
    for (const [key, spare] of [...this.spares]) this.discard(key, spare);
  }

  private dial(key: string, options: ConnectionOptions): TLSSocket {
    const session = this.sessions.get(key);
    const socket = connect(options);
    // Set here rather than as connect's `session` option, which Node decodes twice (in the
    // socket's init and again in connect), each a full parse of the peer's certificate under
    // OpenSSL 3 (~5% of the API server's CPU per exec); the handshake starts on the TCP connect,
    // later than this. setSession is TLSSocket's own (not in @types/node); the unit test checks
    // that the session is resumed.
    if (session) (socket as TLSSocket & { setSession(s: Buffer): void }).setSession(session);
    // No Nagle, as node:http's agents: the request head and the first frames go at once.
    socket.setNoDelay(true);
    // Whoever takes the socket attaches its own error listener, a tick later (http's ClientRequest
    // does on the next tick): an error before that must not be thrown; the socket is destroyed
    // and the taker sees it closed.
    socket.on('error', () => undefined);
    socket.on('session', (s: Buffer) => {
      this.sessions.delete(key);
      this.sessions.set(key, s);
      while (this.sessions.size > this.maxBackends) this.sessions.delete(this.sessions.keys().next().value as string);
    });
    return socket;
  }

  /** Removes the spare from the map and its listeners from the socket (the socket stays as it is). */
  private drop(key: string, spare: Spare): void {
    if (this.spares.get(key) === spare) this.spares.delete(key);
    clearTimeout(spare.timer);
    if (spare.gone) {
      spare.socket.off('error', spare.gone);
      spare.socket.off('close', spare.gone);
    }
  }

  private discard(key: string, spare: Spare): void {
    this.drop(key, spare);
    spare.socket.destroy();
  }
}
