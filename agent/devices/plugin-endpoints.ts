/**
 * The device plugins the agent talks to (upstream: the device manager's endpoints): one
 * connection per extended resource, the devices its plugin advertises and their health, and the
 * grace timer of a plugin that went away. A plugin that goes away turns its devices unhealthy at
 * once and its resource disappears after the grace period (5 min) unless it registers again; a
 * plugin registering again for the same resource replaces the old connection. Owns the plugin
 * directory's sockets (stale ones are removed at start). Tells the device manager of every change
 * through `onChange` and of changes the checkpoint must record through `persist`.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { Clock } from '../platform/clock';
import { AgentError, Kinds } from '../errors';
import type { Log } from '../platform/logger';
import { CHECKPOINT_FILE } from './checkpoint';
import type { DeviceDescription } from './device-info';
import { DEVICE_PLUGIN_VERSION } from './device-plugin-proto';
import type { PluginClient, PluginDevice, PluginOptions } from './plugin-client';
import { extendedResourceNameProblem } from './resource-name';

/** A plugin's registration was refused (bad version or name, unreachable endpoint). */
export class RegistrationError extends AgentError {
  override readonly name = 'RegistrationError';
  override readonly code = 'SVC_NODE_ERR_PLUGIN_REGISTRATION';
  constructor(
    message: string,
    /** 'invalid' for the request's fault (INVALID_ARGUMENT), 'unavailable' when the endpoint cannot be reached (UNAVAILABLE). */
    readonly kind: 'invalid' | 'unavailable',
  ) {
    super(message, kind === 'invalid' ? Kinds.InvalidArgument : Kinds.Unavailable);
  }
}

export interface PluginEndpointsOptions {
  /** <root-dir>/device-plugins: plugins' sockets (and the checkpoint, which is left alone). */
  dir: string;
  clock: Clock;
  log: Log;
  gracePeriodMs: number;
  dialTimeoutMs: number;
  /** How a plugin socket is dialled. */
  dial: (socketPath: string, resourceName: string) => PluginClient;
  /** Called (synchronously) after every change of devices or their health. Must not throw. */
  onChange: () => void;
  /** Asks for a checkpoint write (the advertised devices changed). Must not throw. */
  persist: () => void;
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

/** One plugin as the allocator reads it. */
export interface PluginView {
  readonly resource: string;
  /** The connection; undefined while no plugin is connected. */
  readonly client: PluginClient | undefined;
  readonly options: PluginOptions;
  readonly devices: ReadonlyMap<string, PluginDevice>;
}

export class PluginEndpoints {
  private readonly endpoints = new Map<string, Endpoint>();
  private readonly waiters = new Set<() => void>();
  private stopped = false;

  constructor(private readonly o: PluginEndpointsOptions) {}

  /** True once stop() was called: no registration is accepted any more. */
  get closed(): boolean {
    return this.stopped;
  }

  /**
   * A resource named in the checkpoint: its devices start unhealthy and its grace period runs
   * until its plugin registers again.
   */
  restore(resource: string, ids: readonly string[]): void {
    const ep = this.endpointFor(resource);
    for (const id of ids) ep.devices.set(id, { id, healthy: false, numaNodes: [] });
    this.disconnected(ep, 'restored from the checkpoint; waiting for the plugin to register');
  }

  /** Closes every plugin connection, stops the grace timers and wakes admissions waiting for plugins. */
  stop(): void {
    this.stopped = true;
    for (const ep of this.endpoints.values()) {
      ep.graceAbort?.abort();
      ep.client?.close();
      ep.client = undefined;
    }
    for (const w of [...this.waiters]) w();
  }

  /** Removes stale sockets from the directory so that running plugins notice and register again. */
  async removeStaleSockets(): Promise<void> {
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

  private changed(): void {
    this.o.onChange();
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
    const client = this.o.dial(socketPath, resourceName);
    let options: PluginOptions;
    try {
      options = await client.connect(opts.dialTimeoutMs ?? this.o.dialTimeoutMs);
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
        this.o.persist();
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
    this.o.log.warn({ resource: ep.resource, reason: why, gracePeriodMs: this.o.gracePeriodMs }, 'device plugin disconnected; its devices are unhealthy until it registers again');
    void this.o.clock.sleep(this.o.gracePeriodMs, ac.signal).then((elapsed) => {
      if (!elapsed || ep.generation !== gen || ep.client || this.endpoints.get(ep.resource) !== ep) return;
      this.endpoints.delete(ep.resource);
      this.o.log.info({ resource: ep.resource }, 'device plugin did not come back within the grace period; removed its resource');
      this.o.persist();
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

  // ------------------------------------------------------------------ read API

  /** Every advertised device per resource (DeviceInfo.allocatable). */
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

  /** Whether a plugin advertised `resource` (now, or before and its grace period runs). */
  has(resource: string): boolean {
    return this.endpoints.has(resource);
  }

  /** The plugin serving `resource`, connected or within its grace period. */
  get(resource: string): PluginView | undefined {
    return this.endpoints.get(resource);
  }

  /** The advertised device IDs per resource, for the checkpoint. */
  registeredDevices(): Record<string, string[]> {
    const registered: Record<string, string[]> = {};
    for (const [r, ep] of this.endpoints) registered[r] = [...ep.devices.keys()].sort();
    return registered;
  }

  /** Resolves once every named resource has a connected plugin, or waitMs passed (or the signal aborted or stop() was called). */
  async waitForPlugins(resources: string[], waitMs: number, signal?: AbortSignal): Promise<void> {
    const missing = () => resources.filter((r) => !this.endpoints.get(r)?.client);
    if (missing().length === 0) return;
    this.o.log.info({ resources: missing(), waitMs }, 'waiting for device plugins to register before admitting a pod');
    const deadline = this.o.clock.now() + waitMs;
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
}
