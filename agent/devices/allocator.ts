/**
 * Which devices each container holds (upstream: the device manager's allocation side): hands
 * devices to a pod's containers at admission, asks the plugins' Allocate (and
 * GetPreferredAllocation, PreStartContainer), tells the runtime how to expose them, frees them
 * when pods go, and rebuilds them from the runtime's containers when the checkpoint was lost.
 * Owns the allocations (PodDevices); reads the plugins through `AllocatorPlugins` and asks the
 * device manager for checkpoint writes (`persist`) and to announce changes (`onChange`).
 *
 * Behaviour that follows upstream: allocation per container and resource; devices already held
 * are kept; init containers' devices may be reused by later containers of the same pod (not
 * sidecars'); otherwise only healthy devices nobody holds; GetPreferredAllocation is asked when
 * offered; Allocate's answer is stored and handed to CreateContainer; PreStartContainer before
 * every start when required. Where we differ: see ./device-manager.
 */
import type { RuntimeService } from '../cri';
import type { Log } from '../platform/logger';
import type { Container, Pod } from '../api/core-v1';
import { ResourceExhaustedError } from '../errors';
import type { PodDeviceEntry } from './checkpoint';
import { DEVICE_IDS_LABEL, mergeAllocations, type ContainerAllocation, type DeviceRunOptions } from './container-allocation';
import type { ContainerDevices, ContainerWithDevices } from './device-info';
import type { PluginClient } from './plugin-client';
import type { PluginView } from './plugin-endpoints';
import { allIds, PodDevices } from './pod-devices';
import { packByNuma } from './topology';

/** Upstream's pod status reason for a pod the node could not admit. */
export const UNEXPECTED_ADMISSION_ERROR = 'UnexpectedAdmissionError';

/** A pod cannot get its devices; `message` is what the pod's status shows (names the plugin and resource). */
export class DeviceAdmissionError extends ResourceExhaustedError {
  override readonly name = 'DeviceAdmissionError';
  override readonly code = 'SVC_NODE_ERR_DEVICE_ADMISSION';
  readonly reason = UNEXPECTED_ADMISSION_ERROR;
}

/** The plugin side the allocator reads (PluginEndpoints). */
export interface AllocatorPlugins {
  /** True once the device manager is stopping. */
  readonly closed: boolean;
  /** Whether a plugin advertised `resource` (now, or before and its grace period runs). */
  has(resource: string): boolean;
  /** The plugin serving `resource`, connected or within its grace period. */
  get(resource: string): PluginView | undefined;
  /** Resolves once every named resource has a connected plugin, or waitMs passed (or the signal aborted). Never rejects. */
  waitForPlugins(resources: string[], waitMs: number, signal?: AbortSignal): Promise<void>;
}

export interface AllocatorOptions {
  log: Log;
  endpoints: AllocatorPlugins;
  admissionWaitMs: number;
  callTimeoutMs: number;
  preStartTimeoutMs: number;
  /** Writes the checkpoint; resolves once the state as of the call is on disk. Never rejects. */
  persist: () => Promise<void>;
  /** Called (synchronously) after allocations changed. Must not throw. */
  onChange: () => void;
}

/** Extended resource requests of one container: limits (requests if no limit), as an integer count. */
export function deviceRequests(c: Container, isDeviceResource: (name: string) => boolean): Map<string, number> {
  const out = new Map<string, number>();
  const lim = c.resources?.limits ?? {};
  const req = c.resources?.requests ?? {};
  for (const name of new Set([...Object.keys(lim), ...Object.keys(req)])) {
    if (!isDeviceResource(name)) continue;
    const n = Number(lim[name] ?? req[name]);
    if (Number.isInteger(n) && n > 0) out.set(name, n);
  }
  return out;
}

const isSidecar = (c: Container) => c.restartPolicy === 'Always';

export class Allocator {
  private podDevices = new PodDevices();
  private lock: Promise<void> = Promise.resolve();
  private lost = false;
  private readonly endpoints: AllocatorPlugins;
  private readonly admissionWaitMs: number;
  private readonly callTimeoutMs: number;
  private readonly preStartTimeoutMs: number;

  constructor(private readonly o: AllocatorOptions) {
    this.endpoints = o.endpoints;
    this.admissionWaitMs = o.admissionWaitMs;
    this.callTimeoutMs = o.callTimeoutMs;
    this.preStartTimeoutMs = o.preStartTimeoutMs;
  }

