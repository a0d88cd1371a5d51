/**
 * An in-process CRI runtime (`--container-runtime-endpoint sim://`): sandboxes and containers with
 * containerd's state machines and error behaviour, but no processes. Containers go CREATED ->
 * RUNNING -> EXITED (exit codes, reasons, start/finish times); behaviours make them crash after N
 * ms, ignore SIGTERM or fail to start; images come from a preloaded set and a pretend registry.
 * All time comes from the injected clock and IDs are hashes of a counter, so runs are
 * deterministic. Test controls (crash, faults, latency, readiness) are methods beyond RuntimeService.
 *
 * Where containerd 1.6 behaves in a particular way we copy it: removes are idempotent, stopping a
 * CREATED or EXITED container is a no-op, StopPodSandbox kills containers at once (exit 137), a
 * stopped sandbox reports no IP, host-network sandboxes have no IP and may not set a hostname.
 *
 * This class is the RPC surface and answers the runtime and sandbox lifecycle RPCs; each piece
 * owns its part: ./sim-gate (down, faults, latency), ./sim-state (records and their transitions,
 * events), ./sim-containers (the container lifecycle), ./sim-processes (exec, logs, stats,
 * checkpoints inside a container), ./sim-streams (exec, attach, port-forward streams),
 * ./sim-image-service with ./sim-images (the images).
 */
import { realClock, type Clock } from '../platform/clock';
import { RuntimeError } from './errors';
import type { CallOptions, RuntimeService } from './runtime-service';
import type { LocalStreamTarget, StreamAttachRequest, StreamExecRequest, StreamPortForwardRequest } from './stream-types';
import { SimStreams } from './sim-streams';
import { SimContainers } from './sim-containers';
import { DOWN, SimGate } from './sim-gate';
import { SimImageService } from './sim-image-service';
import { SimImageStore } from './sim-images';
import { IpPool } from './sim-ip-pool';
import { DEFAULT_SIM_HANDLERS, DEFAULT_SIM_IMAGES, type SimImageSpec, type SimulatorOptions } from './sim-options';
import { SimProcesses } from './sim-processes';
import {
  hostNetwork,
  labelMatcher,
  sandboxListItem,
  sandboxStatusOf,
  type SandboxRec,
} from './sim-records';
import { SimState } from './sim-state';
import type {
  AuthConfig,
  Container,
  ContainerConfig,
  ContainerEvent,
  ContainerFilter,
  ContainerStats,
  ContainerStatsFilter,
  ContainerStatusResult,
  ExecSyncResult,
  Image,
  ImageFsInfo,
  ImageSpec,
  ImageStatusResult,
  LinuxContainerResources,
  PodSandbox,
  PodSandboxConfig,
  PodSandboxFilter,
  PodSandboxStats,
  PodSandboxStatsFilter,
  PodSandboxStatusResult,
  RuntimeCondition,
  RuntimeStatus,
  VersionInfo,
} from './types';
import { requireV1 } from './version-check';

export class Simulator implements RuntimeService {
  private readonly clock: Clock;
  private readonly name: string;
  private readonly root: string;
  private readonly images: SimImageStore;
  private readonly state: SimState;
  private readonly gate: SimGate;
  private readonly processes: SimProcesses;
  private readonly streams: SimStreams;
  private readonly imageService: SimImageService;
  private readonly containers: SimContainers;
  private conditions: RuntimeCondition[] = [
    { type: 'RuntimeReady', status: true, reason: '', message: '' },
    { type: 'NetworkReady', status: true, reason: '', message: '' },
  ];

  constructor(private readonly opts: SimulatorOptions = {}) {
    this.clock = opts.clock ?? realClock;
    this.name = opts.name ?? 'sim';
    this.root = opts.root ?? '/var/lib/svc-sim';
    const present: readonly SimImageSpec[] = opts.images ?? DEFAULT_SIM_IMAGES;
    this.images = new SimImageStore(present, opts.registryImages ?? 'any', opts.pullFailures);
    this.state = new SimState(this.clock, this.name, new IpPool(opts.podCidr ?? '10.88.0.0/16'));
    this.gate = new SimGate(this.clock);
    this.processes = new SimProcesses(this.state, this.clock, opts, this.root, (rpc, o) => this.begin(rpc, o));
    this.streams = new SimStreams(this.state, this.clock, (rpc, o) => this.begin(rpc, o));
    this.imageService = new SimImageService(this.images, this.state, this.clock, this.root, (rpc, o) => this.begin(rpc, o));
    this.containers = new SimContainers(this.state, this.clock, this.images, this.processes, opts, (rpc, o) => this.begin(rpc, o));
  }

