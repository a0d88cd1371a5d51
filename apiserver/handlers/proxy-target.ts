/**
 * Where the proxy sub-resources go (pods/proxy, services/proxy, nodes/proxy with a port): the
 * `{name}`, `{name}:{port}` and `{scheme}:{name}:{port}` ids, the path after `.../proxy`, and the
 * address of a pod or of a ready endpoint of a service, as upstream's ResourceLocation of each
 * (messages included). Pure functions of the objects.
 */
import { isIP } from 'node:net';
import { ApiError, errors } from '../api/errors';
import type { KObject } from '../api/types';

export interface ProxyId {
  scheme: 'http' | 'https';
  name: string;
  /** As given (a number or a port name); '' when none. */
  port: string;
}

/** Upstream's SplitSchemeNamePort: name, name:port or scheme:name:port, scheme http or https (default http). */
export function splitSchemeNamePort(id: string): ProxyId | undefined {
  const parts = id.split(':');
  if (parts.length > 3) return undefined;
  const [scheme, name, port] = parts.length === 3 ? parts : ['', parts[0], parts[1] ?? ''];
  if (!name || (scheme !== '' && scheme !== 'http' && scheme !== 'https')) return undefined;
  return { scheme: scheme === 'https' ? 'https' : 'http', name, port };
}

/**
 * The path (still percent-encoded) and query forwarded: what follows `{resource}/{name}/proxy` in
 * the raw request URL, '/' when nothing does.
 */
export function proxyPath(rawUrl: string): string {
  const q = rawUrl.indexOf('?');
  const rawPath = q < 0 ? rawUrl : rawUrl.slice(0, q);
  const m = /^(?:\/api\/[^/]+|\/apis\/[^/]+\/[^/]+)(?:\/namespaces\/[^/]+)?\/[^/]+\/[^/]+\/proxy(\/.*)?$/.exec(rawPath);
  if (!m) throw errors.badRequest(`not a proxy path: ${rawPath}`);
  return (m[1] || '/') + (q < 0 ? '' : rawUrl.slice(q));
}

/**
 * Whether an address may be proxied to, as upstream's IsProxyableIP / the pod proxy's
 * IsGlobalUnicast check: not loopback, link-local, unspecified or multicast (the API server's own
 * host and cloud metadata services must not be reachable through it).
 */
export function isProxyableIP(ip: string): boolean {
  const v = isIP(ip);
  if (v === 4) {
    const [a, b] = ip.split('.').map(Number);
    return !(a === 127 || a === 0 || (a === 169 && b === 254) || a >= 224);
  }
  if (v === 6) {
    const l = ip.toLowerCase();
    if (l.startsWith('::ffff:')) return isProxyableIP(l.slice(7));
    return !(l === '::' || l === '::1' || /^fe[89ab]/.test(l) || l.startsWith('ff'));
  }
  return false;
}

/** A pod's address for pods/proxy: its IP and the port asked for, else its first declared container port (upstream's choice). */
export function podAddress(pod: KObject, port: string): { host: string; port: number } {
  const spec = (pod.spec ?? {}) as { containers?: Array<{ ports?: Array<{ containerPort?: number }> }> };
  const status = (pod.status ?? {}) as { podIP?: string; podIPs?: Array<{ ip: string }> };
  const ip = status.podIP ?? status.podIPs?.[0]?.ip ?? '';
  if (!isProxyableIP(ip)) throw errors.badRequest('address not allowed');
  const chosen = port || String(spec.containers?.find((c) => (c.ports ?? []).length > 0)?.ports?.[0]?.containerPort ?? 80);
  return { host: ip, port: portNumber(chosen, `pod ${pod.metadata.name}`) };
}

function portNumber(text: string, of: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1 || n > 65535) throw errors.badRequest(`invalid port ${JSON.stringify(text)} for ${of}: must be a number between 1 and 65535`);
  return n;
}

interface Subset {
  addresses?: Array<{ ip: string }>;
  ports?: Array<{ name?: string; port: number }>;
}

/**
 * A ready endpoint of a service for services/proxy, as upstream's service ResourceLocation: a port
 * number names the service port with that number (503 "no service port N found for service X"
 * when none does); the port's name (or '' for an unnamed one) is looked up among the Endpoints
 * subsets' ports, and one of that subset's ready addresses is chosen (`pick`: random upstream).
 * No Endpoints subsets: 503 "no endpoints available for service X"; none ready on that port: the
 * same naming the id asked for (name:port), as upstream.
 */
export function serviceEndpoint(service: KObject, endpoints: KObject | undefined, port: string, id: string, pick: (n: number) => number = (n) => Math.floor(Math.random() * n)): { host: string; port: number } {
  const name = service.metadata.name;
  let portName = port;
  if (/^\d+$/.test(port)) {
    const ports = ((service.spec ?? {}) as { ports?: Array<{ name?: string; port: number }> }).ports ?? [];
    const found = ports.find((p) => p.port === Number(port));
    if (!found) throw new ApiError('ServiceUnavailable', `no service port ${port} found for service "${name}"`);
    portName = found.name ?? '';
  }
  const all = (endpoints?.subsets ?? []) as Subset[];
  if (all.length === 0) throw new ApiError('ServiceUnavailable', `no endpoints available for service "${name}"`);
  const subsets = all.filter((s) => (s.addresses ?? []).some((a) => isProxyableIP(a.ip)));
  const candidates: Array<{ host: string; port: number }> = [];
  for (const s of subsets) {
    const p = (s.ports ?? []).find((sp) => (sp.name ?? '') === portName);
    if (!p) continue;
    for (const a of s.addresses ?? []) if (isProxyableIP(a.ip)) candidates.push({ host: a.ip, port: p.port });
  }
  if (candidates.length === 0) throw new ApiError('ServiceUnavailable', `no endpoints available for service "${id}"`);
  return candidates[pick(candidates.length)];
}
