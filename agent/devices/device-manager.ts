/**
 * The device manager (upstream: kubelet's cm/devicemanager): keeps one connection per registered
 * device plugin and the devices each advertises, hands devices to containers when a pod is
 * admitted, tells the runtime how to expose them, and remembers every allocation in the
 * checkpoint so that an agent restart keeps running containers' devices.
 *
 * Behaviour that follows upstream:
 * - capacity = all advertised devices, allocatable = healthy ones; a plugin that goes away turns
 *   its devices unhealthy at once and its resource disappears after the grace period (5 min)
 *   unless it registers again;
 * - a plugin registering again for the same resource replaces the old connection;
 * - allocation per container and resource: devices already held are kept; init containers'
 *   devices may be reused by later containers of the same pod (not sidecars'); otherwise only
 *   healthy devices nobody holds; GetPreferredAllocation is asked when offered; Allocate's answer
 *   is stored and handed to CreateContainer; PreStartContainer before every start when required;
 * - extended resources no plugin ever advertised are not the manager's business (ignored).
 *
 * Where we differ on purpose:
 * - a pod needing a resource whose plugin is known (from the checkpoint or an earlier
 *   registration) but not connected waits up to `admissionWaitMs` for it to register, instead of
 *   failing with UnexpectedAdmissionError at once (the usual fate of pods after a node reboot
 *   upstream);
 * - Allocate and GetPreferredAllocation have a deadline (`callTimeoutMs`); upstream waits forever;
 * - without GetPreferredAllocation, devices are picked packing as few NUMA nodes as possible
 *   (upstream leaves that to the topology manager, which svc does not have);
 * - the checkpoint's checksum is our own (see ./checkpoint).
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { Clock } from '../node/clock';
import type { Log } from '../platform/logger';
import type { Container, Pod } from '../pod/pod-types';
import { CHECKPOINT_FILE, CheckpointCorruptError, readCheckpoint, writeCheckpoint, type CheckpointData } from './checkpoint';
import type { RuntimeService } from '../cri/runtime-service';
import { DEVICE_IDS_LABEL, mergeAllocations, type ContainerAllocation, type DeviceRunOptions } from './container-allocation';
import type { ContainerDevices, ContainerWithDevices, DeviceDescription, DeviceInfo } from './device-info';
import { GrpcPluginClient, type PluginClient, type PluginDevice, type PluginOptions } from './plugin-client';
import { allIds, PodDevices, type ResourceAllocation } from './pod-devices';
import { DEVICE_PLUGIN_VERSION } from './device-plugin-proto';
import { GroupWriter } from './group-writer';
import { extendedResourceNameProblem } from './resource-name';
import { packByNuma } from './topology';

export const DEFAULT_GRACE_PERIOD_MS = 5 * 60_000;
export const DEFAULT_ADMISSION_WAIT_MS = 60_000;
export const DEFAULT_CALL_TIMEOUT_MS = 30_000;
/** Upstream's PreStartContainer deadline. */
export const PRE_START_TIMEOUT_MS = 30_000;
/** How long registration waits for the plugin's socket to answer. */
export const DIAL_TIMEOUT_MS = 10_000;

/** Upstream's pod status reason for a pod the node could not admit. */
export const UNEXPECTED_ADMISSION_ERROR = 'UnexpectedAdmissionError';

/** A pod cannot get its devices; `message` is what the pod's status shows (names the plugin and resource). */
export class DeviceAdmissionError extends Error {
  override readonly name = 'DeviceAdmissionError';
  readonly reason = UNEXPECTED_ADMISSION_ERROR;
}

/** A plugin's registration was refused (bad version or name, unreachable endpoint). */
export class RegistrationError extends Error {
  override readonly name = 'RegistrationError';
  constructor(
    message: string,
    /** 'invalid' for the request's fault, 'unavailable' when the endpoint cannot be reached. */
    readonly kind: 'invalid' | 'unavailable',
  ) {
    super(message);
  }
}

export interface DeviceManagerOptions {
  /** <root-dir>/device-plugins: plugins' sockets and the checkpoint. */
  dir: string;
  clock: Clock;
  log: Log;
  gracePeriodMs?: number;
  admissionWaitMs?: number;
  callTimeoutMs?: number;
  preStartTimeoutMs?: number;
  dialTimeoutMs?: number;
  /** Seam for tests: how a plugin socket is dialled. */
  dial?: (socketPath: string, resourceName: string) => PluginClient;
}