  // ------------------------------------------------------------------ test controls

  /** Makes every call fail Unavailable (false) as if the socket were gone, or recovers (true). Open event streams fail. */
  setAvailable(available: boolean): void {
    this.gate.setAvailable(available);
    if (!available) this.state.events.failAll(new RuntimeError('Unavailable', DOWN, 'GetContainerEvents'));
  }

  /** Sets a Status condition (RuntimeReady, NetworkReady) as the runtime would report it. */
  setCondition(type: string, status: boolean, reason = '', message = ''): void {
    this.conditions = this.conditions.filter((c) => c.type !== type).concat({ type, status, reason, message });
  }

  /** The next `times` calls of `rpc` (e.g. "RunPodSandbox") reject with `error`. */
  injectFault(rpc: string, error: RuntimeError, times = 1): void {
    this.gate.injectFault(rpc, error, times);
  }

  /** Every call of `rpc` takes `ms` of clock time (0 removes); past the call's timeoutMs it rejects DeadlineExceeded. */
  setLatency(rpc: string, ms: number): void {
    this.gate.setLatency(rpc, ms);
  }

  /** Makes an image present locally (as an import would). */
  addImage(spec: SimImageSpec): Image {
    return this.images.add(spec);
  }

  /** Lets PullImage find the image in the pretend registry. */
  publishImage(spec: SimImageSpec): void {
    this.images.publish(spec);
  }

  /** Makes a running container exit now with the code (a crash, or an OOM kill with reason OOMKilled). */
  crash(containerId: string, exitCode: number, reason?: string): void {
    this.state.settle();
    const c = this.state.mustContainer(containerId, 'Crash');
    if (c.state !== 'CONTAINER_RUNNING') throw new RuntimeError('FailedPrecondition', `container ${containerId} is not running`, 'Crash');
    this.state.exit(c, this.clock.now(), exitCode, reason);
  }

  /** Counts for leak checks. */
  counts(): { sandboxes: number; containers: number; running: number; eventSubscribers: number } {
    this.state.settle();
    let running = 0;
    for (const c of this.state.containers.values()) if (c.state === 'CONTAINER_RUNNING') running++;
    return { sandboxes: this.state.sandboxes.size, containers: this.state.containers.size, running, eventSubscribers: this.state.events.size };
  }

  // ------------------------------------------------------------------ runtime

  async connect(opts?: CallOptions): Promise<VersionInfo> {
    return requireV1(await this.version(opts), `sim://${this.name}`);
  }

  async version(opts?: CallOptions): Promise<VersionInfo> {
    await this.begin('Version', opts);
    return {
      version: '0.1.0',
      runtimeName: this.opts.runtimeName ?? 'svc-sim',
      runtimeVersion: this.opts.runtimeVersion ?? '0.1.0',
      runtimeApiVersion: this.opts.runtimeApiVersion ?? 'v1',
    };
  }

  async status(verbose = false, opts?: CallOptions): Promise<RuntimeStatus> {
    await this.begin('Status', opts);
    return {
      conditions: this.conditions.map((c) => ({ ...c })),
      info: verbose ? { config: JSON.stringify({ name: this.name, podCidr: this.opts.podCidr ?? '10.88.0.0/16' }) } : {},
      handlers: ['', ...(this.opts.runtimeHandlers ?? DEFAULT_SIM_HANDLERS)].map((name) => ({ name, recursiveReadOnlyMounts: false, userNamespaces: false })),
      features: { supplementalGroupsPolicy: true, userNamespacesHostNetwork: false, mountOptions: false },
    };
  }

  // ------------------------------------------------------------------ sandboxes

