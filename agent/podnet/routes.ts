/**
 * Host-gateway routes to the other nodes' pods (flannel's host-gw backend, kubenet with the
 * cloud route controller): for every other Node with a podCIDR and an InternalIP of the same
 * family, `podCIDR via InternalIP`. Pure: the reconciler (route-reconciler.ts) applies them.
 */
import { isIP } from 'node:net';
import type { KObject } from '../../apiserver/api/types';

export interface HostRoute {
  /** The other node's podCIDR. */
  dst: string;
  /** Its InternalIP of the same family. */
  via: string;
}

interface NodeShape {
  spec?: { podCIDR?: unknown; podCIDRs?: unknown };
  status?: { addresses?: { type?: unknown; address?: unknown }[] };
}

/** A Node's podCIDRs: spec.podCIDRs, else spec.podCIDR (older writers set only that). */
export function nodePodCIDRs(node: KObject): string[] {
  const spec = (node as NodeShape).spec;
  const many = Array.isArray(spec?.podCIDRs) ? spec.podCIDRs.filter((c): c is string => typeof c === 'string' && c !== '') : [];
  if (many.length > 0) return many;
  return typeof spec?.podCIDR === 'string' && spec.podCIDR !== '' ? [spec.podCIDR] : [];
}

/** A Node's InternalIP addresses, in status order. */
export function nodeInternalIPs(node: KObject): string[] {
  const addresses = (node as NodeShape).status?.addresses;
  if (!Array.isArray(addresses)) return [];
  return addresses.filter((a) => a.type === 'InternalIP' && typeof a.address === 'string' && isIP(a.address) !== 0).map((a) => a.address as string);
}

const familyOfCidr = (cidr: string): number => isIP(cidr.split('/')[0] ?? '');

/**
 * The routes this node needs toward `node`: none for itself, none for a node without a podCIDR
 * or an InternalIP of its family, and none through one of this node's own addresses (a route via
 * ourselves would loop; nodes sharing a host share its routes).
 */
export function routesToNode(node: KObject, self: { name: string; ips: readonly string[] }): HostRoute[] {
  if (node.metadata.name === self.name || node.metadata.deletionTimestamp) return [];
  const ips = nodeInternalIPs(node);
  const out: HostRoute[] = [];
  for (const dst of nodePodCIDRs(node)) {
    const family = familyOfCidr(dst);
    if (family === 0) continue;
    const via = ips.find((ip) => isIP(ip) === family);
    if (via === undefined || self.ips.includes(via)) continue;
    out.push({ dst, via });
  }
  return out;
}

/** Whether two route lists are the same set. */
export function sameRoutes(a: readonly HostRoute[], b: readonly HostRoute[]): boolean {
  const key = (r: HostRoute) => `${r.dst} ${r.via}`;
  const as = new Set(a.map(key));
  return as.size === new Set(b.map(key)).size && b.every((r) => as.has(key(r)));
}
