import { errors, type Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { child, index, invalid } from '../../registry/field-errors';
import { ensureRec, rec, recs, strs, type JsonMap } from '../../registry/obj-access';
import type { IpFamily } from '../../../common/cidr';
import { canonicalClusterIps, heldBy, needsHealthCheckPort, needsNodePorts, resolveIpFamilies } from './ip-families';
import type { AllocationOwner, KeyedRange } from './keyed-range';

/** The ranges a cluster allocates from: one per service CIDR (primary first) and the node ports. */
export interface ServiceRanges {
  ips: ReadonlyArray<{ family: IpFamily; range: KeyedRange }>;
  nodePorts: KeyedRange;
}

/** One write's allocations: what it took (to give back if the write fails) and the values the old object already held. */
class Taking {
  readonly taken: Array<{ range: KeyedRange; name: string }> = [];
  constructor(
    readonly owner: AllocationOwner,
    readonly dryRun: boolean,
    readonly heldIps: ReadonlySet<string>,
    readonly heldPorts: ReadonlySet<number>,
  ) {}

  /** Takes one given value; a dry run only checks that it is free (upstream's dry-run allocator). */
  async take(range: KeyedRange, name: string): Promise<'allocated' | 'taken' | 'out-of-range'> {
    if (range.spec.offsetOf(name) === undefined) return 'out-of-range';
    if (this.dryRun) return (await range.ownerOf(name)) ? 'taken' : 'allocated';
    const r = await range.allocate(name, this.owner);
    if (r === 'allocated') this.taken.push({ range, name });
    return r;
  }

  /** Takes any free value; a dry run takes nothing and leaves the field empty. */
  async takeNext(range: KeyedRange): Promise<string | undefined> {
    if (this.dryRun) return '';
    const name = await range.allocateNext(this.owner);
    if (name !== undefined) this.taken.push({ range, name });
    return name;
  }

  async undo(): Promise<void> {
    for (const { range, name } of this.taken.splice(0)) await range.release(name, this.owner);
  }
}

/**
 * Cluster IPs and node ports of Services (upstream's service REST storage allocators): filled in
 * and taken before validation, as upstream's BeginCreate/BeginUpdate; an address or port asked for
 * is honoured or refused with upstream's message; the caller gives back what was taken when the
 * write fails (the returned undo). Values an update no longer uses, and a deleted Service's, are
 * released by the controller that follows Services (controllers/service-allocation.ts), which also
 * repairs leaks.
 */
export class ServiceAllocator {
  constructor(readonly ranges: ServiceRanges) {}

  /** Allocates for a new or changed Service (spec changed in place); throws a 422/500 ApiError; returns the undo. */
  async allocate(svc: KObject, old: KObject | undefined, dryRun: boolean): Promise<() => Promise<void>> {
    const spec = ensureRec(svc, 'spec');
    const oldSpec = old ? (rec(old.spec) ?? {}) : undefined;
    if (oldSpec) patchAllocatedValues(spec, oldSpec);
    const held = heldBy(oldSpec);
    const owner = { namespace: svc.metadata.namespace ?? '', name: svc.metadata.name ?? '', uid: svc.metadata.uid };
    const taking = new Taking(owner, dryRun, new Set(held.ips), new Set(held.ports));
    try {
      const causes = [...(await this.allocateIps(spec, oldSpec, taking)), ...(await this.allocatePorts(spec, taking))];
      if (causes.length) throw errors.invalid('Service', owner.name, causes);
    } catch (err) {
      await taking.undo();
      throw err;
    }
    return () => taking.undo();
  }

  private async allocateIps(spec: JsonMap, oldSpec: JsonMap | undefined, taking: Taking): Promise<Cause[]> {
    if (spec.type === 'ExternalName') {
      delete spec.ipFamilies;
      delete spec.ipFamilyPolicy;
      return [];
    }
    canonicalClusterIps(spec);
    const families = this.ranges.ips.map((r) => r.family);
    const causes = resolveIpFamilies(spec, families);
    const oldFamily = oldSpec ? strs(oldSpec.ipFamilies)[0] : undefined;
    if (oldFamily && oldSpec?.type !== 'ExternalName' && strs(spec.ipFamilies)[0] !== oldFamily) {
      causes.push(invalid(index('spec.ipFamilies', 0), strs(spec.ipFamilies)[0], 'may not change once set'));
    }
    if (causes.length || spec.clusterIP === 'None') return causes;
    const wanted = strs(spec.clusterIPs);
    const out: string[] = [];
    for (const [i, family] of (strs(spec.ipFamilies) as IpFamily[]).entries()) {
      const range = this.ranges.ips.find((r) => r.family === family)!.range;
      const ip = wanted[i];
      if (!ip) {
        const got = await taking.takeNext(range);
        if (got === undefined) throw errors.internal(`failed to allocate a serviceIP: range is full`);
        out.push(got);
        continue;
      }
      out.push(ip);
      if (taking.heldIps.has(ip)) continue;
      const r = await taking.take(range, ip);
      if (r === 'taken') return [invalid('spec.clusterIPs', wanted, `failed to allocate IP ${ip}: provided IP is already allocated`)];
      if (r === 'out-of-range') {
        const detail = `failed to allocate IP ${ip}: the provided IP (${ip}) is not in the valid range. The range of valid IPs is ${range.spec.describe}`;
        return [invalid('spec.clusterIPs', wanted, detail)];
      }
    }
    if (out.every((ip) => ip !== '')) {
      spec.clusterIPs = out;
      spec.clusterIP = out[0];
    }
    return [];
  }

  private async allocatePorts(spec: JsonMap, taking: Taking): Promise<Cause[]> {
    const range = this.ranges.nodePorts;
    const mine = new Set<number>(); // one node port may serve a TCP and a UDP port of the service (upstream)
    const takeGiven = async (field: string, port: number): Promise<Cause[]> => {
      if (taking.heldPorts.has(port) || mine.has(port)) return [];
      const r = await taking.take(range, String(port));
      if (r === 'allocated') mine.add(port);
      if (r === 'taken') return [invalid(field, port, 'provided port is already allocated')];
      if (r === 'out-of-range') return [invalid(field, port, `provided port is not in the valid range. The range of valid ports is ${range.spec.describe}`)];
      return [];
    };
    const next = async (): Promise<number | undefined> => {
      const got = await taking.takeNext(range);
      if (got === undefined) throw errors.internal('failed to allocate a nodePort: range is full');
      if (got === '') return undefined;
      mine.add(Number(got));
      return Number(got);
    };
    const out: Cause[] = [];
    if (needsNodePorts(spec)) {
      for (const [i, p] of recs(spec.ports).entries()) {
        if (typeof p.nodePort === 'number' && p.nodePort > 0) out.push(...(await takeGiven(child(index('spec.ports', i), 'nodePort'), p.nodePort)));
        else {
          const n = await next();
          if (n !== undefined) p.nodePort = n;
        }
      }
    }
    if (needsHealthCheckPort(spec)) {
      const hc = spec.healthCheckNodePort;
      if (typeof hc === 'number' && hc > 0) out.push(...(await takeGiven('spec.healthCheckNodePort', hc)));
      else {
        const n = await next();
        if (n !== undefined) spec.healthCheckNodePort = n;
      }
    }
    return out;
  }
}

/**
 * Upstream's update normalisation (patchAllocatedValues, dropTypeDependentFields): an omitted
 * clusterIP, ipFamilies, policy and node port are kept from the stored Service; values the old type
 * needed and the new one does not are dropped when left as they were (a NodePort Service made
 * ClusterIP loses its node ports, one made ExternalName its cluster IPs); a downgrade to SingleStack
 * drops the secondary IP.
 */
function patchAllocatedValues(spec: JsonMap, old: JsonMap): void {
  const oldIps = strs(old.clusterIPs);
  if (spec.type === 'ExternalName') {
    if (strs(spec.clusterIPs).join() === oldIps.join()) {
      delete spec.clusterIPs;
      delete spec.clusterIP;
    }
  } else if (old.type !== 'ExternalName') {
    if (!strs(spec.clusterIPs).length && !spec.clusterIP && oldIps.length) {
      spec.clusterIPs = spec.ipFamilyPolicy === 'SingleStack' ? oldIps.slice(0, 1) : [...oldIps];
      spec.clusterIP = oldIps[0];
    }
    if (!strs(spec.ipFamilies).length && strs(old.ipFamilies).length) {
      spec.ipFamilies = spec.ipFamilyPolicy === 'SingleStack' ? strs(old.ipFamilies).slice(0, 1) : [...strs(old.ipFamilies)];
    }
    if (!spec.ipFamilyPolicy && old.ipFamilyPolicy) spec.ipFamilyPolicy = old.ipFamilyPolicy;
  }
  const oldPorts = recs(old.ports);
  for (const p of recs(spec.ports)) {
    const match = oldPorts.find((q) => q.port === p.port && q.protocol === p.protocol);
    if (!needsNodePorts(spec)) {
      if (match && p.nodePort === match.nodePort) delete p.nodePort;
    } else if (!p.nodePort && match && typeof match.nodePort === 'number') p.nodePort = match.nodePort;
  }
  const external = spec.type === 'NodePort' || spec.type === 'LoadBalancer' || strs(spec.externalIPs).length > 0;
  if (!external && spec.externalTrafficPolicy === old.externalTrafficPolicy) delete spec.externalTrafficPolicy;
  if (!needsHealthCheckPort(spec) && spec.healthCheckNodePort === old.healthCheckNodePort) delete spec.healthCheckNodePort;
  else if (needsHealthCheckPort(spec) && !spec.healthCheckNodePort && old.healthCheckNodePort) spec.healthCheckNodePort = old.healthCheckNodePort;
}
