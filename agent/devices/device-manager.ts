/**
 * The device manager (upstream: kubelet's cm/devicemanager): keeps one connection per registered
 * device plugin and the devices each advertises, hands devices to containers when a pod is
 * admitted, tells the runtime how to expose them, and remembers every allocation in the
 * checkpoint so that an agent restart keeps running containers' devices. Three pieces, each with
 * its own state: ./plugin-endpoints (connections, devices, grace timers), ./allocator (who holds
 * what) and ./checkpoint-store (the file); this class wires them and keeps the public API.
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
import type { Clock } from '../platform/clock';
import type { Log } from '../platform/logger';
import type { Pod } from '../api/core-v1';
import type { RuntimeService } from '../cri';
import { Allocator } from './allocator';
import { CheckpointStore } from './checkpoint-store';
import type { DeviceRunOptions } from './container-allocation';
import type { ContainerDevices, ContainerWithDevices, DeviceDescription, DeviceInfo } from './device-info';
import { GrpcPluginClient, type PluginClient, type PluginOptions } from './plugin-client';
import { PluginEndpoints, type ExtendedResources } from './plugin-endpoints';
import type { ResourceAllocation } from './pod-devices';

export { DeviceAdmissionError, UNEXPECTED_ADMISSION_ERROR, deviceRequests } from './allocator';
export { RegistrationError, type ExtendedResources } from './plugin-endpoints';

export const DEFAULT_GRACE_PERIOD_MS = 5 * 60_000;
export const DEFAULT_ADMISSION_WAIT_MS = 60_000;
export const DEFAULT_CALL_TIMEOUT_MS = 30_000;
/** Upstream's PreStartContainer deadline. */
export const PRE_START_TIMEOUT_MS = 30_000;
/** How long registration waits for the plugin's socket to answer. */
export const DIAL_TIMEOUT_MS = 10_000;

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

export class DeviceManager implements DeviceInfo {
  private readonly listeners = new Set<() => void>();
  private readonly endpoints: PluginEndpoints;
  private readonly allocations: Allocator;
  private readonly checkpoint: CheckpointStore;

  constructor(private readonly o: DeviceManagerOptions) {
    this.endpoints = new PluginEndpoints({
      dir: o.dir,
      clock: o.clock,
      log: o.log,
      gracePeriodMs: o.gracePeriodMs ?? DEFAULT_GRACE_PERIOD_MS,
      dialTimeoutMs: o.dialTimeoutMs ?? DIAL_TIMEOUT_MS,
      dial: o.dial ?? ((p, r) => new GrpcPluginClient(p, r)),
      onChange: () => this.changed(),
      persist: () => void this.persist(),
    });
    this.allocations = new Allocator({
      log: o.log,
      endpoints: this.endpoints,
      admissionWaitMs: o.admissionWaitMs ?? DEFAULT_ADMISSION_WAIT_MS,
      callTimeoutMs: o.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
      preStartTimeoutMs: o.preStartTimeoutMs ?? PRE_START_TIMEOUT_MS,
      persist: () => this.persist(),
      onChange: () => this.changed(),
    });
    this.checkpoint = new CheckpointStore({
      dir: o.dir,
      log: o.log,
      snapshot: () => ({ PodDeviceEntries: this.allocations.toCheckpoint(), RegisteredDevices: this.endpoints.registeredDevices() }),
    });
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
    const { data, lost } = await this.checkpoint.load();
    if (lost) this.allocations.markLost();
    if (data) {
      this.allocations.restore(data.PodDeviceEntries);
      for (const [resource, ids] of Object.entries(data.RegisteredDevices)) this.endpoints.restore(resource, ids);
      this.o.log.info({ allocations: data.PodDeviceEntries.length, resources: Object.keys(data.RegisteredDevices) }, 'restored device allocations from the checkpoint');
    }
    await this.endpoints.removeStaleSockets();
    await this.persist();
  }

  /** Closes every plugin connection, stops the grace timers and resolves once checkpoint writes in flight are done. */
  async stop(): Promise<void> {
    this.endpoints.stop();
    await this.checkpoint.idle();
  }

