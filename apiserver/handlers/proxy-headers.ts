/**
 * The request headers every proxy of the API server forwards (nodes/proxy, pods/proxy,
 * services/proxy, the connect sub-resources): never the caller's credentials (Authorization,
 * cookies, impersonation and request-header authentication headers: the target sees the API
 * server's identity or none, as upstream's proxy handlers strip them) nor hop-by-hop headers.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';

/** Request headers that must not reach the target: the caller's credentials and hop-by-hop headers. */
const DROPPED = new Set(['authorization', 'cookie', 'proxy-authorization', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'transfer-encoding', 'host']);

/** The headers forwarded to the target. */
export function forwardedHeaders(h: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined || DROPPED.has(k) || k.startsWith('impersonate-') || k.startsWith('x-remote-')) continue;
    out[k] = v;
  }
  return out;
}

