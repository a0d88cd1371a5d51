import { bigToIp, ipToBig, familyOf, type Cidr } from '../../../common/cidr';
import type { RangeSpec } from './keyed-range';

/** Storage prefix of the node podCIDR allocations (one key per allocated subnet, named by its network address). */
export const NODE_CIDRS_PREFIX = '/svc-allocations/nodecidrs/';

/**
 * The node subnets of a cluster CIDR (upstream's cidrset for the node IPAM controller): the
 * /maskSize blocks of the CIDR in order, handed out from the lowest (a random source of 0 keeps
 * upstream's sequential order); names are the blocks' network addresses.
 */
export function nodeCidrRange(cluster: Cidr, maskSize: number): RangeSpec & { cidrOf: (name: string) => string } {
  const width = cluster.family === 'IPv4' ? 32 : 128;
  if (maskSize < cluster.prefix || maskSize > width) throw new Error(`node CIDR mask size ${maskSize} does not fit in ${cluster.text}`);
  const shift = BigInt(width - maskSize);
  const blocks = 1n << BigInt(maskSize - cluster.prefix);
  const count = Number(blocks > 1n << 24n ? 1n << 24n : blocks);
  return {
    keyPrefix: NODE_CIDRS_PREFIX,
    count,
    nameAt: (off) => bigToIp(cluster.base + (BigInt(off) << shift), cluster.family),
    offsetOf: (name) => {
      const n = familyOf(name) === cluster.family ? ipToBig(name) : undefined;
      if (n === undefined || n < cluster.base || ((n - cluster.base) & ((1n << shift) - 1n)) !== 0n) return undefined;
      const off = (n - cluster.base) >> shift;
      return off < BigInt(count) ? Number(off) : undefined;
    },
    staticBand: 0,
    describe: cluster.text,
    ownerResource: 'nodes',
    kind: 'NodeCIDR',
    cidrOf: (name) => `${name}/${maskSize}`,
  };
}
