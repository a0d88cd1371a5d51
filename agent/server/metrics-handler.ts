/** GET /metrics: the agent's metrics in the Prometheus text format (prom-client). */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MethodNotAllowedError } from '../errors';

/** Renders the metrics. */
export interface MetricsSource {
  /** The exposition text and its content type. Rejects only on a bug. */
  text(): Promise<{ body: string; contentType: string }>;
}

export function metricsHandler(m: MetricsSource): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') throw new MethodNotAllowedError(`method ${req.method ?? ''} not allowed; use GET`);
    const { body, contentType } = await m.text();
    res.writeHead(200, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
}
