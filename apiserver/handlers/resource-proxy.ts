/**
 * pods/{id}/proxy/{path} and services/{id}/proxy/{path} (upstream's ProxyREST of pods and
 * services), any method: the id is `name`, `name:port` or `scheme:name:port`; a pod's request goes
 * to its IP and the port asked for (else its first declared container port); a service's to a
 * ready address of its Endpoints for the service port asked for (proxy-target.ts, with upstream's
 * 503s). The caller was authorized for pods/proxy or services/proxy with the verb of the method by
 * the router; the target sees none of the caller's credentials. Plain HTTP or, with the https
 * scheme, TLS without verifying the target (upstream's proxy transport does not verify either).
 * Differs from upstream: services are resolved through Endpoints only (no EndpointSlice type is
 * served here yet).
 */
import { errors, getOrNull } from '../api/errors';
import type { ResourceType } from '../registry/resource-type';
import type { ResourceRequest } from './context';
import { DEFAULT_FORWARD_LIMITS, forwardHttp, type ForwardLimits } from './http-forward';
import { podAddress, proxyPath, serviceEndpoint, splitSchemeNamePort } from './proxy-target';

export function podProxyHandler(limits: ForwardLimits = DEFAULT_FORWARD_LIMITS): (r: ResourceRequest) => Promise<void> {
  return async (r) => {
    const id = splitSchemeNamePort(r.info.name);
    if (!id) throw errors.badRequest(`invalid pod request "${r.info.name}"`);
    const pod = await r.store.get(r.type, r.info.namespace, id.name);
    const { host, port } = podAddress(pod, id.port);
    await forwardHttp(r, { scheme: id.scheme, host, port, path: proxyPath(r.req.url ?? '/'), describe: `pod ${id.name}` }, limits);
  };
}

export function serviceProxyHandler(endpoints: ResourceType, limits: ForwardLimits = DEFAULT_FORWARD_LIMITS): (r: ResourceRequest) => Promise<void> {
  return async (r) => {
    const id = splitSchemeNamePort(r.info.name);
    if (!id) throw errors.badRequest(`invalid service request "${r.info.name}"`);
    const service = await r.store.get(r.type, r.info.namespace, id.name);
    const eps = await getOrNull(r.store.get(endpoints, r.info.namespace, id.name));
    const { host, port } = serviceEndpoint(service, eps ?? undefined, id.port, r.info.name);
    await forwardHttp(r, { scheme: id.scheme, host, port, path: proxyPath(r.req.url ?? '/'), describe: `service ${id.name}` }, limits);
  };
}
