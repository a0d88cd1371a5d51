/**
 * A minimal secured endpoint for container logs until the agent's full HTTPS server exists:
 * HTTPS on the agent's address:port, client certificates required and verified against the
 * cluster CA (the CA of the agent's kubeconfig), and only callers that are the API server or
 * cluster administrators may read: certificate organization system:masters, or a common name in
 * `allowedUsers` (default: svc-apiserver-kubelet-client, kube-apiserver-kubelet-client, as
 * upstream's apiserver-kubelet-client identity). Only /containerLogs/ is served; everything else
 * is 404. Upstream authorizes through SubjectAccessReview; that arrives with the full server.
 */
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Log } from '../platform/logger';
import { CONTAINER_LOGS_PREFIX } from './container-log-handler';

export const DEFAULT_LOG_READERS = ['svc-apiserver-kubelet-client', 'kube-apiserver-kubelet-client'];
export const MASTERS_GROUP = 'system:masters';

export interface LogServerOptions {
  address: string;
  /** 0 picks a free port. */
  port: number;
  certPem: string;
  keyPem: string;
  /** CA bundle whose client certificates are accepted. */
  clientCaPem: string;
  handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  log: Log;
  allowedUsers?: readonly string[];
}

/** Subject CN and O values of the peer certificate. */
export function peerIdentity(req: IncomingMessage): { cn: string; orgs: string[] } | undefined {
  const sock = req.socket as TLSSocket;
  if (typeof sock.getPeerCertificate !== 'function' || !sock.authorized) return undefined;
  const cert = sock.getPeerCertificate();
  if (!cert || !cert.subject) return undefined;
  const subj = cert.subject as unknown as Record<string, string | string[] | undefined>;
  const list = (v: string | string[] | undefined) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
  return { cn: list(subj['CN'])[0] ?? '', orgs: list(subj['O']) };
}

export class LogServer {
  private server: Server | undefined;

  constructor(private readonly o: LogServerOptions) {}

  /** Whether the identity may read logs. */
  allowed(id: { cn: string; orgs: string[] }): boolean {
    return id.orgs.includes(MASTERS_GROUP) || (this.o.allowedUsers ?? DEFAULT_LOG_READERS).includes(id.cn);
  }

  /** Listens; resolves the bound port. Rejects when the address cannot be bound. */
  async start(): Promise<number> {
    const server = createServer(
      { cert: this.o.certPem, key: this.o.keyPem, ca: this.o.clientCaPem, requestCert: true, rejectUnauthorized: false, minVersion: 'TLSv1.2' },
      (req, res) => void this.serve(req, res),
    );
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.o.port, this.o.address, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const addr = server.address();
    return typeof addr === 'object' && addr ? addr.port : this.o.port;
  }

  /** Serves until the signal aborts, then closes (open streams are cut). Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    if (!this.server) return;
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await this.close();
  }

  async close(): Promise<void> {
    const s = this.server;
    if (!s) return;
    this.server = undefined;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = (code: number, msg: string) => {
      res.writeHead(code, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`${msg}\n`);
    };
    const id = peerIdentity(req);
    if (!id) {
      text(401, 'Unauthorized');
      return;
    }
    if (!this.allowed(id)) {
      this.o.log.info({ user: id.cn, groups: id.orgs, path: req.url }, 'log request refused');
      text(403, `Forbidden (user=${id.cn}, verb=get, resource=nodes, subresource=log)`);
      return;
    }
    if (!(req.url ?? '').startsWith(CONTAINER_LOGS_PREFIX)) {
      text(404, '404 page not found');
      return;
    }
    try {
      await this.o.handler(req, res);
    } catch (e) {
      this.o.log.warn({ path: req.url, error: (e as Error).message }, 'log request failed');
      if (!res.headersSent) text(500, 'internal error');
      else res.end();
    }
  }
}