  /** Called (synchronously) after every change of devices or their health. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }

  // ------------------------------------------------------------------ plugins (./plugin-endpoints)

  /**
   * Accepts a device plugin: validates the resource name, dials `socketPath` (absolute), reads
   * its options, replaces any earlier connection for the resource and starts following its
   * devices. Used by the Registration service (kubelet.sock) and by the plugins_registry watcher
   * for device plugins that register there. Rejects RegistrationError.
   */
  registerPlugin(resourceName: string, socketPath: string, opts: { dialTimeoutMs?: number } = {}): Promise<PluginOptions> {
    return this.endpoints.registerPlugin(resourceName, socketPath, opts);
  }

  /** Why a plugin announcing `resourceName` with `versions` would be refused, or undefined (see PluginEndpoints.validatePlugin). */
  validatePlugin(resourceName: string, versions: readonly string[]): string | undefined {
    return this.endpoints.validatePlugin(resourceName, versions);
  }

  /** A plugin's socket went away from plugins_registry (see PluginEndpoints.deregisterPlugin). */
  deregisterPlugin(resourceName: string): void {
    this.endpoints.deregisterPlugin(resourceName);
  }

  /** The socket path of the plugin currently serving `resourceName`, or undefined when none is connected. */
  currentEndpoint(resourceName: string): string | undefined {
    return this.endpoints.currentEndpoint(resourceName);
  }

  /** Capacity (all advertised devices) and allocatable (healthy ones) per resource. */
  extendedResources(): ExtendedResources {
    return this.endpoints.extendedResources();
  }

  // ------------------------------------------------------------------ read API (DeviceInfo)

  allocatable(): Map<string, DeviceDescription[]> {
    return this.endpoints.allocatable();
  }

  devicesFor(podUid: string, containerName: string): ContainerDevices[] {
    return this.allocations.devicesFor(podUid, containerName);
  }

  containersWithDevices(): ContainerWithDevices[] {
    return this.allocations.containersWithDevices();
  }

  // ------------------------------------------------------------------ admission and allocation (./allocator)

  /** Whether `name` is a resource the manager hands out (see Allocator.isDeviceResource). */
  isDeviceResource(name: string): boolean {
    return this.allocations.isDeviceResource(name);
  }

  /** Whether the pod already holds devices (from this run or the checkpoint). */
  hasPod(podUid: string): boolean {
    return this.allocations.hasPod(podUid);
  }

  /** Gives every container of the pod its devices; rejects DeviceAdmissionError (see Allocator.admitPod). */
  admitPod(pod: Pod, signal?: AbortSignal): Promise<void> {
    return this.allocations.admitPod(pod, signal);
  }

  /** What CreateContainer must add for the container's devices (see Allocator.runOptions). */
  runOptions(podUid: string, containerName: string): Promise<DeviceRunOptions | undefined> {
    return this.allocations.runOptions(podUid, containerName);
  }

  /** True when start() found a checkpoint it could not use (recoverFromRuntime then rebuilds). */
  get checkpointLost(): boolean {
    return this.allocations.checkpointLost;
  }

  /** After a lost checkpoint: rebuilds allocations from the runtime's containers (see Allocator.recoverFromRuntime). */
  recoverFromRuntime(runtime: RuntimeService, signal?: AbortSignal): Promise<number> {
    return this.allocations.recoverFromRuntime(runtime, signal);
  }

  /** Frees every device the pod holds (the pod ended or is gone). */
  releasePod(podUid: string): Promise<void> {
    return this.allocations.releasePod(podUid);
  }

  /** Frees the devices of every pod not in `active` (housekeeping once the pod sources are synced). */
  retainPods(active: ReadonlySet<string>): Promise<void> {
    return this.allocations.retainPods(active);
  }

  // ------------------------------------------------------------------ checkpoint (./checkpoint-store)

  /** Writes the checkpoint (shared with concurrent requests, see GroupWriter). Never rejects. */
  persist(): Promise<void> {
    return this.checkpoint.persist();
  }
}

export type { ResourceAllocation };
