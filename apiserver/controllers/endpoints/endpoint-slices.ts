import { isDeepStrictEqual } from 'node:util';
import type { KObject } from '../../api/types';
import { get, rec, recs, str, strs, type JsonMap } from '../../registry/obj-access';
import { findPort, podInEndpoints, podReady } from './endpoint-subsets';

/** Upstream's default --max-endpoints-per-slice. */
export const MAX_ENDPOINTS_PER_SLICE = 100;

/** The endpoints of one address type and one set of ports: the unit slices are packed from. */
export interface EndpointGroup {
  addressType: string;
  ports: JsonMap[];
  endpoints: JsonMap[];
}

/** What a slice carries besides its metadata. */
export type SliceContent = EndpointGroup;

/** The address types a Service's slices carry: one per spec.ipFamilies entry (IPv4 when unset, as upstream). */
export function addressTypes(svc: KObject): string[] {
  const families = strs(get(svc, 'spec', 'ipFamilies')).filter((f) => f === 'IPv4' || f === 'IPv6');
  if (families.length) return families;
  return (str(get(svc, 'spec', 'clusterIP')) ?? '').includes(':') ? ['IPv6'] : ['IPv4'];
}

/** The pod's addresses of one family (status.podIPs, else status.podIP). */
function podAddresses(pod: KObject, addressType: string): string[] {
  const ips = recs(get(pod, 'status', 'podIPs')).map((p) => str(p.ip)).filter((ip): ip is string => !!ip);
  const all = ips.length ? ips : [str(get(pod, 'status', 'podIP'))].filter((ip): ip is string => !!ip);
  return all.filter((ip) => (addressType === 'IPv6') === ip.includes(':')).slice(0, 1);
}

/** The service's ports resolved in this pod (targetPort names per pod, upstream's getEndpointPorts), by name. */
function podPorts(svc: KObject, pod: KObject): JsonMap[] {
  const ports: JsonMap[] = [];
  for (const sp of recs(get(svc, 'spec', 'ports'))) {
    const port = findPort(pod, sp);
    if (port === undefined) continue;
    const ep: JsonMap = { name: str(sp.name) ?? '', port, protocol: sp.protocol ?? 'TCP' };
    if (str(sp.appProtocol)) ep.appProtocol = sp.appProtocol;
    ports.push(ep);
  }
  return ports.sort((a, b) => String(a.name).localeCompare(String(b.name)) || Number(a.port) - Number(b.port));
}

/**
 * Upstream's podToEndpoint: serving is the pod's readiness, terminating its deletion, ready is
 * serving and not terminating (always true with publishNotReadyAddresses); zone from the node's
 * topology.kubernetes.io/zone label; hostname when the pod's subdomain is the service; hints are
 * not set (topology-aware routing is off).
 */
function podEndpoint(svc: KObject, pod: KObject, addresses: string[], zoneOf: (node: string) => string | undefined): JsonMap {
  const serving = podReady(pod);
  const terminating = !!pod.metadata.deletionTimestamp;
  const ready = rec(svc.spec)?.publishNotReadyAddresses === true || (serving && !terminating);
  const ep: JsonMap = { addresses, conditions: { ready, serving, terminating } };
  const hostname = str(get(pod, 'spec', 'hostname'));
  if (hostname && str(get(pod, 'spec', 'subdomain')) === svc.metadata.name) ep.hostname = hostname;
  ep.targetRef = { kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid };
  const node = str(get(pod, 'spec', 'nodeName'));
  if (node) {
    ep.nodeName = node;
    const zone = zoneOf(node);
    if (zone) ep.zone = zone;
  }
  return ep;
}

/**
 * The endpoints a Service's slices should hold, grouped by address type and port set. Terminating
 * pods are included (upstream's endpointslice controller passes includeTerminating); a pod none of
 * whose ports resolves is left out, as the Endpoints view does.
 */