  /** The allocations read from the checkpoint at start. */
  restore(entries: readonly PodDeviceEntry[]): void {
    this.podDevices = PodDevices.fromCheckpoint(entries);
  }

  /** The checkpoint could not be used: recoverFromRuntime rebuilds the allocations. */
  markLost(): void {
    this.lost = true;
  }

  /** The allocations as checkpoint entries. */
  toCheckpoint(): PodDeviceEntry[] {
    return this.podDevices.toCheckpoint();
  }

  private changed(): void {
    this.o.onChange();
  }

  private persist(): Promise<void> {
    return this.o.persist();
  }

  // ------------------------------------------------------------------ read API (DeviceInfo)

  devicesFor(podUid: string, containerName: string): ContainerDevices[] {
    const c = this.podDevices.container(podUid, containerName);
    if (!c) return [];
    return [...c.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([resourceName, a]) => ({ resourceName, deviceIds: allIds(a).sort(), numaNodes: [...a.byNuma.keys()].filter((n) => n >= 0).sort((x, y) => x - y) }));
  }

  containersWithDevices(): ContainerWithDevices[] {
    const seen = new Map<string, ContainerWithDevices>();
    for (const e of this.podDevices.entries()) {
      const key = `${e.podUid}\u0000${e.container}`;
      if (!seen.has(key)) seen.set(key, { podUid: e.podUid, containerName: e.container, devices: this.devicesFor(e.podUid, e.container) });
    }
    return [...seen.values()].sort((a, b) => a.podUid.localeCompare(b.podUid) || a.containerName.localeCompare(b.containerName));
  }

  // ------------------------------------------------------------------ admission and allocation

  /**
   * Whether `name` is a resource the manager hands out: a plugin advertised it (now, or before and
   * its grace period runs) or containers still hold its devices (as upstream, so a pod bound to the
   * node after the resource was dropped fails instead of running without its devices).
   */
  isDeviceResource(name: string): boolean {
    return this.endpoints.has(name) || this.podDevices.inUse(name).size > 0;
  }

  /** Whether the pod already holds devices (from this run or the checkpoint). */
  hasPod(podUid: string): boolean {
    return this.podDevices.hasPod(podUid);
  }

  private async withLock<T>(fn: () => Promise<T>): Promise<T> {
    const prev = this.lock;
    let release!: () => void;
    this.lock = new Promise((r) => (release = r));
    await prev;
    try {
      return await fn();
    } finally {
      release();
    }
  }

  /**
   * Gives every container of the pod the devices it asks for (init containers first, as
   * upstream's admission does), calling the plugins' Allocate. Containers that already hold their
   * devices (restored from the checkpoint) keep them. Waits up to admissionWaitMs for plugins
   * that are known but not connected. On failure the pod's allocations are released and it
   * rejects DeviceAdmissionError with a message naming the plugin.
   */
  async admitPod(pod: Pod, signal?: AbortSignal): Promise<void> {
    const uid = pod.metadata.uid ?? '';
    const inits = pod.spec.initContainers ?? [];
    const containers = [...inits.map((c) => ({ c, init: true })), ...pod.spec.containers.map((c) => ({ c, init: false }))];
    const requests = containers.map(({ c, init }) => ({ c, init, req: deviceRequests(c, (n) => this.isDeviceResource(n)) })).filter((x) => x.req.size > 0);
    if (requests.length === 0) return;
    const needed = new Set(requests.flatMap((x) => [...x.req.keys()]).filter((r) => requests.some((x) => x.req.has(r) && !this.podDevices.get(uid, x.c.name, r))));
    await this.endpoints.waitForPlugins([...needed], this.admissionWaitMs, signal);
    // Shutting down is not the pod's fault: no admission verdict.
    if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('aborted');
    if (this.endpoints.closed) throw new Error('the device manager is shutting down');
    let allocated = false;
    try {
      await this.withLock(async () => {
        for (const { c, init, req } of requests) {
          for (const [resource, count] of [...req].sort(([a], [b]) => a.localeCompare(b))) {
            if (await this.allocateOne(pod, c, init, inits, resource, count)) allocated = true;
          }
        }
      });
    } catch (e) {
      if (this.podDevices.removePod(uid)) await this.persist();
      this.changed();
      throw e;
    }
    // Outside the lock, so that concurrent admissions share checkpoint writes; the pod's
    // containers are created only after this resolves, so the allocation is durable before use.
    if (allocated) await this.persist();
  }

