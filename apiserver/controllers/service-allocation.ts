import { setTimeout as sleepFor } from 'node:timers/promises';
import type { Logger } from 'pino';
import { NOOP_RECORDER, type EventRecorder } from '../../common/events/recorder';
import type { KObject } from '../api/types';
import { rec } from '../registry/obj-access';
import type { ResourceType } from '../registry/resource-type';
import { waitForCacheSync, type StoreInformers } from '../store/list-watch';
import { heldBy } from '../store/service-alloc/ip-families';
import { sameOwner, type AllocationOwner, type KeyedRange } from '../store/service-alloc/keyed-range';
import type { ServiceRanges } from '../store/service-alloc/service-allocator';

export interface ServiceAllocationOptions {
  log: Logger;
  recorder?: EventRecorder;
  /** Between repair passes (upstream's repair loops: 3 min). */
  intervalMs?: number;
  /** Passes an allocation must be seen without its Service before it is released (upstream's numRepairsBeforeLeakCleanup, 3): a create in flight is not a leak. */
  leakPasses?: number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<unknown>;
}

/** What one repair pass found and did. */
export interface RepairReport {
  released: string[];
  restored: string[];
  duplicates: string[];
  outOfRange: string[];
}

/**
 * Releases what Services no longer hold and repairs the allocations (upstream's service IP and
 * node port repair controllers, over the keyed allocations of store/service-alloc/): on an update,
 * the values the old object held and the new one does not; on a delete, all of them (upstream
 * releases in its REST delete; here the release follows the delete event, so a deleted Service's
 * address is free again a moment later). Each pass: an allocation whose Service is gone or holds
 * it no more, seen so for `leakPasses` passes, is released; a value a Service holds with no
 * allocation is allocated again (ClusterIPNotAllocated / PortNotAllocated), one held by another
 * Service too is reported (ClusterIPAlreadyAllocated / PortAlreadyAllocated), one outside the
 * ranges reported (ClusterIPOutOfRange / PortOutOfRange), as upstream's events.
 */
export class ServiceAllocationController {
  private readonly leaks = new Map<string, number>();

  constructor(
    private readonly services: ResourceType,
    private readonly ranges: ServiceRanges,
    private readonly informers: StoreInformers,
    private readonly opts: ServiceAllocationOptions,
  ) {}

  async run(signal: AbortSignal): Promise<void> {
    const inf = this.informers.informer(this.services);
    const onError = (err: unknown) => this.opts.log.warn({ err }, 'releasing service allocations failed; the repair pass will');
    inf.addEventHandler(
      {
        onUpdate: (old, svc) => void this.releaseUnused(old, svc).catch(onError),
        onDelete: (svc) => void this.releaseUnused(svc, undefined).catch(onError),
      },
      { signal },
    );
    this.informers.start(signal);
    if (!(await waitForCacheSync(signal, inf))) return;
    const sleep = this.opts.sleep ?? ((ms: number, s: AbortSignal) => sleepFor(ms, undefined, { signal: s }));
    while (!signal.aborted) {
      try {
        await this.repair(inf.store.list());
      } catch (err) {
        this.opts.log.warn({ err }, 'service allocation repair failed');
      }
      try {
        await sleep(this.opts.intervalMs ?? 180_000, signal);
      } catch {
        return;
      }
    }
  }

  /** Gives back what `old` held and `svc` (absent: deleted) does not. */
  async releaseUnused(old: KObject, svc: KObject | undefined): Promise<void> {
    const owner = ownerOf(old);
    const before = heldBy(rec(old.spec));
    const after = heldBy(rec(svc?.spec));
    for (const ip of before.ips) if (!after.ips.includes(ip)) await this.ipRange(ip)?.release(ip, owner);
    for (const p of before.ports) if (!after.ports.includes(p)) await this.ranges.nodePorts.release(String(p), owner);
  }

