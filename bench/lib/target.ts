import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request, type Dispatcher } from 'undici';

/** Client TLS material: the CA to trust and a client certificate to present. */
export interface ClientTls {
  ca: string;
  cert: string;
  key: string;
  /** The name checked against the serving certificate (we connect to 127.0.0.1). */
  servername: string;
}

/** The admin client credentials the API server writes under <data-dir>/pki. */
export function adminTls(dataDir: string): ClientTls {
  const pki = join(dataDir, 'pki');
  return {
    ca: readFileSync(join(pki, 'ca.crt'), 'utf8'),
    cert: readFileSync(join(pki, 'admin.crt'), 'utf8'),
    key: readFileSync(join(pki, 'admin.key'), 'utf8'),
    servername: 'localhost',
  };
}

export interface Reply {
  status: number;
  text: string;
}

/**
 * One HTTPS server under load (the API server or the floor server): the same request code drives
 * both, so the only difference between their figures is the server.
 */
export class Target {
  constructor(
    readonly name: string,
    readonly host: string,
    readonly port: number,
    readonly tls: ClientTls,
  ) {}

  get origin(): string {
    return `https://${this.host}:${this.port}`;
  }

  /** A connection pool of at most `connections` TLS connections (one per concurrent client), HTTP/1.1 without pipelining. */
  pool(connections: number): Agent {
    return new Agent({
      connections,
      pipelining: 1,
      keepAliveTimeout: 60_000,
      connect: { ca: this.tls.ca, cert: this.tls.cert, key: this.tls.key, servername: this.tls.servername },
    });
  }

  /** Sends one request and reads the whole answer as text (never parsed here, so parsing cost is the caller's choice). */
  async send(dispatcher: Dispatcher, method: Dispatcher.HttpMethod, path: string, body?: unknown): Promise<Reply> {
    const res = await request(this.origin + path, {
      method,
      dispatcher,
      headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.statusCode, text: await res.body.text() };
  }

  /** Like send, but throws unless the status is one of `ok`. */
  async expect(dispatcher: Dispatcher, ok: readonly number[], method: Dispatcher.HttpMethod, path: string, body?: unknown): Promise<Reply> {
    const r = await this.send(dispatcher, method, path, body);
    if (!ok.includes(r.status)) {
      throw new Error(`${this.name}: ${method} ${path} answered ${r.status}: ${r.text.slice(0, 300)}`);
    }
    return r;
  }
}