  /** Allocates one resource for one container; false when it already held them. */
  private async allocateOne(pod: Pod, c: Container, init: boolean, inits: readonly Container[], resource: string, count: number): Promise<boolean> {
    const uid = pod.metadata.uid ?? '';
    const held = this.podDevices.get(uid, c.name, resource);
    if (held) {
      const n = allIds(held).length;
      if (n === count) return false;
      throw new DeviceAdmissionError(`Allocate failed due to container ${c.name} of the pod already holds ${n} ${resource} devices but now asks for ${count}, which is unexpected`);
    }
    const ep = this.endpoints.get(resource);
    if (!ep?.client) {
      throw new DeviceAdmissionError(
        `Allocate failed due to the device plugin for ${resource} is not registered (waited ${Math.round(this.admissionWaitMs / 1000)}s for it), which is unexpected`,
      );
    }
    const client = ep.client;
    // Devices of this pod's finished init containers may be handed on; those already passed on to
    // an app container or held by a sidecar may not (upstream's devicesToReuse).
    const reusableFrom = inits.filter((ic) => !isSidecar(ic) && ic.name !== c.name).map((ic) => ic.name);
    const notReusable = [...inits.filter(isSidecar), ...pod.spec.containers].map((x) => x.name);
    const reuse = [...this.podDevices.heldBy(uid, reusableFrom, resource)].filter((id) => !this.podDevices.heldBy(uid, notReusable, resource).has(id)).sort();
    const healthy = new Set([...ep.devices.values()].filter((d) => d.healthy).map((d) => d.id));
    const inUse = this.podDevices.inUse(resource);
    let chosen: string[];
    if (reuse.length >= count) {
      chosen = reuse.slice(0, count);
    } else {
      const available = [...healthy].filter((id) => !inUse.has(id)).sort();
      const want = count - reuse.length;
      if (available.length < want) {
        throw new DeviceAdmissionError(
          `Allocate failed due to requested number of devices unavailable for ${resource}. Requested: ${count}, Available: ${available.length + reuse.length}, which is unexpected`,
        );
      }
      chosen = await this.pick(ep, client, available, reuse, count);
    }
    let alloc: ContainerAllocation;
    try {
      alloc = await client.allocate(chosen, this.callTimeoutMs);
    } catch (e) {
      throw new DeviceAdmissionError(`Allocate failed due to ${(e as Error).message}, which is unexpected`);
    }
    const byNuma = new Map<number, string[]>();
    for (const id of chosen) {
      const numa = ep.devices.get(id)?.numaNodes[0] ?? -1;
      byNuma.set(numa, [...(byNuma.get(numa) ?? []), id]);
    }
    this.podDevices.set(uid, c.name, resource, { byNuma, alloc });
    this.o.log.info({ pod: uid, container: c.name, init, resource, devices: chosen }, 'allocated devices');
    return true;
  }

  /** Chooses `count` devices: all of `mustInclude`, the rest from `available`; the plugin's preference first. */
  private async pick(ep: PluginView, client: PluginClient, available: string[], mustInclude: string[], count: number): Promise<string[]> {
    if (ep.options.getPreferredAllocationAvailable) {
      try {
        const pref = await client.preferred([...mustInclude, ...available], mustInclude, count, this.callTimeoutMs);
        const allowed = new Set([...mustInclude, ...available]);
        const uniq = [...new Set(pref)];
        if (uniq.length === count && uniq.every((id) => allowed.has(id)) && mustInclude.every((id) => uniq.includes(id))) return uniq;
        this.o.log.warn({ resource: ep.resource, preferred: pref, count }, 'device plugin preferred an unusable allocation; picking devices ourselves');
      } catch (e) {
        this.o.log.warn({ resource: ep.resource, error: (e as Error).message }, 'GetPreferredAllocation failed; picking devices ourselves');
      }
    }
    return packByNuma(available, mustInclude, count, (id) => ep.devices.get(id)?.numaNodes[0] ?? -1);
  }