interface Endpoint {
  resource: string;
  client: PluginClient | undefined;
  options: PluginOptions;
  devices: Map<string, PluginDevice>;
  /** Increases with every registration, so a replaced connection's stream end is ignored. */
  generation: number;
  /** Set while no plugin is connected; the grace period runs from here. */
  disconnectedAt: number | undefined;
  graceAbort: AbortController | undefined;
}

/** Extended resource counts for the Node's status. */
export interface ExtendedResources {
  capacity: Record<string, string>;
  allocatable: Record<string, string>;
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

export class DeviceManager implements DeviceInfo {
  private readonly endpoints = new Map<string, Endpoint>();
  private podDevices = new PodDevices();
  private readonly listeners = new Set<() => void>();
  private readonly waiters = new Set<() => void>();
  private lock: Promise<void> = Promise.resolve();
  private readonly gracePeriodMs: number;
  private readonly admissionWaitMs: number;
  private readonly callTimeoutMs: number;
  private readonly preStartTimeoutMs: number;
  private readonly dialTimeoutMs: number;
  private readonly dial: (socketPath: string, resourceName: string) => PluginClient;
  private stopped = false;
  private lost = false;
  private readonly writer = new GroupWriter(() => this.writeNow());

  constructor(private readonly o: DeviceManagerOptions) {
    this.gracePeriodMs = o.gracePeriodMs ?? DEFAULT_GRACE_PERIOD_MS;
    this.admissionWaitMs = o.admissionWaitMs ?? DEFAULT_ADMISSION_WAIT_MS;
    this.callTimeoutMs = o.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    this.preStartTimeoutMs = o.preStartTimeoutMs ?? PRE_START_TIMEOUT_MS;
    this.dialTimeoutMs = o.dialTimeoutMs ?? DIAL_TIMEOUT_MS;
    this.dial = o.dial ?? ((p, r) => new GrpcPluginClient(p, r));
  }

  get dir(): string {
    return this.o.dir;
  }

  /**
   * Reads the checkpoint (a corrupt or truncated one is logged and ignored: the manager starts
   * empty) and removes stale sockets from the directory so that running plugins notice and
   * register again. Resources named in the checkpoint start with every device unhealthy and their
   * grace period running.
   */
  async start(): Promise<void> {
    let data: CheckpointData | undefined;
    try {
      data = await readCheckpoint(this.o.dir);
    } catch (e) {
      const corrupt = e instanceof CheckpointCorruptError;
      this.lost = true;
      this.o.log.warn(
        { file: path.join(this.o.dir, CHECKPOINT_FILE), error: (e as Error).message },
        corrupt ? 'device checkpoint is corrupt; starting without it, rebuilding allocations from the runtime' : 'cannot read the device checkpoint; rebuilding allocations from the runtime',
      );
    }
    if (data) {
      this.podDevices = PodDevices.fromCheckpoint(data.PodDeviceEntries);
      for (const [resource, ids] of Object.entries(data.RegisteredDevices)) {
        const ep = this.endpointFor(resource);
        for (const id of ids) ep.devices.set(id, { id, healthy: false, numaNodes: [] });
        this.disconnected(ep, 'restored from the checkpoint; waiting for the plugin to register');
      }
      this.o.log.info({ allocations: data.PodDeviceEntries.length, resources: Object.keys(data.RegisteredDevices) }, 'restored device allocations from the checkpoint');
    }
    await this.removeStaleSockets();
    await this.persist();
  }

