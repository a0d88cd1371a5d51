/**
 * The nodes/{name}/proxy sub-resource (upstream's node proxy REST): any method on
 * /api/v1/nodes/{name}/proxy/{path...}?{query} is forwarded to the node agent at
 * https://<InternalIP>:<status.daemonEndpoints.kubeletEndpoint.Port>/{path...}?{query}, presenting
 * the API server's kubelet-client certificate (--kubelet-client-certificate/--kubelet-client-key,
 * default the generated apiserver-kubelet-client pair). The caller was already authorized for
 * nodes/proxy with the verb of the method (get for GET, create for POST, ...) by the request path;
 * the agent then authorizes the API server's identity itself. The caller's own credentials
 * (Authorization, impersonation headers, cookies) are never forwarded. The agent's serving
 * certificate is verified against --kubelet-certificate-authority when it is set; otherwise it is
 * not verified, as upstream by default (agents serve self-signed certificates: our CSR signer has
 * no kubelet-serving signer).
 * Differences from upstream: "name:port" node names (a port other than the daemon endpoint's)
 * are not supported, and upgrades (exec/attach streams) are not proxied.
 */
import { request as httpsRequest } from 'node:https';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { ApiError, errors } from '../api/errors';
import type { KeyPairPem } from '../pki/certs';
import type { ResourceRequest } from './context';
import { agentEndpoint } from './pod-log';

/** How the API server reaches node agents. */
export interface KubeletClientConfig {
  /** The API server's client certificate and key for agents. */
  client: KeyPairPem;
  /** CA bundle for the agents' serving certificates; undefined: not verified. */
  caPem?: string;
  /** Upstream request timeout (ms, default 5 minutes; a log stream through the proxy may be long). */
  timeoutMs?: number;
}

/** Request headers that must not reach the agent: the caller's credentials and hop-by-hop headers. */
const DROPPED = new Set(['authorization', 'cookie', 'proxy-authorization', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'transfer-encoding', 'host']);

/** The headers forwarded to the agent. */
export function forwardedHeaders(h: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined || DROPPED.has(k) || k.startsWith('impersonate-') || k.startsWith('x-remote-')) continue;
    out[k] = v;
  }
  return out;
}

/** The agent path for a request path: what follows /nodes/{name}/proxy, '/' when nothing does. */
export function agentPath(requestPath: string, nodeName: string): string {
  const marker = `/nodes/${nodeName}/proxy`;
  const at = requestPath.indexOf(marker);
  if (at < 0) throw errors.badRequest(`not a node proxy path: ${requestPath}`);
  const rest = requestPath.slice(at + marker.length);
  if (rest === '') return '/';
  if (!rest.startsWith('/')) throw errors.badRequest(`not a node proxy path: ${requestPath}`);
  return rest;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

export function nodeProxyHandler(k: KubeletClientConfig): (r: ResourceRequest) => Promise<void> {
  return async (r) => {
    if (r.info.name.includes(':')) throw errors.badRequest(`node names with a port (${r.info.name}) are not supported by the node proxy`);
    const node = await r.store.get(r.type, '', r.info.name);
    const { host, port } = agentEndpoint(node);
    // The raw (still percent-encoded) path, so the agent decodes it exactly once.
    const rawUrl = r.req.url ?? '/';
    const q = rawUrl.indexOf('?');
    const rawPath = q < 0 ? rawUrl : rawUrl.slice(0, q);
    const path = agentPath(rawPath, r.info.name) + (q < 0 ? '' : rawUrl.slice(q));
    await new Promise<void>((resolve, reject) => {
      const up = httpsRequest(
        {
          host,
          port,
          path,
          method: r.req.method ?? 'GET',
          headers: forwardedHeaders(r.req.headers),
          cert: k.client.certPem,
          key: k.client.keyPem,
          ...(k.caPem ? { ca: k.caPem, rejectUnauthorized: true } : { rejectUnauthorized: false }),
          timeout: k.timeoutMs ?? 300_000,
        },
        (res) => {
          const headers: OutgoingHttpHeaders = {};
          for (const [h, v] of Object.entries(res.headers)) if (v !== undefined && !HOP_BY_HOP.has(h)) headers[h] = v;
          r.res.writeHead(res.statusCode ?? 502, headers);
          res.pipe(r.res);
          res.on('end', () => resolve());
          res.on('error', reject);
        },
      );
      up.on('timeout', () => up.destroy(new Error('timed out')));
      up.on('error', (err) => {
        if (r.res.headersSent) {
          r.res.destroy();
          resolve();
        } else reject(new ApiError('ServiceUnavailable', `cannot reach the node agent of ${r.info.name} at ${host}:${port}: ${err.message}`));
      });
      // The caller went away before the answer was complete (IncomingMessage's own 'close' fires
      // as soon as its body is read, so the response is the one to watch).
      r.res.on('close', () => {
        if (!r.res.writableFinished) up.destroy();
      });
      r.req.pipe(up);
    });
  };
}
