import { bigToIp, ipToBig, familyOf, type Cidr } from '../../../common/cidr';
import type { RangeSpec } from './keyed-range';

/** Storage prefixes of the allocations (internal keys, beside the objects' /<group>/<resource>/ keys). */
export const SERVICE_IPS_PREFIX = '/svc-allocations/serviceips/';
export const NODE_PORTS_PREFIX = '/svc-allocations/servicenodeports/';

/** Most addresses one range hands out (an IPv6 /64 would be 2^64; upstream's allocators cap large IPv6 ranges too). */
const MAX_RANGE = 1 << 24;

/**
 * The usable cluster IPs of a service CIDR: IPv4 without the network and broadcast addresses,
 * IPv6 without the subnet-router anycast (network) address, as upstream. The static band is
 * upstream's min(max(16, size/16), 256).
 */
export function serviceIpRange(cidr: Cidr): RangeSpec {
  const reserveTop = cidr.family === 'IPv4' ? 1n : 0n;
  const usable = cidr.size - 1n - reserveTop;
  const count = usable <= 0n ? 0 : Number(usable > BigInt(MAX_RANGE) ? BigInt(MAX_RANGE) : usable);
  const first = cidr.base + 1n;
  return {
    keyPrefix: SERVICE_IPS_PREFIX,
    count,
    nameAt: (off) => bigToIp(first + BigInt(off), cidr.family),
    offsetOf: (ip) => {
      const n = familyOf(ip) === cidr.family ? ipToBig(ip) : undefined;
      if (n === undefined || n < first || n >= first + BigInt(count)) return undefined;
      return Number(n - first);
    },
    staticBand: Math.min(Math.max(16, Math.floor(count / 16)), 256),
    describe: cidr.text,
  };
}

/** A node port range "30000-32767" (or one port); static band upstream's min(max(16, size/32), 128). */
export function nodePortRange(min: number, max: number): RangeSpec {
  const count = max - min + 1;
  return {
    keyPrefix: NODE_PORTS_PREFIX,
    count,
    nameAt: (off) => String(min + off),
    offsetOf: (text) => {
      const p = /^\d+$/.test(text) ? Number(text) : NaN;
      return p >= min && p <= max ? p - min : undefined;
    },
    staticBand: Math.min(Math.max(16, Math.floor(count / 32)), 128),
    describe: `${min}-${max}`,
    kind: 'ServiceNodePort',
  };
}