  /** Closes every plugin connection, stops the grace timers and resolves once checkpoint writes in flight are done. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const ep of this.endpoints.values()) {
      ep.graceAbort?.abort();
      ep.client?.close();
      ep.client = undefined;
    }
    for (const w of [...this.waiters]) w();
    await this.writer.idle();
  }

  private async removeStaleSockets(): Promise<void> {
    let names: string[];
    try {
      names = await fsp.readdir(this.o.dir);
    } catch (e) {
      this.o.log.warn({ dir: this.o.dir, error: (e as Error).message }, 'cannot list the device plugin directory');
      return;
    }
    for (const n of names) {
      if (n === CHECKPOINT_FILE) continue;
      const p = path.join(this.o.dir, n);
      try {
        const st = await fsp.lstat(p);
        if (!st.isSocket()) continue;
        await fsp.rm(p, { force: true });
        this.o.log.info({ socket: p }, 'removed a stale socket from the device plugin directory');
      } catch (e) {
        this.o.log.warn({ socket: p, error: (e as Error).message }, 'cannot remove a stale device plugin socket');
      }
    }
  }

  /** Called (synchronously) after every change of devices or their health. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    for (const l of this.listeners) l();
    for (const w of [...this.waiters]) w();
  }

  private endpointFor(resource: string): Endpoint {
    let ep = this.endpoints.get(resource);
    if (!ep) {
      ep = { resource, client: undefined, options: { preStartRequired: false, getPreferredAllocationAvailable: false }, devices: new Map(), generation: 0, disconnectedAt: undefined, graceAbort: undefined };
      this.endpoints.set(resource, ep);
    }
    return ep;
  }

  // ------------------------------------------------------------------ registration

  /**
   * Accepts a device plugin: validates the resource name, dials `socketPath` (absolute), reads
   * its options, replaces any earlier connection for the resource and starts following its
   * devices. Used by the Registration service (kubelet.sock) and by the plugins_registry watcher
   * for device plugins that register there. Rejects RegistrationError.
   */
  async registerPlugin(resourceName: string, socketPath: string, opts: { dialTimeoutMs?: number } = {}): Promise<PluginOptions> {
    const problem = extendedResourceNameProblem(resourceName);
    if (problem) throw new RegistrationError(problem, 'invalid');
    if (!path.isAbsolute(socketPath)) throw new RegistrationError(`endpoint ${socketPath} must be an absolute path`, 'invalid');
    if (this.stopped) throw new RegistrationError('the device manager is shutting down', 'unavailable');
    const client = this.dial(socketPath, resourceName);
    let options: PluginOptions;
    try {
      options = await client.connect(opts.dialTimeoutMs ?? this.dialTimeoutMs);
    } catch (e) {
      client.close();
      throw new RegistrationError((e as Error).message, 'unavailable');
    }
    const ep = this.endpointFor(resourceName);
    const old = ep.client;
    ep.generation++;
    const gen = ep.generation;
    ep.client = client;
    ep.options = options;
    ep.disconnectedAt = undefined;
    ep.graceAbort?.abort();
    ep.graceAbort = undefined;
    if (old) {
      old.close();
      this.o.log.info({ resource: resourceName, socket: socketPath, old: old.socketPath }, 'device plugin registered again; replaced its old endpoint');
    } else {
      this.o.log.info({ resource: resourceName, socket: socketPath, preStartRequired: options.preStartRequired, preferredAllocation: options.getPreferredAllocationAvailable }, 'device plugin registered');
    }
    client.watch(
      (devices) => {
        if (ep.generation !== gen) return;
        ep.devices = new Map(devices.map((d) => [d.id, d]));
        void this.persist();
        this.changed();
      },
      (why) => {
        if (ep.generation !== gen || this.stopped) return;
        ep.client = undefined;
        client.close();
        this.disconnected(ep, why);
      },
    );
    this.changed();
    return options;
  }

  /**
   * For the plugins_registry watcher (upstream's ValidatePlugin for device plugins): why a plugin
   * announcing `resourceName` with `versions` would be refused, or undefined when it is fine.
   */
  validatePlugin(resourceName: string, versions: readonly string[]): string | undefined {
    if (!versions.includes(DEVICE_PLUGIN_VERSION)) return `device plugin ${resourceName} supports versions ${JSON.stringify(versions)}, none of which this agent speaks (${DEVICE_PLUGIN_VERSION})`;
    return extendedResourceNameProblem(resourceName);
  }

  /**
   * For the plugins_registry watcher when a plugin's socket goes away (upstream's
   * DeRegisterPlugin): like a ListAndWatch stream ending, the devices turn unhealthy and the
   * grace period starts. Unknown or already disconnected resources are left alone.
   */
  deregisterPlugin(resourceName: string): void {
    const ep = this.endpoints.get(resourceName);
    if (!ep?.client) return;
    ep.generation++;
    ep.client.close();
    ep.client = undefined;
    this.disconnected(ep, 'deregistered through the plugin registry');
  }

  /** The socket path of the plugin currently serving `resourceName`, or undefined when none is connected. */
  currentEndpoint(resourceName: string): string | undefined {
    return this.endpoints.get(resourceName)?.client?.socketPath;
  }

