/** GET /metrics: the agent's metrics in the Prometheus text format (prom-client). */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../../apiserver/api/errors';
import { replyError } from './status-reply';

/** Renders the metrics. */
export interface MetricsSource {
  /** The exposition text and its content type. Rejects only on a bug. */
  text(): Promise<{ body: string; contentType: string }>;
}

export function metricsHandler(m: MetricsSource): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      replyError(res, new ApiError('MethodNotAllowed', `method ${req.method ?? ''} not allowed; use GET`, undefined, 405));
      return;
    }
    const { body, contentType } = await m.text();
    res.writeHead(200, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
}
