/**
 * One proxied HTTP request (pods/proxy, services/proxy, nodes/proxy): the caller's method, path
 * suffix, query and body go to the target, without the caller's credentials (forwardedHeaders);
 * the target's status, headers and body come back. An upgrade request (a WebSocket to a pod) is
 * passed to proxyUpgrade instead, as upstream's UpgradeAwareHandler does for the proxy
 * sub-resources. Bounded: the request body (default 16 MiB: 413 beyond it), the response body
 * (default 256 MiB: cut beyond it), the wait for the target's answer (default 60 s: 503), and
 * silence on either side once it answered (default 5 min). The target is abandoned when the
 * caller goes away or the server shuts down.
 * Differs from upstream: links in proxied HTML are not rewritten, and a bare `.../proxy` is
 * forwarded as `/` rather than redirected to `.../proxy/`.
 */
import { request as httpRequest, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { ApiError } from '../api/errors';
import type { ResourceRequest } from './context';
import { forwardedHeaders } from './proxy-headers';
import { DEFAULT_STREAM_IDLE_MS, proxyUpgrade, type UpgradeTarget } from './upgrade-proxy';

export interface ForwardLimits {
  maxRequestBytes: number;
  maxResponseBytes: number;
  /** How long the target gets to answer (headers). */
  answerTimeoutMs: number;
  /** Silence allowed on either side after that. */
  idleTimeoutMs: number;
}

export const DEFAULT_FORWARD_LIMITS: ForwardLimits = { maxRequestBytes: 16 << 20, maxResponseBytes: 256 << 20, answerTimeoutMs: 60_000, idleTimeoutMs: 300_000 };

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'proxy-authenticate']);

/** Forwards r to target; resolves when the answer has been passed on (or the caller left). */
export async function forwardHttp(r: ResourceRequest, target: UpgradeTarget, limits: ForwardLimits = DEFAULT_FORWARD_LIMITS): Promise<void> {
  if (r.upgrade) return proxyUpgrade(r, target, { idleTimeoutMs: Math.max(limits.idleTimeoutMs, DEFAULT_STREAM_IDLE_MS) });
  const declared = Number(r.req.headers['content-length'] ?? 0);
  if (declared > limits.maxRequestBytes) throw tooLarge(limits.maxRequestBytes);
  const onAbort: { fn?: () => void } = {};
  try {
    await new Promise<void>((resolve, reject) => send(r, target, limits, onAbort, resolve, reject));
  } finally {
    if (onAbort.fn) r.signal.removeEventListener('abort', onAbort.fn);
  }
}

function send(r: ResourceRequest, target: UpgradeTarget, limits: ForwardLimits, onAbort: { fn?: () => void }, resolve: () => void, reject: (e: unknown) => void): void {
  const tls = target.scheme === 'https';
  const options = {
    host: target.host,
    port: target.port,
    path: target.path,
    method: r.req.method ?? 'GET',
    headers: forwardedHeaders(r.req.headers),
    timeout: limits.answerTimeoutMs,
    ...(tls && target.cert ? { cert: target.cert.certPem, key: target.cert.keyPem } : {}),
    ...(tls ? (target.caPem ? { ca: target.caPem, rejectUnauthorized: true } : { rejectUnauthorized: false }) : {}),
  };
  let failure: ApiError | undefined;
  const up = tls ? httpsRequest(options) : httpRequest(options);
  let answered = false;
  up.on('timeout', () => up.destroy(new Error(answered ? `silent for ${limits.idleTimeoutMs} ms` : `no answer within ${limits.answerTimeoutMs} ms`)));
  up.on('error', (err) => {
    if (r.res.headersSent) {
      r.res.destroy();
      resolve();
    } else reject(failure ?? new ApiError('ServiceUnavailable', `error trying to reach ${target.describe} at ${target.host}:${target.port}: ${err.message}`));
  });
  up.on('response', (res) => {
    answered = true;
    up.setTimeout(limits.idleTimeoutMs);
    const headers: OutgoingHttpHeaders = {};
    for (const [h, v] of Object.entries(res.headers)) if (v !== undefined && !HOP_BY_HOP.has(h)) headers[h] = v;
    r.res.writeHead(res.statusCode ?? 502, res.statusMessage, headers);
    let sent = 0;
    res.on('data', (chunk: Buffer) => {
      sent += chunk.length;
      if (sent > limits.maxResponseBytes) {
        r.log.warn({ target: target.describe, limit: limits.maxResponseBytes }, 'proxied response cut at its size limit');
        res.destroy();
        r.res.destroy();
        resolve();
      }
    });
    res.pipe(r.res);
    res.on('end', () => resolve());
    res.on('error', () => {
      r.res.destroy();
      resolve();
    });
  });
  // The caller went away (or the server is shutting down) before the answer was complete.
  r.res.on('close', () => {
    if (!r.res.writableFinished) up.destroy();
  });
  onAbort.fn = () => up.destroy();
  r.signal.addEventListener('abort', onAbort.fn, { once: true });
  let received = 0;
  r.req.on('data', (chunk: Buffer) => {
    received += chunk.length;
    if (received > limits.maxRequestBytes) {
      failure = tooLarge(limits.maxRequestBytes);
      r.req.unpipe(up);
      up.destroy(failure);
    }
  });
  r.req.pipe(up);
}

function tooLarge(max: number): ApiError {
  return new ApiError('RequestEntityTooLarge', `the request body is larger than the proxy's limit of ${max} bytes`);
}