  async runPodSandbox(config: PodSandboxConfig, runtimeHandler = '', opts?: CallOptions): Promise<string> {
    await this.begin('RunPodSandbox', opts);
    const m = config.metadata;
    if (!m?.name || !m.namespace || !m.uid) {
      throw new RuntimeError('InvalidArgument', 'sandbox config must include metadata with name, namespace and uid', 'RunPodSandbox');
    }
    if (runtimeHandler !== '' && !(this.opts.runtimeHandlers ?? DEFAULT_SIM_HANDLERS).includes(runtimeHandler)) {
      throw new RuntimeError('NotFound', `failed to get sandbox runtime: no runtime for "${runtimeHandler}" is configured`, 'RunPodSandbox');
    }
    const host = hostNetwork(config);
    if (host && config.hostname) {
      // containerd puts host-network sandboxes in the host's UTS namespace and runc refuses to set
      // a hostname there; the kubelet therefore sends none for host-network pods.
      throw new RuntimeError(
        'Unknown',
        'failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to set hostname without a private UTS namespace: unknown',
        'RunPodSandbox',
      );
    }
    if (!host && !this.conditionTrue('NetworkReady')) {
      throw new RuntimeError('Unknown', 'failed to setup network for sandbox: cni plugin not initialized', 'RunPodSandbox');
    }
    const id = this.state.newId('sandbox');
    const reservedName = `${m.name}_${m.namespace}_${m.uid}_${m.attempt}`;
    this.state.reserve(reservedName, id, 'sandbox', 'RunPodSandbox');
    let ip = '';
    try {
      if (!host) ip = this.state.ips.allocate();
    } catch (e) {
      this.state.release(reservedName);
      throw e;
    }
    const rec: SandboxRec = { id, config: structuredClone(config), runtimeHandler, state: 'SANDBOX_READY', createdAt: this.clock.now(), ip, reservedName };
    this.state.sandboxes.set(id, rec);
    this.state.emit(id, rec, 'CONTAINER_CREATED_EVENT');
    this.state.emit(id, rec, 'CONTAINER_STARTED_EVENT');
    return id;
  }

  async stopPodSandbox(podSandboxId: string, opts?: CallOptions): Promise<void> {
    await this.begin('StopPodSandbox', opts);
    this.state.stopSandbox(this.state.mustSandbox(podSandboxId, 'StopPodSandbox'));
  }

  async removePodSandbox(podSandboxId: string, opts?: CallOptions): Promise<void> {
    await this.begin('RemovePodSandbox', opts);
    const s = this.state.sandboxes.get(podSandboxId);
    if (s) this.state.removeSandbox(s);
  }

  async podSandboxStatus(podSandboxId: string, _verbose = false, opts?: CallOptions): Promise<PodSandboxStatusResult> {
    await this.begin('PodSandboxStatus', opts);
    const s = this.state.mustSandbox(podSandboxId, 'PodSandboxStatus');
    return { status: sandboxStatusOf(s), info: {}, containersStatuses: [], timestamp: this.clock.now() };
  }

  async listPodSandbox(filter?: PodSandboxFilter, opts?: CallOptions): Promise<PodSandbox[]> {
    await this.begin('ListPodSandbox', opts);
    const out: PodSandbox[] = [];
    const matches = labelMatcher(filter?.labelSelector);
    for (const s of this.state.sandboxes.values()) {
      if (filter?.id && !s.id.startsWith(filter.id)) continue;
      if (filter?.state && s.state !== filter.state) continue;
      if (!matches(s.config.labels)) continue;
      out.push(sandboxListItem(s));
    }
    return out;
  }

  // ------------------------------------------------------------------ containers

  async createContainer(podSandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig, opts?: CallOptions): Promise<string> {
    return this.containers.createContainer(podSandboxId, config, sandboxConfig, opts);
  }

  async startContainer(containerId: string, opts?: CallOptions): Promise<void> {
    return this.containers.startContainer(containerId, opts);
  }

  async stopContainer(containerId: string, timeoutSeconds: number, opts?: CallOptions): Promise<void> {
    return this.containers.stopContainer(containerId, timeoutSeconds, opts);
  }

  async removeContainer(containerId: string, opts?: CallOptions): Promise<void> {
    return this.containers.removeContainer(containerId, opts);
  }

  async listContainers(filter?: ContainerFilter, opts?: CallOptions): Promise<Container[]> {
    return this.containers.listContainers(filter, opts);
  }

