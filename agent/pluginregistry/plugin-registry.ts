/**
 * The plugin registry on <root-dir>/plugins_registry/ (upstream: the kubelet's plugin manager,
 * i.e. plugin watcher + reconciler + operation executor). A rescan of the directory, woken by
 * inotify and repeated every second anyway (upstream's reconciler period), is the desired state;
 * the registered plugins are the actual state; the loop makes them meet:
 *  - a new socket (or one made again under the same name) is dialled: GetInfo, validation
 *    (DevicePlugin only, v1beta1 among its versions, an extended resource name), then the
 *    registrar, then NotifyRegistrationStatus with the outcome and upstream's messages;
 *  - a registered socket that is gone (or replaced) is deregistered;
 *  - a failure is retried with exponential back-off (500 ms doubling to 2 min, as upstream's
 *    operation executor), so a stale socket left by a dead plugin costs one refused connect every
 *    two minutes and is never removed by us: the directory belongs to the plugins.
 * At most one operation runs per socket. Stopping the registry does not deregister anything
 * (upstream neither): plugins stay registered with the device manager across the registry's life.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { Clock } from '../platform/clock';
import type { Log } from '../platform/logger';
import { DirWatcher } from './dir-watcher';
import { PluginClient, UPSTREAM_TIMEOUTS, type PluginTimeouts } from './plugin-client';
import type { DevicePluginRegistrar } from './registrar';
import { scanSockets } from './socket-scan';
import { refusal } from './validate';

/** Upstream's directory name under the root dir. */
export const PLUGIN_REGISTRY_DIR = 'plugins_registry';

export function pluginRegistryDir(rootDir: string): string {
  return path.join(rootDir, PLUGIN_REGISTRY_DIR);
}

export interface PluginRegistryOptions {
  dir: string;
  registrar: DevicePluginRegistrar;
  clock: Clock;
  log: Log;
  /** Rescan period without events (default 1 s). */
  resyncMs?: number;
  /** Retry back-off (defaults 500 ms and 2 min). */
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  timeouts?: PluginTimeouts;
}

/** A plugin the registry registered. */
export interface RegisteredPlugin {
  socketPath: string;
  name: string;
  endpoint: string;
}

interface Registered extends RegisteredPlugin {
  key: string;
}

interface Failure {
  key: string;
  delayMs: number;
  retryAt: number;
  error: string;
}

/** Where the plugin's own API is: its registration socket when it names none; a relative name is taken in the socket's directory. */
export function resolveEndpoint(endpoint: string, socketPath: string): string {
  if (!endpoint) return socketPath;
  // Upstream passes a relative endpoint on as is (relative to the kubelet's working directory,
  // which means nothing to a plugin); we anchor it at the registration socket's directory.
  return path.isAbsolute(endpoint) ? endpoint : path.join(path.dirname(socketPath), endpoint);
}

export class PluginRegistry {
  private readonly registered = new Map<string, Registered>();
  private readonly failures = new Map<string, Failure>();
  private readonly inflight = new Map<string, Promise<void>>();
  private wake = new AbortController();
  private kicked = false;
  private watchedDirs = new Set<string>();
  private readonly resyncMs: number;
  private readonly backoffInitialMs: number;
  private readonly backoffMaxMs: number;

  constructor(private readonly o: PluginRegistryOptions) {
    this.resyncMs = o.resyncMs ?? 1000;
    this.backoffInitialMs = o.backoffInitialMs ?? 500;
    this.backoffMaxMs = o.backoffMaxMs ?? 2 * 60_000;
  }

  /** The plugins registered now. */
  plugins(): RegisteredPlugin[] {
    return [...this.registered.values()].map(({ socketPath, name, endpoint }) => ({ socketPath, name, endpoint }));
  }

  /** Watches and reconciles until the signal aborts; waits for running operations before resolving. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    const log = this.o.log;
    try {
      await fsp.mkdir(this.o.dir, { recursive: true, mode: 0o750 });
    } catch (e) {
      log.error({ dir: this.o.dir, error: (e as Error).message }, 'cannot create the plugin registry directory; retrying on every rescan');
    }
    const watcher = new DirWatcher(() => this.kick(), log);
    log.info({ dir: this.o.dir }, 'watching for plugin registration sockets');
    try {
      while (!signal.aborted) {
        this.kicked = false;
        try {
          await this.reconcile(watcher);
        } catch (e) {
          log.warn({ dir: this.o.dir, error: (e as Error).message }, 'cannot scan the plugin registry directory');
        }
        if (this.kicked || signal.aborted) continue;
        await this.o.clock.sleep(this.nextWakeMs(), AbortSignal.any([signal, this.wake.signal]));
        if (this.wake.signal.aborted) this.wake = new AbortController();
      }
    } finally {
      watcher.close();
      await Promise.allSettled([...this.inflight.values()]);
    }
  }

  /** Asks for a rescan now. */
  kick(): void {
    this.kicked = true;
    this.wake.abort();
  }

