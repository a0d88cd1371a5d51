import { isIPv4, isIPv6 } from 'node:net';
import type { KObject } from '../../api/types';
import { recs, str, type JsonMap } from '../../registry/obj-access';
import type { EndpointGroup } from './endpoint-slices';

/** Upstream's mirroring of one Endpoints address: ready from the list it is in, no serving/terminating, no zone. */
function mirroredEndpoint(a: JsonMap, ready: boolean): JsonMap {
  const ep: JsonMap = { addresses: [a.ip], conditions: { ready } };
  if (str(a.hostname)) ep.hostname = a.hostname;
  if (a.targetRef) ep.targetRef = a.targetRef;
  if (str(a.nodeName)) ep.nodeName = a.nodeName;
  return ep;
}

/**
 * The slices' content mirrored from a core/v1 Endpoints (upstream's endpointslicemirroring
 * controller): each subset's addresses by IP family under the subset's ports, ready for addresses
 * and not ready for notReadyAddresses; addresses that are not IPs are skipped, as upstream; subsets
 * with the same ports share a group.
 */
export function mirroredGroups(endpoints: KObject): EndpointGroup[] {
  const groups = new Map<string, EndpointGroup>();
  for (const ss of recs(endpoints.subsets)) {
    const ports = recs(ss.ports)
      .map((p): JsonMap => ({ name: str(p.name) ?? '', port: p.port, protocol: p.protocol ?? 'TCP', ...(str(p.appProtocol) ? { appProtocol: p.appProtocol } : {}) }))
      .sort((a, b) => String(a.name).localeCompare(String(b.name)) || Number(a.port) - Number(b.port));
    const add = (a: JsonMap, ready: boolean) => {
      const ip = str(a.ip) ?? '';
      const addressType = isIPv4(ip) ? 'IPv4' : isIPv6(ip) ? 'IPv6' : undefined;
      if (!addressType) return;
      const key = `${addressType}/${JSON.stringify(ports)}`;
      const g = groups.get(key) ?? { addressType, ports, endpoints: [] };
      groups.set(key, g);
      g.endpoints.push(mirroredEndpoint(a, ready));
    };
    for (const a of recs(ss.addresses)) add(a, true);
    for (const a of recs(ss.notReadyAddresses)) add(a, false);
  }
  for (const g of groups.values()) g.endpoints.sort((a, b) => String((a.addresses as string[])[0]).localeCompare(String((b.addresses as string[])[0])));
  return [...groups.values()];
}
