/**
 * Node addresses (Node.status.addresses): the InternalIP from --node-ip, else the first
 * non-loopback IPv4 address of the host, and the Hostname. Upstream's kubelet resolves its
 * hostname through DNS first and then falls back to the default-route interface; the agent picks
 * the first non-loopback IPv4 in interface order, which is the same on single-NIC nodes.
 */
import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os';

export interface NodeAddress {
  type: 'InternalIP' | 'ExternalIP' | 'Hostname' | 'InternalDNS' | 'ExternalDNS';
  address: string;
}

export type InterfaceReader = () => NodeJS.Dict<NetworkInterfaceInfo[]>;

/** The first non-loopback, non-link-local IPv4 address, or undefined. */
export function firstHostIPv4(read: InterfaceReader = networkInterfaces): string | undefined {
  for (const list of Object.values(read())) {
    for (const a of list ?? []) {
      if (a.family === 'IPv4' && !a.internal && !a.address.startsWith('169.254.')) return a.address;
    }
  }
  return undefined;
}

/** Addresses in the kubelet's order: InternalIP(s) first, then Hostname. */
export function nodeAddresses(hostname: string, nodeIPs: readonly string[], read: InterfaceReader = networkInterfaces): NodeAddress[] {
  const out: NodeAddress[] = [];
  const ips = nodeIPs.length > 0 ? nodeIPs : [firstHostIPv4(read)].filter((x): x is string => x !== undefined);
  for (const ip of ips) out.push({ type: 'InternalIP', address: ip });
  out.push({ type: 'Hostname', address: hostname });
  return out;
}
