/**
 * The contract of an HTTP/1.1 upgrade (exec, attach: WebSocket or SPDY/3.1) tunnelled over one
 * stream of a long-lived HTTP/2 connection from the API server to a node agent, so a stream costs
 * no TCP or TLS handshake on that leg.
 *
 * The request is an RFC 8441 extended CONNECT: `:protocol` carries the client's Upgrade token
 * (`websocket`, `SPDY/3.1`), `:path` the agent path, and the client's upgrade headers travel
 * unchanged, Sec-WebSocket-Key included, with the client's HTTP method in UPGRADE_METHOD_HEADER
 * (the agent authorizes by it: GET is get, POST is create). The agent answers as it would over
 * HTTP/1.1 with the hop-by-hop headers dropped and 101 carried as 200 (RFC 8441 section 5); the
 * API server writes the client's 101 from those headers and joins the two byte for byte. So the
 * bytes inside are the client's own protocol end to end, as over a connection of its own.
 * Differs from RFC 8441's WebSocket bootstrapping, where the stream carries WebSocket frames with
 * no key or accept exchange: here the agent answers the client's handshake itself.
 * Not upstream's: kube-apiserver dials the kubelet for every stream.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';

/** The client's method of the upgrade request (the CONNECT's own method is fixed). */
export const UPGRADE_METHOD_HEADER = 'x-svc-upgrade-method';

/** Headers HTTP/2 forbids (RFC 9113 section 8.2.2) or that HTTP/2 carries as pseudo-headers. */
const CONNECTION_SPECIFIC = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'host', 'te', 'http2-settings']);

/** `h` without the headers HTTP/2 cannot carry. */
export function h2Headers(h: OutgoingHttpHeaders | IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(h)) {
    const name = k.toLowerCase();
    if (v === undefined || name.startsWith(':') || CONNECTION_SPECIFIC.has(name)) continue;
    out[name] = v;
  }
  return out;
}
