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
 * `{name}:{port}` and `{scheme}:{name}:{port}` with another port than the agent's go to that port
 * of the node's address without the kubelet-client identity (loopback and link-local addresses
 * refused), as upstream. Upgrades are proxied byte for byte (http-forward.ts).
 */
import { errors } from '../api/errors';
import type { KeyPairPem } from '../pki/certs';
import type { ResourceRequest } from './context';
import { DEFAULT_FORWARD_LIMITS, forwardHttp } from './http-forward';
import { agentEndpoint } from './pod-log';
import { isProxyableIP, proxyPath, splitSchemeNamePort } from './proxy-target';

/** How the API server reaches node agents. */
export interface KubeletClientConfig {
  /** The API server's client certificate and key for agents. */
  client: KeyPairPem;
  /** CA bundle for the agents' serving certificates; undefined: not verified. */
  caPem?: string;
  /** Upstream request timeout (ms, default 5 minutes; a log stream through the proxy may be long). */
  timeoutMs?: number;
}

export function nodeProxyHandler(k: KubeletClientConfig): (r: ResourceRequest) => Promise<void> {
  return async (r) => {
    const id = splitSchemeNamePort(r.info.name);
    if (!id) throw errors.badRequest(`invalid node request "${r.info.name}"`);
    const node = await r.store.get(r.type, '', id.name);
    const { host, port } = agentEndpoint(node);
    const path = proxyPath(r.req.url ?? '/');
    const limits = { ...DEFAULT_FORWARD_LIMITS, answerTimeoutMs: k.timeoutMs ?? 300_000 };
    if (id.port === '' || id.port === String(port)) {
      // The agent itself, with the kubelet-client identity (the scheme asked for is ignored, as upstream).
      return forwardHttp(r, { scheme: 'https', host, port, path, cert: k.client, ...(k.caPem ? { caPem: k.caPem } : {}), describe: `the node agent of ${id.name}` }, limits);
    }
    // Another port of the node: plain proxying without the kubelet-client identity, to proxyable addresses only (upstream's IsProxyableHostname).
    const other = Number(id.port);
    if (!/^\d+$/.test(id.port) || other < 1 || other > 65535) throw errors.badRequest(`invalid port "${id.port}" for node ${id.name}`);
    if (!isProxyableIP(host)) throw errors.badRequest(`address not allowed: ${host}`);
    return forwardHttp(r, { scheme: id.scheme, host, port: other, path, describe: `port ${other} of node ${id.name}` }, limits);
  };
}
