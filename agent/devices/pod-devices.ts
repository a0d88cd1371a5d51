/**
 * Which devices each pod's containers hold (upstream: podDevices), with the Allocate answer for
 * each container and resource. Pure bookkeeping; the device manager decides, this remembers and
 * converts to and from the checkpoint's entries.
 */
import type { ContainerAllocation } from './container-allocation';
import type { PodDeviceEntry } from './checkpoint';

export interface ResourceAllocation {
  /** Device IDs by NUMA node (-1: unknown). */
  byNuma: Map<number, string[]>;
  /** Allocate's answer; null when unknown (rebuilt from the runtime): asked again at the next container start. */
  alloc: ContainerAllocation | null;
}

export function allIds(a: ResourceAllocation): string[] {
  return [...a.byNuma.values()].flat();
}

export class PodDevices {
  /** pod UID -> container name -> resource name -> allocation. */
  private readonly pods = new Map<string, Map<string, Map<string, ResourceAllocation>>>();

  get(podUid: string, container: string, resource: string): ResourceAllocation | undefined {
    return this.pods.get(podUid)?.get(container)?.get(resource);
  }

  /** Every resource allocation of one container. */
  container(podUid: string, container: string): Map<string, ResourceAllocation> | undefined {
    return this.pods.get(podUid)?.get(container);
  }

  set(podUid: string, container: string, resource: string, a: ResourceAllocation): void {
    let p = this.pods.get(podUid);
    if (!p) this.pods.set(podUid, (p = new Map<string, Map<string, ResourceAllocation>>()));
    let c = p.get(container);
    if (!c) p.set(container, (c = new Map<string, ResourceAllocation>()));
    c.set(resource, a);
  }

  hasPod(podUid: string): boolean {
    return this.pods.has(podUid);
  }

  /** Forgets a pod; true when it held anything. */
  removePod(podUid: string): boolean {
    return this.pods.delete(podUid);
  }

  podUids(): string[] {
    return [...this.pods.keys()];
  }

  /** Devices of `resource` held by any container of any pod. */
  inUse(resource: string): Set<string> {
    const out = new Set<string>();
    for (const p of this.pods.values()) {
      for (const c of p.values()) {
        const a = c.get(resource);
        if (a) for (const id of allIds(a)) out.add(id);
      }
    }
    return out;
  }

  /** Devices of `resource` held by the named containers of one pod. */
  heldBy(podUid: string, containers: readonly string[], resource: string): Set<string> {
    const out = new Set<string>();
    const p = this.pods.get(podUid);
    for (const name of containers) {
      const a = p?.get(name)?.get(resource);
      if (a) for (const id of allIds(a)) out.add(id);
    }
    return out;
  }

  /** Every (pod, container, resource) entry. */
  *entries(): IterableIterator<{ podUid: string; container: string; resource: string; a: ResourceAllocation }> {
    for (const [podUid, p] of this.pods) for (const [container, c] of p) for (const [resource, a] of c) yield { podUid, container, resource, a };
  }

  /** Checkpoint entries; the same (unchanged) entry object for an allocation on every call, so its serialisation can be reused. */
  toCheckpoint(): PodDeviceEntry[] {
    const out: PodDeviceEntry[] = [];
    for (const e of this.entries()) {
      let entry = this.entryCache.get(e.a);
      if (!entry) {
        const ids: Record<string, string[]> = {};
        for (const [numa, list] of e.a.byNuma) ids[String(numa)] = [...list];
        entry = { PodUID: e.podUid, ContainerName: e.container, ResourceName: e.resource, DeviceIDs: ids, AllocResp: e.a.alloc };
        this.entryCache.set(e.a, entry);
      }
      out.push(entry);
    }
    return out;
  }

  private readonly entryCache = new WeakMap<ResourceAllocation, PodDeviceEntry>();

  static fromCheckpoint(entries: readonly PodDeviceEntry[]): PodDevices {
    const pd = new PodDevices();
    for (const e of entries) {
      const byNuma = new Map<number, string[]>();
      for (const [k, v] of Object.entries(e.DeviceIDs)) byNuma.set(Number(k), [...v]);
      pd.set(e.PodUID, e.ContainerName, e.ResourceName, { byNuma, alloc: e.AllocResp });
    }
    return pd;
  }
}