export function desiredGroups(svc: KObject, pods: readonly KObject[], zoneOf: (node: string) => string | undefined): EndpointGroup[] {
  const groups = new Map<string, EndpointGroup>();
  const hasPorts = recs(get(svc, 'spec', 'ports')).length > 0;
  for (const addressType of addressTypes(svc)) {
    for (const pod of pods) {
      if (!podInEndpoints(pod, true)) continue;
      const addresses = podAddresses(pod, addressType);
      if (!addresses.length) continue;
      const ports = podPorts(svc, pod);
      if (hasPorts && ports.length === 0) continue;
      const key = `${addressType}/${JSON.stringify(ports)}`;
      const g = groups.get(key) ?? { addressType, ports, endpoints: [] };
      groups.set(key, g);
      g.endpoints.push(podEndpoint(svc, pod, addresses, zoneOf));
    }
  }
  for (const g of groups.values()) g.endpoints.sort((a, b) => strs(a.addresses)[0].localeCompare(strs(b.addresses)[0]));
  return [...groups.values()];
}

/** The writes that bring a Service's slices to the desired groups. */
export interface SlicePlan {
  create: SliceContent[];
  update: Array<{ name: string; content: SliceContent }>;
  delete: string[];
}

const endpointKey = (e: unknown): string => str(get(e, 'targetRef', 'name')) ?? strs(rec(e)?.addresses)[0] ?? '';

/**
 * Upstream's reconciler, simplified: existing slices of a group keep the endpoints still desired
 * (updated in place), new endpoints fill the room left in existing slices before new slices of at
 * most max endpoints are made, emptied slices and slices of no group are deleted. A Service with
 * no endpoints keeps one placeholder slice (no endpoints, no ports) of placeholderType as upstream
 * (none when it is undefined, as upstream's mirroring).
 */
export function planSlices(groups: readonly EndpointGroup[], existing: readonly KObject[], placeholderType: string | undefined, max = MAX_ENDPOINTS_PER_SLICE): SlicePlan {
  const plan: SlicePlan = { create: [], update: [], delete: [] };
  const used = new Set<string>();
  for (const g of groups) {
    const desired = new Map(g.endpoints.map((e) => [endpointKey(e), e]));
    const mine = existing.filter((s) => !used.has(s.metadata.name!) && s.addressType === g.addressType && isDeepStrictEqual(recs(s.ports), g.ports));
    const slices = mine.map((s) => {
      used.add(s.metadata.name!);
      const endpoints: JsonMap[] = [];
      for (const e of recs(s.endpoints)) {
        const want = desired.get(endpointKey(e));
        if (!want) continue;
        desired.delete(endpointKey(e));
        endpoints.push(want);
      }
      return { name: s.metadata.name!, endpoints, changed: !isDeepStrictEqual(endpoints, recs(s.endpoints)) };
    });
    const rest = [...desired.values()];
    // Fill slices that change anyway first, so an added endpoint rewrites as few slices as it can.
    for (const s of [...slices].sort((a, b) => Number(b.changed) - Number(a.changed))) {
      while (rest.length && s.endpoints.length < max) {
        s.endpoints.push(rest.shift()!);
        s.changed = true;
      }
    }
    for (let i = 0; i < rest.length; i += max) plan.create.push({ addressType: g.addressType, ports: g.ports, endpoints: rest.slice(i, i + max) });
    for (const s of slices) {
      if (s.endpoints.length === 0) plan.delete.push(s.name);
      else if (s.changed) plan.update.push({ name: s.name, content: { addressType: g.addressType, ports: g.ports, endpoints: s.endpoints } });
    }
  }
  for (const s of existing) if (!used.has(s.metadata.name!)) plan.delete.push(s.metadata.name!);
  const kept = existing.length - plan.delete.length;
  if (placeholderType && kept === 0 && plan.create.length === 0) {
    const placeholder = existing.find((s) => s.addressType === placeholderType && recs(s.endpoints).length === 0 && recs(s.ports).length === 0);
    if (placeholder) plan.delete = plan.delete.filter((n) => n !== placeholder.metadata.name);
    else plan.create.push({ addressType: placeholderType, ports: [], endpoints: [] });
  }
  return plan;
}
