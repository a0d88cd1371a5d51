/**
 * /healthz, /livez and /readyz on the agent server. Upstream's kubelet serves /healthz with the
 * checks ping, log and syncloop (its sync loop ran recently); we have ping and syncloop (the
 * heartbeat loops keep finishing attempts, the same test the systemd watchdog uses), and /readyz
 * adds the node's readiness (the container runtime answers). /livez and /readyz are ours (the
 * kubelet does not serve them), in the API server's format. Answers "ok" (200) or the failing checks
 * with "[-]name failed: reason" lines (500); ?verbose lists every check; /healthz/<check> runs one.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MethodNotAllowedError, NotFoundError } from '../errors';

/** One named health check. */
export interface HealthCheck {
  name: string;
  /** undefined when healthy, else why not. Never rejects. */
  check(): Promise<string | undefined> | string | undefined;
}

export interface HealthHandlerOptions {
  /** Checks of /healthz and /livez. */
  live: readonly HealthCheck[];
  /** Extra checks of /readyz (after the live ones). */
  ready: readonly HealthCheck[];
}

function reply(res: ServerResponse, code: number, text: string): void {
  res.writeHead(code, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function run(c: HealthCheck): Promise<string | undefined> {
  try {
    return await c.check();
  } catch (e) {
    return (e as Error).message;
  }
}

export const HEALTH_PATHS = ['/healthz', '/livez', '/readyz'] as const;

/**
 * The handler for the three endpoints (routes /healthz, /healthz/, /livez, ... all point at it).
 * Rejects MethodNotAllowedError and NotFoundError (an unknown check), which its routes answer in
 * plain text.
 */
export function healthHandler(o: HealthHandlerOptions): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') throw new MethodNotAllowedError(`method ${req.method ?? ''} not allowed`);
    const url = new URL(req.url ?? '/', 'https://node.invalid');
    const [, endpoint, only] = url.pathname.split('/');
    const all = endpoint === 'readyz' ? [...o.live, ...o.ready] : [...o.live];
    const checks = only ? all.filter((c) => c.name === only) : all;
    if (only && checks.length === 0) throw new NotFoundError(`no such health check: ${only}`);
    const results = await Promise.all(checks.map(async (c) => ({ name: c.name, why: await run(c) })));
    const failed = results.filter((r) => r.why !== undefined);
    const verbose = url.searchParams.has('verbose');
    if (failed.length === 0 && !verbose) {
      reply(res, 200, 'ok');
      return;
    }
    const lines = results
      .filter((r) => verbose || r.why !== undefined)
      .map((r) => (r.why === undefined ? `[+]${r.name} ok` : `[-]${r.name} failed: ${r.why}`));
    lines.push(failed.length === 0 ? `${endpoint} check passed` : `${endpoint} check failed`);
    reply(res, failed.length === 0 ? 200 : 500, lines.join('\n') + '\n');
  };
}
