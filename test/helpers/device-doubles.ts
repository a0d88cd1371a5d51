/**
 * Test doubles for the pod resources server and the plugin registry: an in-memory devices
 * provider and pods provider, a recording device plugin registrar, and a real gRPC registration
 * plugin (pluginregistration.Registration on a unix socket) that records what the agent tells it.
 */
import { rename, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import type { DevicePluginRegistrar } from '../../agent/pluginregistry/registrar';
import { loadDevicePluginProto } from '../../agent/devices/device-plugin-proto';
import { loadRegistrationProto, type PluginInfo, type RegistrationStatus } from '../../agent/pluginregistry/registration-proto';
import type { DeviceSet, DevicesProvider, PodResourcesPod, PodsProvider } from '../../agent/podresources/provider';

/** Devices in memory: what is allocatable, and what each pod's container holds. */
export class FakeDevices implements DevicesProvider {
  private all: DeviceSet[] = [];
  private readonly byContainer = new Map<string, DeviceSet[]>();
  /** devicesFor calls so far. */
  lookups = 0;

  setAllocatable(sets: DeviceSet[]): void {
    this.all = sets;
  }

  assign(podUid: string, container: string, sets: DeviceSet[]): void {
    this.byContainer.set(`${podUid}/${container}`, sets);
  }

  allocatable(): readonly DeviceSet[] {
    return this.all;
  }

  devicesFor(podUid: string, containerName: string): readonly DeviceSet[] {
    this.lookups++;
    return this.byContainer.get(`${podUid}/${containerName}`) ?? [];
  }
}

/**
 * `pods` fake pods with `perPod` devices each of `resource`, spread over two NUMA nodes; returns
 * the providers with every device allocatable and each pod's container "c" holding its share.
 */
export function fakeNode(pods: number, perPod: number, resource = 'example.com/foo'): { pods: FakePods; devices: FakeDevices } {
  const devices = new FakeDevices();
  const fakePods = new FakePods();
  const all: DeviceSet[] = [];
  for (let i = 0; i < pods; i++) {
    const uid = `uid-${i}`;
    fakePods.add({ namespace: 'default', name: `pod-${i}`, uid, containers: ['c'] });
    const ids = Array.from({ length: perPod }, (_, j) => `dev-${i * perPod + j}`);
    const numa = { nodes: [{ ID: i % 2 }] };
    devices.assign(uid, 'c', [{ resourceName: resource, deviceIds: ids, topology: numa }]);
    for (const id of ids) all.push({ resourceName: resource, deviceIds: [id], topology: numa });
  }
  devices.setAllocatable(all);
  return { pods: fakePods, devices };
}

/** Pods in memory; `terminating` ones are found by name but are not active. */
export class FakePods implements PodsProvider {
  private readonly pods: { pod: PodResourcesPod; active: boolean }[] = [];

  add(pod: PodResourcesPod, active = true): void {
    this.pods.push({ pod, active });
  }

  activePods(): readonly PodResourcesPod[] {
    return this.pods.filter((p) => p.active).map((p) => p.pod);
  }

  podByName(namespace: string, name: string): PodResourcesPod | undefined {
    return this.pods.find((p) => p.pod.namespace === namespace && p.pod.name === name)?.pod;
  }
}

export type RegistrarCall = { op: 'register'; name: string; endpoint: string; versions: string[] } | { op: 'deregister'; name: string; endpoint: string };

/** Records register/deregister calls; `failWith` makes register reject with that message. */
export class RecordingRegistrar implements DevicePluginRegistrar {
  readonly calls: RegistrarCall[] = [];
  failWith: string | undefined;
  private readonly waiters: { pred: (c: RegistrarCall[]) => boolean; resolve: () => void }[] = [];

  register(name: string, endpoint: string, versions: readonly string[]): Promise<void> {
    this.record({ op: 'register', name, endpoint, versions: [...versions] });
    return this.failWith === undefined ? Promise.resolve() : Promise.reject(new Error(this.failWith));
  }

  deregister(name: string, endpoint: string): void {
    this.record({ op: 'deregister', name, endpoint });
  }

  /** Resolves once pred holds over the calls so far (rejects after boundMs with the calls seen). */
  until(pred: (c: RegistrarCall[]) => boolean, boundMs = 20_000): Promise<void> {
    if (pred(this.calls)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`registrar calls never matched; saw ${JSON.stringify(this.calls)}`)), boundMs);
      this.waiters.push({
        pred,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  private record(c: RegistrarCall): void {
    this.calls.push(c);
    for (const w of [...this.waiters]) {
      if (w.pred(this.calls)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  }
}

/** A plugin serving pluginregistration.Registration on a real unix socket. */
export class FakeRegistrationPlugin {
  readonly statuses: RegistrationStatus[] = [];
  getInfoCalls = 0;
  private readonly server = new grpc.Server();
  private readonly waiters: { n: number; resolve: () => void }[] = [];

  private constructor(
    readonly socketPath: string,
    private readonly info: PluginInfo,
  ) {}

  /**
   * `healthyDevices`: also serve the device plugin API (v1beta1 DevicePlugin) on the same socket,
   * advertising these device IDs as healthy, so the agent's device manager can accept the plugin.
   */
  static async start(socketPath: string, info: Partial<PluginInfo> & { name: string }, healthyDevices?: readonly string[]): Promise<FakeRegistrationPlugin> {
    const p = new FakeRegistrationPlugin(socketPath, { type: 'DevicePlugin', endpoint: '', supported_versions: ['v1beta1'], ...info });
    if (healthyDevices) {
      p.server.addService(loadDevicePluginProto().DevicePlugin.service, {
        GetDevicePluginOptions: (_c: unknown, cb: grpc.sendUnaryData<object>) => cb(null, {}),
        ListAndWatch: (call: grpc.ServerWritableStream<unknown, unknown>) => call.write({ devices: healthyDevices.map((ID) => ({ ID, health: 'Healthy' })) }),
      });
    }
    const Registration = loadRegistrationProto();
    p.server.addService(Registration.service, {
      GetInfo: (_call: unknown, cb: grpc.sendUnaryData<PluginInfo>) => {
        p.getInfoCalls++;
        cb(null, p.info);
      },
      NotifyRegistrationStatus: (call: grpc.ServerUnaryCall<RegistrationStatus, object>, cb: grpc.sendUnaryData<object>) => {
        p.statuses.push({ plugin_registered: call.request.plugin_registered, error: call.request.error });
        for (const w of [...p.waiters]) {
          if (p.statuses.length >= w.n) {
            p.waiters.splice(p.waiters.indexOf(w), 1);
            w.resolve();
          }
        }
        cb(null, {});
      },
    });
    await new Promise<void>((resolve, reject) => p.server.bindAsync(`unix://${socketPath}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())));
    return p;
  }

  /** Resolves once at least n statuses arrived (rejects after boundMs). */
  statusCount(n: number, boundMs = 20_000): Promise<RegistrationStatus[]> {
    if (this.statuses.length >= n) return Promise.resolve(this.statuses);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`only ${this.statuses.length} registration statuses, wanted ${n}: ${JSON.stringify(this.statuses)}`)), boundMs);
      this.waiters.push({
        n,
        resolve: () => {
          clearTimeout(timer);
          resolve(this.statuses);
        },
      });
    });
  }

  /** Stops serving; the socket file goes with it (libuv unlinks a listening socket it bound on close). */
  async stop(): Promise<void> {
    this.server.forceShutdown();
    await rm(this.socketPath, { force: true });
  }
}

/**
 * Leaves a socket file at `socketPath` that nobody listens on, as a crashed plugin does: bound
 * under another name, renamed, then closed (close unlinks only the name it bound).
 */
export async function makeStaleSocket(socketPath: string): Promise<void> {
  const tmp = `${socketPath}.bind`;
  const srv = createServer();
  await new Promise<void>((resolve, reject) => srv.once('error', reject).listen(tmp, () => resolve()));
  await rename(tmp, socketPath);
  await new Promise<void>((resolve) => srv.close(() => resolve()));
}
