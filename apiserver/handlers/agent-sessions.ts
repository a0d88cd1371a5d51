/**
 * Long-lived HTTP/2 connections from the API server to node agents, one per agent address and
 * client certificate, each carrying many tunnelled upgrades (../../common/stream/h2-tunnel.ts) as
 * streams: an exec or attach then costs no TCP or TLS handshake on the API server's leg, where
 * the handshakes were most of its round trip. A connection is opened on first use and closed
 * after it has carried no stream for the idle time; one that fails or is closed by the agent is
 * forgotten and the next stream opens a new one. An agent that does not speak HTTP/2 or does not
 * accept extended CONNECT (an older svc-node, another kubelet) is remembered for a while and its
 * streams go over connections of their own (HTTP/1.1 upgrade), as before.
 * Not upstream's: kube-apiserver dials the kubelet for every stream.
 */
import { connect, type ClientHttp2Session, type Settings } from 'node:http2';
import { isIP } from 'node:net';
import { connect as tlsConnect, type SecureContext } from 'node:tls';

/** Where a session goes and with which credentials. */
export interface SessionTarget {
  host: string;
  port: number;
  secureContext: SecureContext;
  /** Verify the agent's certificate (a CA was configured). */
  verify: boolean;
  /** Distinguishes credentials: sessions are not shared across client certificates or CAs. */
  credentialsKey: string;
}

export interface AgentSessionsOptions {
  /** A connection without streams this long is closed (default 90 s, Go's idle connection timeout). */
  idleMs?: number;
  /** How long an agent found without HTTP/2 extended CONNECT is not asked again (default 10 min). */
  fallbackMs?: number;
  /** A suspect connection (see suspect) not answering a ping this long is dropped (default 10 s). */
  pingTimeoutMs?: number;
  /** Milliseconds; defaults to Date.now. */
  now?: () => number;
}

/** Each stream's receive window: a large exec output is not held to 64 KiB per round trip. */
const STREAM_WINDOW = 1 << 20;
/** Each connection's receive window over all its streams. */
const CONNECTION_WINDOW = 8 << 20;

/** Client stream ids are odd numbers below 2^31 (RFC 9113 section 5.1.1); a connection is replaced well before. */
const LAST_STREAM_ID = 2 ** 31 - 1 - 2 * 1_000_000;

function worn(session: ClientHttp2Session): boolean {
  return (session.state.nextStreamID ?? 0) > LAST_STREAM_ID;
}

/**
 * What a new connection learnt: the agent takes tunnels; it does not (it answered without HTTP/2
 * or without extended CONNECT); or it was not reached (nothing learnt about it).
 */
type Readiness = 'tunnels' | 'no-tunnels' | 'unreached';

interface Entry {
  session: ClientHttp2Session;
  /** Resolves once the agent's settings are in, or the connection failed. */
  ready: Promise<Readiness>;
  open: number;
  idle: NodeJS.Timeout | undefined;
}

export class AgentSessions {
  private readonly entries = new Map<string, Entry>();
  /** Endpoint → until when it is served over HTTP/1.1 without asking. */
  private readonly withoutH2 = new Map<string, number>();
  private readonly idleMs: number;
  private readonly fallbackMs: number;
  private readonly pingTimeoutMs: number;
  private readonly now: () => number;

  constructor(o: AgentSessionsOptions = {}) {
    this.idleMs = o.idleMs ?? 90_000;
    this.fallbackMs = o.fallbackMs ?? 10 * 60_000;
    this.pingTimeoutMs = o.pingTimeoutMs ?? 10_000;
    this.now = o.now ?? Date.now;
  }