  /** One repair pass over the Services given (the informer's cache). */
  async repair(services: readonly KObject[]): Promise<RepairReport> {
    const report: RepairReport = { released: [], restored: [], duplicates: [], outOfRange: [] };
    const holders = new Map<string, KObject>(); // range-qualified value → the Service holding it
    const ranges: Array<[KeyedRange, string]> = [...this.ranges.ips.map((r): [KeyedRange, string] => [r.range, 'ip']), [this.ranges.nodePorts, 'port']];
    const stored = new Map<KeyedRange, Map<string, AllocationOwner | undefined>>();
    for (const [range] of ranges) if (!stored.has(range)) stored.set(range, await range.list());
    for (const svc of services) {
      const held = heldBy(rec(svc.spec));
      const values: Array<[KeyedRange | undefined, string, 'ip' | 'port']> = [
        ...held.ips.map((ip): [KeyedRange | undefined, string, 'ip'] => [this.ipRange(ip), ip, 'ip']),
        ...held.ports.map((p): [KeyedRange | undefined, string, 'port'] => [this.ranges.nodePorts, String(p), 'port']),
      ];
      for (const [range, value, what] of values) await this.check(svc, range, value, what, holders, stored, report);
    }
    await this.releaseLeaks(stored, holders, report);
    return report;
  }

  private async check(
    svc: KObject,
    range: KeyedRange | undefined,
    value: string,
    what: 'ip' | 'port',
    holders: Map<string, KObject>,
    stored: Map<KeyedRange, Map<string, AllocationOwner | undefined>>,
    report: RepairReport,
  ): Promise<void> {
    const label = what === 'ip' ? 'ClusterIP' : 'Port';
    const ref = { apiVersion: 'v1', kind: 'Service', namespace: svc.metadata.namespace, name: svc.metadata.name!, uid: svc.metadata.uid };
    if (!range || range.spec.offsetOf(value) === undefined) {
      report.outOfRange.push(value);
      const where = range?.spec.describe ?? 'any service CIDR';
      this.event(ref, `${label}OutOfRange`, `${what === 'ip' ? 'Cluster IP' : 'Port'} ${value} is not within the configured range ${where}; please recreate the service`);
      return;
    }
    const key = `${range.spec.keyPrefix}${value}`;
    const other = holders.get(key);
    if (other && other !== svc) {
      report.duplicates.push(value);
      this.event(ref, `${label}AlreadyAllocated`, `${what === 'ip' ? 'Cluster IP' : 'Port'} ${value} was assigned to multiple services; please recreate the service`);
      return;
    }
    holders.set(key, svc);
    const owner = stored.get(range)!.get(value);
    if (owner && sameOwner(owner, ownerOf(svc))) return;
    if (owner) {
      // Stored for another Service that no longer holds it (a leak): that one's release would let this one go too.
      await range.release(value);
    }
    const r = await range.allocate(value, ownerOf(svc));
    if (r === 'allocated') {
      stored.get(range)!.set(value, ownerOf(svc));
      report.restored.push(value);
      this.event(ref, `${label}NotAllocated`, `${what === 'ip' ? 'Cluster IP' : 'Port'} ${value} is not allocated; repairing`);
    }
  }

  private async releaseLeaks(stored: Map<KeyedRange, Map<string, AllocationOwner | undefined>>, holders: Map<string, KObject>, report: RepairReport): Promise<void> {
    const seen = new Set<string>();
    for (const [range, values] of stored) {
      for (const [value, owner] of values) {
        const key = `${range.spec.keyPrefix}${value}`;
        const holder = holders.get(key);
        if (holder && owner && sameOwner(owner, ownerOf(holder))) continue;
        seen.add(key);
        const passes = (this.leaks.get(key) ?? 0) + 1;
        if (passes < (this.opts.leakPasses ?? 3)) {
          this.leaks.set(key, passes);
          continue;
        }
        if (owner) await range.release(value, owner);
        else await range.release(value);
        report.released.push(value);
        this.opts.log.info({ value }, 'released a leaked service allocation');
      }
    }
    for (const key of [...this.leaks.keys()]) if (!seen.has(key) || report.released.some((v) => key.endsWith(`/${v}`))) this.leaks.delete(key);
  }

  private ipRange(ip: string): KeyedRange | undefined {
    return this.ranges.ips.find((r) => r.range.spec.offsetOf(ip) !== undefined)?.range;
  }

  private event(ref: { kind: string; name: string; namespace?: string; uid?: string; apiVersion: string }, reason: string, message: string): void {
    this.opts.log.warn({ service: `${ref.namespace}/${ref.name}`, reason }, message);
    (this.opts.recorder ?? NOOP_RECORDER).event(ref, 'Warning', reason, message);
  }
}

function ownerOf(svc: KObject): AllocationOwner {
  return { namespace: svc.metadata.namespace ?? '', name: svc.metadata.name ?? '', uid: svc.metadata.uid };
}