  /** Verbose adds info["info"] with the ContainerConfig the container was created with (see sim-containers.ts). */
  async containerStatus(containerId: string, verbose = false, opts?: CallOptions): Promise<ContainerStatusResult> {
    return this.containers.containerStatus(containerId, verbose, opts);
  }

  async updateContainerResources(containerId: string, resources: LinuxContainerResources, opts?: CallOptions): Promise<void> {
    return this.containers.updateContainerResources(containerId, resources, opts);
  }

  async reopenContainerLog(containerId: string, opts?: CallOptions): Promise<void> {
    return this.processes.reopenContainerLog(containerId, opts);
  }

  async execSync(containerId: string, cmd: string[], timeoutSeconds: number, opts?: CallOptions): Promise<ExecSyncResult> {
    return this.processes.execSync(containerId, cmd, timeoutSeconds, opts);
  }

  async containerStats(containerId: string, opts?: CallOptions): Promise<ContainerStats> {
    return this.processes.containerStats(containerId, opts);
  }

  async listContainerStats(filter?: ContainerStatsFilter, opts?: CallOptions): Promise<ContainerStats[]> {
    return this.processes.listContainerStats(filter, opts);
  }

  async listPodSandboxStats(filter?: PodSandboxStatsFilter, opts?: CallOptions): Promise<PodSandboxStats[]> {
    return this.processes.listPodSandboxStats(filter, opts);
  }

  /** Streams (exec, attach, port-forward) are served in-process: see sim-streams.ts. */
  exec = (r: StreamExecRequest, opts?: CallOptions): Promise<string> => this.streams.exec(r, opts);
  attach = (r: StreamAttachRequest, opts?: CallOptions): Promise<string> => this.streams.attach(r, opts);
  portForward = (r: StreamPortForwardRequest, opts?: CallOptions): Promise<string> => this.streams.portForward(r, opts);
  localStream = (url: string): LocalStreamTarget | undefined => this.streams.take(url);
  /** Streams running now (a test control: none may be left after their clients vanish). */
  openStreams = (): number => this.streams.open;

  async checkpointContainer(containerId: string, location: string, timeoutSeconds: number, opts?: CallOptions): Promise<void> {
    return this.processes.checkpointContainer(containerId, location, timeoutSeconds, opts);
  }

  async *getContainerEvents(opts?: CallOptions): AsyncIterable<ContainerEvent> {
    if (!this.gate.open) throw new RuntimeError('Unavailable', DOWN, 'GetContainerEvents');
    if (this.opts.events === false) throw new RuntimeError('Unimplemented', 'method GetContainerEvents not implemented', 'GetContainerEvents');
    const life = this.state.lifetime.signal;
    yield* this.state.events.subscribe(opts?.signal ? AbortSignal.any([opts.signal, life]) : life);
  }

  // ------------------------------------------------------------------ images

  async listImages(filter?: ImageSpec, opts?: CallOptions): Promise<Image[]> {
    return this.imageService.listImages(filter, opts);
  }

  async imageStatus(image: ImageSpec, verbose = false, opts?: CallOptions): Promise<ImageStatusResult> {
    return this.imageService.imageStatus(image, verbose, opts);
  }

  async pullImage(image: ImageSpec, auth?: AuthConfig, sandboxConfig?: PodSandboxConfig, opts?: CallOptions): Promise<string> {
    return this.imageService.pullImage(image, auth, sandboxConfig, opts);
  }

  async removeImage(image: ImageSpec, opts?: CallOptions): Promise<void> {
    return this.imageService.removeImage(image, opts);
  }

  async imageFsInfo(opts?: CallOptions): Promise<ImageFsInfo> {
    return this.imageService.imageFsInfo(opts);
  }

  close(): void {
    if (this.gate.close()) this.state.lifetime.abort();
  }

  // ------------------------------------------------------------------ internals

  /** Common entry of every RPC: availability, injected faults, simulated latency, then catch up with the clock. */
  private async begin(rpc: string, opts?: CallOptions): Promise<void> {
    await this.gate.enter(rpc, opts);
    this.state.settle();
  }

  private conditionTrue(type: string): boolean {
    return this.conditions.find((c) => c.type === type)?.status === true;
  }
}