  /** The plugin is gone: its devices turn unhealthy now; the resource goes after the grace period. */
  private disconnected(ep: Endpoint, why: string): void {
    for (const d of ep.devices.values()) d.healthy = false;
    ep.disconnectedAt = this.o.clock.now();
    ep.graceAbort?.abort();
    const ac = new AbortController();
    ep.graceAbort = ac;
    const gen = ep.generation;
    this.o.log.warn({ resource: ep.resource, reason: why, gracePeriodMs: this.gracePeriodMs }, 'device plugin disconnected; its devices are unhealthy until it registers again');
    void this.o.clock.sleep(this.gracePeriodMs, ac.signal).then((elapsed) => {
      if (!elapsed || ep.generation !== gen || ep.client || this.endpoints.get(ep.resource) !== ep) return;
      this.endpoints.delete(ep.resource);
      this.o.log.info({ resource: ep.resource }, 'device plugin did not come back within the grace period; removed its resource');
      void this.persist();
      this.changed();
    });
    this.changed();
  }

  // ------------------------------------------------------------------ node status

  /** Capacity (all advertised devices) and allocatable (healthy ones) per resource. */
  extendedResources(): ExtendedResources {
    const capacity: Record<string, string> = {};
    const allocatable: Record<string, string> = {};
    for (const [r, ep] of [...this.endpoints].sort(([a], [b]) => a.localeCompare(b))) {
      capacity[r] = String(ep.devices.size);
      allocatable[r] = String([...ep.devices.values()].filter((d) => d.healthy).length);
    }
    return { capacity, allocatable };
  }

  // ------------------------------------------------------------------ read API (DeviceInfo)

  allocatable(): Map<string, DeviceDescription[]> {
    const out = new Map<string, DeviceDescription[]>();
    for (const r of [...this.endpoints.keys()].sort()) {
      const ep = this.endpoints.get(r)!;
      out.set(
        r,
        [...ep.devices.values()].sort((a, b) => a.id.localeCompare(b.id)).map((d) => ({ id: d.id, healthy: d.healthy, numaNodes: [...d.numaNodes] })),
      );
    }
    return out;
  }

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
    await this.waitForPlugins([...needed], signal);
    // Shutting down is not the pod's fault: no admission verdict.
    if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('aborted');
    if (this.stopped) throw new Error('the device manager is shutting down');
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

  /** Resolves once every named resource has a connected plugin, or admissionWaitMs passed (or the signal aborted). */
  private async waitForPlugins(resources: string[], signal?: AbortSignal): Promise<void> {
    const missing = () => resources.filter((r) => !this.endpoints.get(r)?.client);
    if (missing().length === 0) return;
    this.o.log.info({ resources: missing(), waitMs: this.admissionWaitMs }, 'waiting for device plugins to register before admitting a pod');
    const deadline = this.o.clock.now() + this.admissionWaitMs;
    while (missing().length > 0 && !this.stopped && !signal?.aborted) {
      const left = deadline - this.o.clock.now();
      if (left <= 0) return;
      const ac = new AbortController();
      const wake = () => ac.abort();
      this.waiters.add(wake);
      const onAbort = () => ac.abort();
      signal?.addEventListener('abort', onAbort, { once: true });
      await this.o.clock.sleep(left, ac.signal);
      signal?.removeEventListener('abort', onAbort);
      this.waiters.delete(wake);
    }
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
  private async pick(ep: Endpoint, client: PluginClient, available: string[], mustInclude: string[], count: number): Promise<string[]> {
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
  }

  // ------------------------------------------------------------------ checkpoint

  /** Writes the checkpoint (shared with concurrent requests, see GroupWriter). Never rejects. */
  persist(): Promise<void> {
    return this.writer.request();
  }

  private async writeNow(): Promise<void> {
    const registered: Record<string, string[]> = {};
    for (const [r, ep] of this.endpoints) registered[r] = [...ep.devices.keys()].sort();
    try {
      await writeCheckpoint(this.o.dir, { PodDeviceEntries: this.podDevices.toCheckpoint(), RegisteredDevices: registered });
    } catch (e) {
      this.o.log.error({ dir: this.o.dir, error: (e as Error).message }, 'cannot write the device checkpoint');
    }
  }
}

export type { ResourceAllocation };
