/**
 * Where a Service's server is, for the API server's own outbound calls: aggregated APIServices,
 * admission webhooks and CRD conversion webhooks (upstream's ServiceResolver, the endpoint
 * resolver kube-apiserver uses with `--enable-aggregator-routing`; there is no in-process proxy to
 * cluster IPs here, so the endpoint is always chosen, for every caller alike). An ExternalName
 * Service names the host (upstream's cluster-IP resolver does the same); otherwise the Service's
 * EndpointSlices (label `kubernetes.io/service-name`, as upstream's resolver reads them since
 * Endpoints were deprecated) give a ready address and the port the service port maps to, slices
 * of the Service's primary IP family first. Endpoints a user writes for a selectorless Service
 * reach the slices through the mirroring controller. The TLS server name is always
 * `<service>.<namespace>.svc`, as upstream verifies it.
 */
import type { KObject } from '../api/types';
import { arr, rec, recs, str } from './obj-access';

/** The label tying an EndpointSlice to its Service (discovery/v1 `kubernetes.io/service-name`). */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/** Reads Services and their EndpointSlices (the store, or an informer's cache). */
export interface ServiceLookup {
  service(namespace: string, name: string): Promise<KObject | undefined>;
  /** The EndpointSlices of the namespace labelled `kubernetes.io/service-name: <name>`. */
  endpointSlices(namespace: string, name: string): Promise<readonly KObject[]>;
}

/** A Service port to reach. */
export interface ServiceRef {
  namespace: string;
  name: string;
  port: number;
}

export interface ServiceTarget {
  host: string;
  port: number;
  servername: string;
}

/**
 * Why a Service could not be resolved, in the APIService availability controller's reasons and
 * messages (upstream's); `detail` is upstream's ServiceResolver wording for the same cause, which
 * webhook callers quote.
 */
export interface Unresolved {
  reason: 'ServiceNotFound' | 'ServiceAccessError' | 'MissingEndpoints';
  message: string;
  detail: string;
}

export type Target = ServiceTarget | Unresolved;

/** Picks an index below n (injected for tests; upstream picks endpoints at random to spread load). */
export type Pick = (n: number) => number;
const randomPick: Pick = (n) => Math.floor(Math.random() * n);

export async function resolveTarget(ref: ServiceRef, lookup: ServiceLookup, pick: Pick = randomPick): Promise<Target> {
  const { namespace, name, port } = ref;
  const servername = `${name}.${namespace}.svc`;
  const svc = await lookup.service(namespace, name);
  if (!svc) return { reason: 'ServiceNotFound', message: `service/${name} in "${namespace}" is not present`, detail: `service "${name}" not found` };
  const spec = rec(svc.spec) ?? {};
  if (spec.type === 'ExternalName') {
    const host = str(spec.externalName);
    return host ? { host, port, servername } : { reason: 'ServiceAccessError', message: `service/${name} in "${namespace}" has no externalName`, detail: `service "${name}" has no externalName` };
  }
  const svcPort = recs(spec.ports).find((p) => p.port === port);
  if (!svcPort) return { reason: 'ServiceAccessError', message: `service/${name} in "${namespace}" is not listening on port ${port}`, detail: `no service port ${port} found for service "${name}"` };
  const portName = str(svcPort.name) ?? '';
  const missing: Unresolved = {
    reason: 'MissingEndpoints',
    message: `endpoints for service/${name} in "${namespace}" have no addresses with port name "${portName}"`,
    detail: `no endpoints available for service "${name}"`,
  };
  const family = str(Array.isArray(spec.ipFamilies) ? spec.ipFamilies[0] : undefined);
  const slices = [...(await lookup.endpointSlices(namespace, name))].sort((a, b) => Number(b.addressType === family) - Number(a.addressType === family));
  for (const slice of slices) {
    if (slice.addressType === 'FQDN') continue; // upstream's resolver dials addresses, never names from slices
    const slicePort = recs(slice.ports).find((p) => (str(p.name) ?? '') === portName && typeof p.port === 'number');
    // A missing ready condition means ready (discovery/v1: "nil should be interpreted as true").
    const ready = recs(slice.endpoints).filter((e) => rec(e.conditions)?.ready !== false && str(arr(e.addresses)[0]) !== undefined);
    if (!slicePort || ready.length === 0) continue;
    const ep = ready[pick(ready.length) % ready.length];
    return { host: str(arr(ep.addresses)[0])!, port: slicePort.port as number, servername };
  }
  return missing;
}

/** Whether a resolution failed. */
export function unresolved(t: Target): t is Unresolved {
  return 'reason' in t;
}