  /**
   * A session to the target that accepts tunnelled upgrades, counted as carrying one more stream
   * until `release` is called; undefined when the agent cannot take them (use HTTP/1.1). Rejects
   * only when no answer came within timeoutMs (the agent is unreachable either way).
   */
  async acquire(t: SessionTarget, timeoutMs: number): Promise<{ session: ClientHttp2Session; release: () => void } | undefined> {
    const endpoint = `${t.host}:${t.port}`;
    const until = this.withoutH2.get(endpoint);
    if (until !== undefined && until > this.now()) return undefined;
    const key = `${endpoint}\0${t.credentialsKey}`;
    let e = this.entries.get(key);
    if (e && worn(e.session)) {
      // Its stream ids are nearly used up: it finishes its streams and closes; new ones go to a new connection.
      this.entries.delete(key);
      e.session.close();
      e = undefined;
    }
    if (!e || e.session.closed || e.session.destroyed) e = this.open(key, t);
    e.open++;
    if (e.idle) clearTimeout(e.idle);
    e.idle = undefined;
    const entry = e;
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      entry.open--;
      if (entry.open === 0 && !entry.session.destroyed) {
        entry.idle = setTimeout(() => entry.session.close(), this.idleMs);
        entry.idle.unref();
      }
    };
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
    const ok = await Promise.race([entry.ready, timeout]).finally(() => clearTimeout(timer));
    if (ok === 'tunnels') return { session: entry.session, release };
    release();
    if (ok === 'timeout') {
      this.forget(key, entry);
      throw new Error(`no HTTP/2 settings within ${timeoutMs} ms`);
    }
    // Closed now rather than after the idle time: it can carry no tunnel, and once the memory
    // below expires the agent must be asked again on a new connection, not answered from this one.
    this.forget(key, entry);
    if (ok === 'no-tunnels') this.withoutH2.set(endpoint, this.now() + this.fallbackMs);
    return undefined;
  }

  /**
   * A stream on `session` got no answer in time: the agent may be gone without closing the
   * connection (a host down or cut off, no FIN). The connection is pinged, and dropped when no
   * answer comes within pingTimeoutMs, so the next stream dials anew instead of waiting on it too;
   * a live agent that was merely slow keeps it, with its other streams.
   */
  suspect(session: ClientHttp2Session): void {
    if (session.destroyed) return;
    const dead = setTimeout(() => session.destroy(), this.pingTimeoutMs);
    dead.unref();
    const sent = session.ping((err) => {
      clearTimeout(dead);
      if (err) session.destroy();
    });
    if (!sent) {
      clearTimeout(dead);
      session.destroy();
    }
  }

  /** Closes every connection (streams on them are cut). */
  closeAll(): void {
    for (const [key, e] of this.entries) this.forget(key, e);
  }

  private open(key: string, t: SessionTarget): Entry {
    const session = connect(`https://${t.host.includes(':') ? `[${t.host}]` : t.host}:${t.port}`, {
      settings: { enablePush: false, initialWindowSize: STREAM_WINDOW },
      // The connection is made here because its socket cannot be set up once the session has it.
      createConnection: () => {
        const socket = tlsConnect({ host: t.host, port: t.port, secureContext: t.secureContext, rejectUnauthorized: t.verify, ALPNProtocols: ['h2'], ...(isIP(t.host) ? {} : { servername: t.host }) });
        // Streams' frames are small and interactive (a keystroke, an exit status): never held back by Nagle's algorithm.
        socket.setNoDelay(true);
        return socket;
      },
    });
    // Nothing waits on a connection without streams: it must not keep the process alive.
    session.unref();
    const ready = new Promise<Readiness>((resolve) => {
      session.once('remoteSettings', (s: Settings) => resolve(s.enableConnectProtocol === true ? 'tunnels' : 'no-tunnels'));
      // Reset, or the agent chose HTTP/1.1 (an alert over ALPN): no tunnels. Refused or not
      // resolved: not reached, so not remembered (an agent restarting would otherwise lose its
      // tunnels for the fallback time). Either way this stream is served over HTTP/1.1, which
      // reports an unreachable agent in its own words.
      session.once('error', (err: NodeJS.ErrnoException) => resolve(err.syscall === 'connect' || err.syscall === 'getaddrinfo' ? 'unreached' : 'no-tunnels'));
      session.once('close', () => resolve('no-tunnels'));
    });
    session.once('connect', () => session.setLocalWindowSize(CONNECTION_WINDOW));
    const e: Entry = { session, ready, open: 0, idle: undefined };
    session.on('error', () => this.forget(key, e));
    session.once('close', () => this.forget(key, e));
    // The agent is going away: new streams go to a new connection, open ones finish on this one.
    session.once('goaway', () => {
      if (this.entries.get(key) === e) this.entries.delete(key);
    });
    this.entries.set(key, e);
    return e;
  }

  private forget(key: string, e: Entry): void {
    if (this.entries.get(key) === e) this.entries.delete(key);
    if (e.idle) clearTimeout(e.idle);
    if (!e.session.destroyed) e.session.destroy();
  }
}
