import type { Cidr } from '../../../common/cidr';
import type { Storage } from '../../storage/storage';
import { KeyedRange } from './keyed-range';
import { nodePortRange, serviceIpRange } from './ranges';
import { ServiceAllocator, type ServiceRanges } from './service-allocator';

/** The ranges of the service CIDRs (primary first) and the node port range, over one store. */
export function serviceRanges(storage: Storage, cidrs: readonly Cidr[], ports: readonly [number, number], random: () => number = Math.random): ServiceRanges {
  return {
    ips: cidrs.map((c) => ({ family: c.family, range: new KeyedRange(storage, serviceIpRange(c), random) })),
    nodePorts: new KeyedRange(storage, nodePortRange(ports[0], ports[1]), random),
  };
}

export function buildServiceAllocator(storage: Storage, cidrs: readonly Cidr[], ports: readonly [number, number]): ServiceAllocator {
  return new ServiceAllocator(serviceRanges(storage, cidrs, ports));
}