  /**
   * What CreateContainer must add for the container's devices (merged over its resources) and
   * which devices they are, after PreStartContainer for plugins that want it. Undefined when the
   * container holds no devices. An allocation rebuilt from the runtime (Allocate's answer
   * unknown) asks the plugin's Allocate again for the same devices. Rejects Error (naming the
   * plugin) when a call fails or the plugin is not connected.
   */
  async runOptions(podUid: string, containerName: string): Promise<DeviceRunOptions | undefined> {
    const held = this.podDevices.container(podUid, containerName);
    if (!held || held.size === 0) return undefined;
    const parts: ContainerAllocation[] = [];
    const deviceIds: Record<string, string[]> = {};
    for (const [resource, a] of [...held].sort(([x], [y]) => x.localeCompare(y))) {
      const ep = this.endpoints.get(resource);
      const ids = allIds(a);
      let alloc = a.alloc;
      if (!alloc) {
        if (!ep?.client) throw new Error(`device plugin for ${resource} is not registered; cannot ask it again how to expose devices ${ids.join(',')}`);
        alloc = await ep.client.allocate(ids, this.callTimeoutMs);
        this.podDevices.set(podUid, containerName, resource, { byNuma: a.byNuma, alloc });
        await this.persist();
      }
      if (ep?.options.preStartRequired) {
        if (!ep.client) throw new Error(`device plugin for ${resource} is not registered; cannot call PreStartContainer`);
        await ep.client.preStart(ids, this.preStartTimeoutMs);
      }
      parts.push(alloc);
      deviceIds[resource] = [...ids].sort();
    }
    const { merged, conflicts } = mergeAllocations(parts);
    if (conflicts.length > 0) this.o.log.warn({ pod: podUid, container: containerName, conflicts }, 'device plugins set the same environment variables or annotations; the last one wins');
    return { allocation: merged, deviceIds };
  }

  /** True when start() found a checkpoint it could not use (recoverFromRuntime then rebuilds). */
  get checkpointLost(): boolean {
    return this.lost;
  }

  /**
   * After a lost checkpoint: rebuilds allocations from the DEVICE_IDS_LABEL of the runtime's
   * containers (running or exited, so init containers' devices count too). Entries the manager
   * already has win; Allocate's answers are asked again at the next container start. Does
   * nothing when the checkpoint was fine. Rejects the runtime's error.
   */
  async recoverFromRuntime(runtime: RuntimeService, signal?: AbortSignal): Promise<number> {
    if (!this.lost) return 0;
    const list = await runtime.listContainers(undefined, { timeoutMs: 30_000, ...(signal ? { signal } : {}) });
    let n = 0;
    for (const c of list) {
      const raw = c.labels?.[DEVICE_IDS_LABEL];
      const podUid = c.labels?.['io.kubernetes.pod.uid'];
      const name = c.labels?.['io.kubernetes.container.name'];
      if (!raw || !podUid || !name) continue;
      let ids: unknown;
      try {
        ids = JSON.parse(raw);
      } catch {
        this.o.log.warn({ container: c.id, label: DEVICE_IDS_LABEL }, 'ignoring a container whose device label is not JSON');
        continue;
      }
      if (typeof ids !== 'object' || ids === null) continue;
      for (const [resource, list] of Object.entries(ids as Record<string, unknown>)) {
        if (!Array.isArray(list) || !list.every((x) => typeof x === 'string') || this.podDevices.get(podUid, name, resource)) continue;
        const byNuma = new Map<number, string[]>();
        for (const id of list) {
          const numa = this.endpoints.get(resource)?.devices.get(id)?.numaNodes[0] ?? -1;
          byNuma.set(numa, [...(byNuma.get(numa) ?? []), id]);
        }
        this.podDevices.set(podUid, name, resource, { byNuma, alloc: null });
        n++;
      }
    }
    this.lost = false;
    this.o.log.info({ allocations: n }, 'rebuilt device allocations from the container runtime');
    await this.persist();
    this.changed();
    return n;
  }

  /** Frees every device the pod holds (the pod ended or is gone). */
  async releasePod(podUid: string): Promise<void> {
    if (!this.podDevices.removePod(podUid)) return;
    this.o.log.info({ pod: podUid }, 'released the devices of a pod');
    await this.persist();
    this.changed();
  }

  /** Frees the devices of every pod not in `active` (housekeeping once the pod sources are synced). */
  async retainPods(active: ReadonlySet<string>): Promise<void> {
    let any = false;
    for (const uid of this.podDevices.podUids()) {
      if (active.has(uid)) continue;
      this.podDevices.removePod(uid);
      this.o.log.info({ pod: uid }, 'released the devices of a pod that is gone');
      any = true;
    }
    if (any) {
      await this.persist();
      this.changed();
    }
  }}
