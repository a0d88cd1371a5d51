/**
 * Which UDP conntrack entries a sync leaves stale (upstream's conntrack cleanup in
 * pkg/proxy/conntrack/cleanup.go): UDP has no connection end, so a flow NATed to an endpoint that
 * is gone would keep going there. For every UDP Service port, each endpoint no longer used gets
 * its flows deleted for every Service IP (cluster and external IPs) and for the node port; a
 * Service port that had no endpoints and now has some gets the flows to its IPs deleted (entries
 * made while it had none would never be NATed).
 */
import { isIPv6 } from 'node:net';
import { usableEndpoints, type ServicePortInfo } from './service-ports';

const key = (sp: ServicePortInfo) => `${sp.namespace}/${sp.name}/${sp.portName}/${sp.protocol}`;

function family(ip: string): string[] {
  return isIPv6(ip) ? ['-f', 'ipv6'] : [];
}

/** The `conntrack -D` argument lists that clear the stale UDP flows between two syncs. */
export function staleUdpFlows(prev: readonly ServicePortInfo[], next: readonly ServicePortInfo[]): string[][] {
  const after = new Map(next.filter((sp) => sp.protocol === 'UDP').map((sp) => [key(sp), sp]));
  const out: string[][] = [];
  for (const old of prev) {
    if (old.protocol !== 'UDP') continue;
    const now = after.get(key(old));
    const before = new Set(usableEndpoints(old, false).map((e) => e.ip));
    const still = new Set(now ? usableEndpoints(now, false).map((e) => e.ip) : []);
    const serviceIPs = [...old.clusterIPs, ...old.externalIPs];
    for (const ep of before) {
      if (still.has(ep)) continue;
      for (const ip of serviceIPs) if (isIPv6(ip) === isIPv6(ep)) out.push([...family(ep), '-p', 'udp', '--orig-dst', ip, '--dst-nat', ep]);
      if (old.nodePort > 0) out.push([...family(ep), '-p', 'udp', '--dport', String(old.nodePort), '--dst-nat', ep]);
    }
  }
  const had = new Map(prev.filter((sp) => sp.protocol === 'UDP').map((sp) => [key(sp), usableEndpoints(sp, false).length]));
  for (const sp of after.values()) {
    if (had.get(key(sp)) !== 0 || usableEndpoints(sp, false).length === 0) continue;
    for (const ip of [...sp.clusterIPs, ...sp.externalIPs]) out.push([...family(ip), '-p', 'udp', '--orig-dst', ip]);
  }
  return out;
}