  /** Until the next rescan: the resync period, or sooner when a failed socket's retry is due. */
  private nextWakeMs(): number {
    let ms = this.resyncMs;
    const now = this.o.clock.now();
    for (const f of this.failures.values()) ms = Math.min(ms, Math.max(0, f.retryAt - now));
    return ms;
  }

  private async reconcile(watcher: DirWatcher): Promise<void> {
    // Watch before scanning, so a socket made during the scan wakes the next one; a directory
    // first seen by this scan is watched after it, so it is scanned once more.
    watcher.sync([this.o.dir, ...this.watchedDirs]);
    const scan = await scanSockets(this.o.dir);
    if (scan.dirs.some((d) => !this.watchedDirs.has(d) && d !== this.o.dir)) this.kick();
    this.watchedDirs = new Set(scan.dirs.filter((d) => d !== this.o.dir));
    watcher.sync(scan.dirs);
    const now = this.o.clock.now();
    for (const [p, r] of this.registered) {
      if (this.inflight.has(p) || scan.sockets.get(p) === r.key) continue;
      this.registered.delete(p);
      this.o.log.info({ socket: p, resource: r.name, endpoint: r.endpoint }, 'plugin socket removed: deregistering device plugin');
      this.o.registrar.deregister(r.name, r.endpoint);
    }
    // A failure is remembered per socket identity: a new socket under the same name is tried at once.
    for (const [p, f] of this.failures) if (scan.sockets.get(p) !== f.key) this.failures.delete(p);
    for (const [p, key] of scan.sockets) {
      if (this.inflight.has(p) || this.registered.get(p)?.key === key) continue;
      const f = this.failures.get(p);
      if (f && now < f.retryAt) continue;
      const op = this.registerSocket(p, key).finally(() => {
        this.inflight.delete(p);
        this.kick();
      });
      this.inflight.set(p, op);
    }
  }

  private async registerSocket(socketPath: string, key: string): Promise<void> {
    const log = this.o.log;
    const client = new PluginClient(socketPath, this.o.timeouts ?? UPSTREAM_TIMEOUTS);
    const tell = async (registered: boolean, error: string) => {
      try {
        await client.notify({ plugin_registered: registered, error });
      } catch (e) {
        log.warn({ socket: socketPath, error: (e as Error).message }, 'cannot send the registration status to the plugin');
      }
    };
    try {
      await client.connect();
      const info = await client.getInfo();
      const why = refusal(info, socketPath);
      if (why) {
        await tell(false, why);
        this.fail(socketPath, key, why, { type: info.type, name: info.name });
        return;
      }
      const endpoint = resolveEndpoint(info.endpoint, socketPath);
      // A socket replacing a registered one under the same path: its old registration ends first.
      const old = this.registered.get(socketPath);
      if (old) {
        this.registered.delete(socketPath);
        this.o.registrar.deregister(old.name, old.endpoint);
      }
      try {
        await this.o.registrar.register(info.name, endpoint, info.supported_versions);
      } catch (e) {
        const msg = `RegisterPlugin error -- plugin registration failed with err: ${(e as Error).message}`;
        await tell(false, msg);
        this.fail(socketPath, key, msg, { type: info.type, name: info.name });
        return;
      }
      this.registered.set(socketPath, { key, socketPath, name: info.name, endpoint });
      this.failures.delete(socketPath);
      log.info({ socket: socketPath, resource: info.name, endpoint, versions: info.supported_versions }, 'registered device plugin from the plugin registry');
      // As upstream: a plugin that cannot take the good news stays registered.
      await tell(true, '');
    } catch (e) {
      this.fail(socketPath, key, `RegisterPlugin error -- ${(e as Error).message}`, {});
    } finally {
      client.close();
    }
  }

  private fail(socketPath: string, key: string, error: string, extra: object): void {
    const prev = this.failures.get(socketPath);
    const delayMs = prev && prev.key === key ? Math.min(prev.delayMs * 2, this.backoffMaxMs) : this.backoffInitialMs;
    this.failures.set(socketPath, { key, delayMs, retryAt: this.o.clock.now() + delayMs, error });
    // Loud once per socket and message, quiet while the same failure repeats.
    const quiet = prev?.key === key && prev.error === error;
    const fields = { socket: socketPath, error, retryInMs: delayMs, ...extra };
    if (quiet) this.o.log.debug(fields, 'plugin registration failed');
    else this.o.log.warn(fields, 'plugin registration failed');
  }
}
