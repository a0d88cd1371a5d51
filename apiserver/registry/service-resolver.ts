/**
 * Where a remote APIService's server is (upstream's service resolver with aggregator routing on):
 * an ExternalName Service names the host; otherwise the Service's Endpoints give a ready address
 * and the port the APIService's service port maps to. The TLS server name is always
 * `<service>.<namespace>.svc`, as upstream verifies it.
 */
import type { KObject } from '../api/types';
import { rec, str } from './obj-access';
type RemoteApi = { service: { namespace: string; name: string; port: number } };

/** Reads Services and Endpoints (the store, or an informer's cache). */
export interface ServiceLookup {
  service(namespace: string, name: string): Promise<KObject | undefined>;
  endpoints(namespace: string, name: string): Promise<KObject | undefined>;
}

export type Target = { host: string; port: number; servername: string } | { reason: 'ServiceNotFound' | 'ServiceAccessError' | 'MissingEndpoints'; message: string };

export async function resolveTarget(api: RemoteApi, lookup: ServiceLookup): Promise<Target> {
  const { namespace, name, port } = api.service;
  const servername = `${name}.${namespace}.svc`;
  const svc = await lookup.service(namespace, name);
  if (!svc) return { reason: 'ServiceNotFound', message: `service/${name} in "${namespace}" is not present` };
  const spec = rec(svc.spec) ?? {};
  if (spec.type === 'ExternalName') {
    const host = str(spec.externalName);
    return host ? { host, port, servername } : { reason: 'ServiceAccessError', message: `service/${name} in "${namespace}" has no externalName` };
  }
  const svcPort = (Array.isArray(spec.ports) ? spec.ports : []).map((p) => rec(p) ?? {}).find((p) => p.port === port);
  if (!svcPort) return { reason: 'ServiceAccessError', message: `service/${name} in "${namespace}" is not listening on port ${port}` };
  const portName = str(svcPort.name) ?? '';
  const eps = await lookup.endpoints(namespace, name);
  for (const subset of Array.isArray(eps?.subsets) ? eps.subsets : []) {
    const ss = rec(subset) ?? {};
    const addr = (Array.isArray(ss.addresses) ? ss.addresses : []).map((a) => str(rec(a)?.ip)).find(Boolean);
    const epPort = (Array.isArray(ss.ports) ? ss.ports : []).map((p) => rec(p) ?? {}).find((p) => (str(p.name) ?? '') === portName);
    if (addr && typeof epPort?.port === 'number') return { host: addr, port: epPort.port, servername };
  }
  return { reason: 'MissingEndpoints', message: `endpoints for service/${name} in "${namespace}" have no addresses with port name "${portName}"` };
}
