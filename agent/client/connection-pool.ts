import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** TLS settings of the pool's connections (from the RestConfig). */
export interface PoolTls {
  caPem?: string;
  certPem?: string;
  keyPem?: string;
  rejectUnauthorized: boolean;
  servername?: string;
}

export interface PoolOptions {
  /** Most sockets open to the server at once; further requests queue. */
  connections: number;
  /** An idle kept-alive socket is closed after this many ms. */
  idleMs: number;
}

export interface SendOptions {
  method: string;
  headers: OutgoingHttpHeaders;
  body?: string;
  signal?: AbortSignal;
  /**
   * Ms the socket may stay silent while this exchange uses it before it is destroyed with an
   * ETIMEDOUT error; 0 for none (a watch may be quiet for as long as the server keeps it).
   */
  idleTimeoutMs?: number;
}

/**
 * Keep-alive connections to one API server over node:http(s), for the agent's API client.
 * The agent used undici here; node's own client keeps the idle agent about 6 MB smaller (undici
 * loads its fetch, WebSocket and cache layers and a WebAssembly HTTP parser with the one request
 * function the agent needs), and the agent is a per-node daemon where that memory counts.
 */
export class ConnectionPool {
  private readonly agent: HttpAgent;
  private readonly send_: typeof httpRequest;

  constructor(
    private readonly origin: string,
    tls: PoolTls,
    o: PoolOptions,
  ) {
    const secure = origin.startsWith('https:');
    const common = { keepAlive: true, maxSockets: o.connections, maxFreeSockets: o.connections, timeout: o.idleMs, scheduling: 'lifo' as const };
    this.agent = secure
      ? new HttpsAgent({ ...common, ca: tls.caPem, cert: tls.certPem, key: tls.keyPem, rejectUnauthorized: tls.rejectUnauthorized, ...(tls.servername ? { servername: tls.servername } : {}) })
      : new HttpAgent(common);
    this.send_ = secure ? httpsRequest : httpRequest;
  }

  /**
   * Sends one request to origin + pathAndQuery; resolves with the response once its headers are
   * in (read or destroy its body). Rejects with the transport error, or an AbortError when the
   * signal aborts.
   */
  send(pathAndQuery: string, o: SendOptions): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const headers = o.body !== undefined ? { ...o.headers, 'content-length': Buffer.byteLength(o.body) } : o.headers;
      const req = this.send_(this.origin + pathAndQuery, {
        method: o.method,
        headers,
        agent: this.agent,
        ...(o.signal ? { signal: o.signal } : {}),
        ...(o.idleTimeoutMs !== undefined ? { timeout: o.idleTimeoutMs } : {}),
      });
      req.once('response', resolve);
      req.once('error', reject);
      if (o.idleTimeoutMs) {
        req.once('timeout', () => req.destroy(Object.assign(new Error(`no data for ${o.idleTimeoutMs} ms`), { code: 'ETIMEDOUT' })));
      }
      req.end(o.body);
    });
  }

  /** Stops reusing connections: idle ones close now, busy ones when their exchange ends. */
  retire(): void {
    this.agent.maxFreeSockets = 0;
    for (const list of Object.values(this.agent.freeSockets)) for (const s of list ?? []) s.destroy();
  }

  /** Closes every connection now; exchanges still running fail. */
  destroy(): void {
    this.agent.destroy();
  }
}

/** The whole body as text (UTF-8). */
export async function readText(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
