import { isIP } from 'node:net';
import { parseCidr, type Cidr } from '../../common/cidr';

/** The networking flags of svc-apiserver (kube-apiserver's and kube-controller-manager's names). */
export interface NetworkFlags {
  /** --service-cluster-ip-range: one CIDR, or two of different families for dual-stack (primary first). */
  serviceCidrs: Cidr[];
  /** --service-node-port-range, inclusive. */
  nodePortRange: [number, number];
  /** --advertise-address: the address the kubernetes Service's endpoints list for this server (absent: the bind address, else the host's). */
  advertiseAddress?: string;
  /** --cluster-cidr: pods' CIDRs (one, or two of different families); empty: no node IPAM (upstream's --allocate-node-cidrs off). */
  clusterCidrs: Cidr[];
  /** --node-cidr-mask-size (IPv4) and --node-cidr-mask-size-ipv6: the size of each node's podCIDR. */
  nodeCidrMaskSize: { IPv4: number; IPv6: number };
}

interface FlagDef {
  kind: 'string';
  usage: string;
  def?: string;
}

export const NETWORK_FLAG_DEFS: Record<string, FlagDef> = {
  'service-cluster-ip-range': {
    kind: 'string',
    usage: 'CIDR from which Services get cluster IPs; two comma-separated CIDRs of different IP families make the cluster dual-stack (the first is the primary family)',
    def: '10.96.0.0/12',
  },
  'advertise-address': { kind: 'string', usage: 'IP address this server is reached at, listed in the kubernetes Service\'s endpoints (default: --bind-address unless it is 0.0.0.0, :: or loopback, else the host\'s first non-loopback IPv4 address; loopback addresses are refused, as Endpoints refuse them)' },
  'cluster-cidr': { kind: 'string', usage: 'CIDR of the pods (two comma-separated of different IP families for dual-stack); when set, every Node gets spec.podCIDR(s) from it (the node IPAM controller)' },
  'node-cidr-mask-size': { kind: 'string', usage: 'Prefix length of each Node\'s IPv4 podCIDR taken from --cluster-cidr', def: '24' },
  'node-cidr-mask-size-ipv6': { kind: 'string', usage: 'Prefix length of each Node\'s IPv6 podCIDR taken from --cluster-cidr', def: '64' },
  'service-node-port-range': { kind: 'string', usage: 'Port range (inclusive) from which NodePort and LoadBalancer Services get node ports', def: '30000-32767' },
};

/** Reads the networking flags; `get` returns a flag's value or default; throws Error with the flag named. */
export function parseNetworkFlags(get: (name: string) => string | undefined): NetworkFlags {
  const wrap = <T>(name: string, f: (v: string) => T): T => {
    const v = get(name) ?? '';
    try {
      return f(v);
    } catch (err) {
      throw new Error(`invalid argument "${v}" for --${name}: ${(err as Error).message}`, { cause: err });
    }
  };
  const advertise = get('advertise-address') || undefined;
  if (advertise !== undefined && !isIP(advertise)) throw new Error(`invalid argument "${advertise}" for --advertise-address: must be an IP address`);
  // Endpoints refuse loopback addresses (upstream's validation), so the kubernetes Service could never list one.
  if (advertise !== undefined && isLoopback(advertise)) throw new Error(`invalid argument "${advertise}" for --advertise-address: may not be a loopback address`);
  const mask = (name: string, max: number) => wrap(name, (v) => {
    if (!/^\d+$/.test(v) || Number(v) > max) throw new Error(`must be a prefix length of at most ${max}`);
    return Number(v);
  });
  const nodeCidrMaskSize = { IPv4: mask('node-cidr-mask-size', 32), IPv6: mask('node-cidr-mask-size-ipv6', 128) };
  const clusterCidrs = get('cluster-cidr') ? wrap('cluster-cidr', (v) => parseClusterCidrs(v, nodeCidrMaskSize)) : [];
  return { serviceCidrs: wrap('service-cluster-ip-range', parseServiceCidrs), nodePortRange: wrap('service-node-port-range', parsePortRange), advertiseAddress: advertise, clusterCidrs, nodeCidrMaskSize };
}

export function isLoopback(ip: string): boolean {
  return ip.startsWith('127.') || ip === '::1' || ip.startsWith('::ffff:127.');
}

/** Parses a port range "30000-32767" (or "30000+2767", or one port), as pflag's net.PortRange. */
export function parsePortRange(text: string): [number, number] {
  const m = /^(\d+)(?:([-+])(\d+))?$/.exec(text.trim());
  if (!m) throw new Error('must be a port range such as 30000-32767');
  const lo = Number(m[1]);
  const hi = m[2] === undefined ? lo : m[2] === '+' ? lo + Number(m[3]) : Number(m[3]);
  if (lo < 1 || hi > 65535 || hi < lo) throw new Error('must be a port range within 1-65535, low to high');
  return [lo, hi];
}

/** Parses --cluster-cidr: one or two CIDRs of different families, each holding at least one node subnet. */
function parseClusterCidrs(text: string, masks: { IPv4: number; IPv6: number }): Cidr[] {
  const cidrs = text.split(',').map((p) => p.trim()).filter(Boolean).map(parseCidr);
  if (cidrs.length > 2 || (cidrs.length === 2 && cidrs[0].family === cidrs[1].family)) throw new Error('must hold one CIDR, or one IPv4 and one IPv6 CIDR');
  for (const c of cidrs) if (masks[c.family] < c.prefix) throw new Error(`${c.text} is smaller than a node's /${masks[c.family]}`);
  return cidrs;
}

/** Parses one CIDR, or two of different IP families (dual-stack). */
export function parseServiceCidrs(text: string): Cidr[] {
  const parts = text.split(',').map((p) => p.trim()).filter(Boolean);
  if (parts.length < 1 || parts.length > 2) throw new Error('must hold one CIDR, or two of different IP families (dual-stack)');
  const cidrs = parts.map(parseCidr);
  if (cidrs.length === 2 && cidrs[0].family === cidrs[1].family) throw new Error('a dual-stack range needs one IPv4 and one IPv6 CIDR');
  for (const c of cidrs) {
    const hostBits = (c.family === 'IPv4' ? 32 : 128) - c.prefix;
    if (hostBits < 2) throw new Error(`${c.text} is too small`);
    if (c.family === 'IPv4' && hostBits > 24) throw new Error(`${c.text} is too large (at most /8 for IPv4)`);
  }
  return cidrs;
}
