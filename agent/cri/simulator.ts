/**
 * An in-process CRI runtime (`--container-runtime-endpoint sim://`): sandboxes and containers with
 * containerd's state machines and error behaviour, but no processes. Containers go CREATED ->
 * RUNNING -> EXITED (exit codes, reasons, start/finish times); behaviours make them crash after N
 * ms, ignore SIGTERM or fail to start; images come from a preloaded set and a pretend registry.
 * All time comes from the injected clock, and IDs are hashes of a counter, so runs are
 * deterministic. Test controls (crash, faults, latency, readiness) are methods beyond RuntimeService.
 *
 * Where containerd 1.6 behaves in a particular way we copy it: removes are idempotent, stopping a
 * CREATED or EXITED container is a no-op, StopPodSandbox kills containers at once (exit 137),
 * a stopped sandbox reports no IP, host-network sandboxes have no IP.
 */
import { createHash } from 'node:crypto';
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { realClock, type Clock } from '../node/clock';
import { RuntimeError } from './errors';
import { EventFanout } from './event-fanout';
import { normalizeImageRef } from './image-ref';
import { resolveExec } from './sim-exec';
import { SimImageStore } from './sim-images';
import { DEFAULT_SIM_IMAGES, type ContainerBehaviour, type SimImageSpec, type SimulatorOptions } from './sim-options';
import { tarArchive } from './sim-tar';
import type { CallOptions, RuntimeService } from './runtime-service';
import { requireV1 } from './version-check';
import type {
  AuthConfig,
  Container,
  ContainerConfig,
  ContainerEvent,
  ContainerEventType,
  ContainerFilter,
  ContainerState,
  ContainerStats,
  ContainerStatsFilter,
  ContainerStatus,
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
  PodSandboxState,
  PodSandboxStatus,
  PodSandboxStatusResult,
  RuntimeCondition,
  RuntimeStatus,
  StringMap,
  VersionInfo,
} from './types';

interface SandboxRec {
  id: string;
  config: PodSandboxConfig;
  runtimeHandler: string;
  state: PodSandboxState;
  createdAt: number;
  /** Assigned pod IP ('' for host network); reported only while READY. */
  ip: string;
  ipOffset: number;
  reservedName: string;
}

interface ContainerRec {
  id: string;
  sandboxId: string;
  config: ContainerConfig;
  image: Image;
  behaviour: ContainerBehaviour;
  state: ContainerState;
  createdAt: number;
  startedAt: number;
  finishedAt: number;
  exitCode: number;
  reason: string;
  message: string;
  /** When a running container will exit by itself (behaviour.exitAfterMs). */
  exitAt?: number;
  resources?: LinuxContainerResources;
  reservedName: string;
  logPath: string;
}

/** A queued failure for the next calls of one RPC. */
interface Fault {
  error: RuntimeError;
  remaining: number;
}

const KILLED = 137;

export class Simulator implements RuntimeService {
  private readonly clock: Clock;
  private readonly name: string;
  private readonly images: SimImageStore;
  private readonly sandboxes = new Map<string, SandboxRec>();
  private readonly containers = new Map<string, ContainerRec>();
  private readonly reserved = new Map<string, string>(); // reserved name -> ID
  private readonly usedIps = new Set<number>();
  private readonly events = new EventFanout<ContainerEvent>();
  private readonly faults = new Map<string, Fault>();
  private readonly latency = new Map<string, number>();
  private readonly lifetime = new AbortController();
  private readonly cidrBase: number;
  private readonly cidrSize: number;
  private seq = 0;
  private available = true;
  private closed = false;
  private conditions: RuntimeCondition[] = [
    { type: 'RuntimeReady', status: true, reason: '', message: '' },
    { type: 'NetworkReady', status: true, reason: '', message: '' },
  ];

  constructor(private readonly opts: SimulatorOptions = {}) {
    this.clock = opts.clock ?? realClock;
    this.name = opts.name ?? 'sim';
    const present: readonly SimImageSpec[] = opts.images ?? DEFAULT_SIM_IMAGES;
    this.images = new SimImageStore(present, opts.registryImages ?? present);
    const [base, size] = parseCidr(opts.podCidr ?? '10.88.0.0/16');
    this.cidrBase = base;
    this.cidrSize = size;
  }

  // ------------------------------------------------------------------ test controls

  /** Makes every call fail Unavailable (false) as if the socket were gone, or recovers (true). Open event streams fail. */
  setAvailable(available: boolean): void {
    this.available = available;
    if (!available) this.events.failAll(new RuntimeError('Unavailable', 'connection refused: runtime is down', 'GetContainerEvents'));
  }

  /** Sets a Status condition (RuntimeReady, NetworkReady) as the runtime would report it. */
  setCondition(type: string, status: boolean, reason = '', message = ''): void {
    this.conditions = this.conditions.filter((c) => c.type !== type).concat({ type, status, reason, message });
  }

  /** The next `times` calls of `rpc` (e.g. "RunPodSandbox") reject with `error`. */
  injectFault(rpc: string, error: RuntimeError, times = 1): void {
    this.faults.set(rpc, { error, remaining: times });
  }

  /** Every call of `rpc` takes `ms` of clock time (0 removes); past the call's timeoutMs it rejects DeadlineExceeded. */
  setLatency(rpc: string, ms: number): void {
    if (ms > 0) this.latency.set(rpc, ms);
    else this.latency.delete(rpc);
  }

  /** Makes an image present locally (as an import would). */
  addImage(spec: SimImageSpec): Image {
    return this.images.add(spec);
  }

  /** Lets PullImage find the image in the pretend registry. */
  publishImage(spec: SimImageSpec): void {
    this.images.publish(spec);
  }

  /** Makes a running container exit now with the code (a crash or OOM kill). Rejects NotFound/FailedPrecondition. */
  crash(containerId: string, exitCode: number, reason?: string): void {
    this.settle();
    const c = this.mustContainer(containerId, 'Crash');
    if (c.state !== 'CONTAINER_RUNNING') throw new RuntimeError('FailedPrecondition', `container ${containerId} is not running`, 'Crash');
    this.exit(c, this.clock.now(), exitCode, reason);
  }

  /** Counts for leak checks. */
  counts(): { sandboxes: number; containers: number; running: number; eventSubscribers: number } {
    this.settle();
    let running = 0;
    for (const c of this.containers.values()) if (c.state === 'CONTAINER_RUNNING') running++;
    return { sandboxes: this.sandboxes.size, containers: this.containers.size, running, eventSubscribers: this.events.size };
  }

  // ------------------------------------------------------------------ RuntimeService: runtime

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
      handlers: [{ name: '', recursiveReadOnlyMounts: false, userNamespaces: false }],
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
    if (runtimeHandler !== '') {
      throw new RuntimeError('NotFound', `failed to get sandbox runtime: no runtime for "${runtimeHandler}" is configured`, 'RunPodSandbox');
    }
    const reservedName = `${m.name}_${m.namespace}_${m.uid}_${m.attempt}`;
    const holder = this.reserved.get(reservedName);
    if (holder) {
      throw new RuntimeError(
        'AlreadyExists',
        `failed to reserve sandbox name "${reservedName}": name "${reservedName}" is reserved for "${holder}"`,
        'RunPodSandbox',
      );
    }
    if (hostNetwork(config) && config.hostname) {
      // containerd puts host-network sandboxes in the host's UTS namespace and runc refuses to set
      // a hostname there; the kubelet therefore sends none for host-network pods.
      throw new RuntimeError(
        'Unknown',
        'failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to set hostname without a private UTS namespace: unknown',
        'RunPodSandbox',
      );
    }
    if (!this.conditionTrue('NetworkReady') && !hostNetwork(config)) {
      throw new RuntimeError('Unknown', 'failed to setup network for sandbox: cni plugin not initialized', 'RunPodSandbox');
    }
    const id = this.newId('sandbox');
    let ip = '';
    let ipOffset = -1;
    if (!hostNetwork(config)) {
      ipOffset = this.allocateIp();
      ip = formatIp(this.cidrBase + ipOffset);
    }
    const rec: SandboxRec = {
      id,
      config: clone(config),
      runtimeHandler,
      state: 'SANDBOX_READY',
      createdAt: this.clock.now(),
      ip,
      ipOffset,
      reservedName,
    };
    this.sandboxes.set(id, rec);
    this.reserved.set(reservedName, id);
    this.emit(id, rec, 'CONTAINER_CREATED_EVENT');
    this.emit(id, rec, 'CONTAINER_STARTED_EVENT');
    return id;
  }

  async stopPodSandbox(podSandboxId: string, opts?: CallOptions): Promise<void> {
    await this.begin('StopPodSandbox', opts);
    const s = this.mustSandbox(podSandboxId, 'StopPodSandbox');
    this.stopSandbox(s);
  }

  async removePodSandbox(podSandboxId: string, opts?: CallOptions): Promise<void> {
    await this.begin('RemovePodSandbox', opts);
    const s = this.sandboxes.get(podSandboxId);
    if (!s) return;
    this.stopSandbox(s);
    for (const c of [...this.containers.values()]) if (c.sandboxId === s.id) this.deleteContainer(c);
    this.sandboxes.delete(s.id);
    this.reserved.delete(s.reservedName);
    this.emit(s.id, s, 'CONTAINER_DELETED_EVENT');
  }

  async podSandboxStatus(podSandboxId: string, _verbose = false, opts?: CallOptions): Promise<PodSandboxStatusResult> {
    await this.begin('PodSandboxStatus', opts);
    const s = this.mustSandbox(podSandboxId, 'PodSandboxStatus');
    return { status: this.sandboxStatus(s), info: {}, containersStatuses: [], timestamp: this.clock.now() };
  }

  async listPodSandbox(filter?: PodSandboxFilter, opts?: CallOptions): Promise<PodSandbox[]> {
    await this.begin('ListPodSandbox', opts);
    const out: PodSandbox[] = [];
    for (const s of this.sandboxes.values()) {
      if (filter?.id && !s.id.startsWith(filter.id)) continue;
      if (filter?.state && s.state !== filter.state) continue;
      if (!labelsMatch(s.config.labels, filter?.labelSelector)) continue;
      out.push({
        id: s.id,
        metadata: { ...s.config.metadata },
        state: s.state,
        createdAt: s.createdAt,
        labels: { ...(s.config.labels ?? {}) },
        annotations: { ...(s.config.annotations ?? {}) },
        runtimeHandler: s.runtimeHandler,
      });
    }
    return out;
  }

  // ------------------------------------------------------------------ containers

  async createContainer(podSandboxId: string, config: ContainerConfig, _sandboxConfig: PodSandboxConfig, opts?: CallOptions): Promise<string> {
    await this.begin('CreateContainer', opts);
    const s = this.mustSandbox(podSandboxId, 'CreateContainer');
    if (s.state !== 'SANDBOX_READY') {
      throw new RuntimeError('FailedPrecondition', `sandbox container "${s.id}" is not running`, 'CreateContainer');
    }
    const name = config.metadata?.name;
    if (!name) throw new RuntimeError('InvalidArgument', 'container config must include metadata with a name', 'CreateContainer');
    const image = this.images.resolve(config.image?.image ?? '');
    if (!image) {
      throw new RuntimeError('NotFound', `failed to resolve image "${config.image?.image ?? ''}": not found`, 'CreateContainer');
    }
    const sm = s.config.metadata;
    const reservedName = `${name}_${sm.name}_${sm.namespace}_${sm.uid}_${config.metadata.attempt}`;
    const holder = this.reserved.get(reservedName);
    if (holder) {
      throw new RuntimeError(
        'AlreadyExists',
        `failed to reserve container name "${reservedName}": name "${reservedName}" is reserved for "${holder}"`,
        'CreateContainer',
      );
    }
    const behaviour = this.behaviourFor(config, s, image);
    if (behaviour.createError !== undefined) throw new RuntimeError('Unknown', behaviour.createError, 'CreateContainer');
    const id = this.newId('container');
    const rec: ContainerRec = {
      id,
      sandboxId: s.id,
      config: clone(config),
      image,
      behaviour,
      state: 'CONTAINER_CREATED',
      createdAt: this.clock.now(),
      startedAt: 0,
      finishedAt: 0,
      exitCode: 0,
      reason: '',
      message: '',
      reservedName,
      logPath: s.config.logDirectory && config.logPath ? path.join(s.config.logDirectory, config.logPath) : '',
    };
    const res = config.linux?.resources;
    if (res) rec.resources = { ...res };
    this.containers.set(id, rec);
    this.reserved.set(reservedName, id);
    this.emit(id, s, 'CONTAINER_CREATED_EVENT');
    return id;
  }

  async startContainer(containerId: string, opts?: CallOptions): Promise<void> {
    await this.begin('StartContainer', opts);
    const c = this.mustContainer(containerId, 'StartContainer');
    if (c.state !== 'CONTAINER_CREATED') {
      throw new RuntimeError('FailedPrecondition', `container is in ${c.state} state`, 'StartContainer');
    }
    const s = this.sandboxes.get(c.sandboxId);
    if (!s || s.state !== 'SANDBOX_READY') {
      throw new RuntimeError('FailedPrecondition', `sandbox container "${c.sandboxId}" is not running`, 'StartContainer');
    }
    const now = this.clock.now();
    const b = c.behaviour;
    if (b.startError !== undefined) this.failStart(c, s, now, b.startError);
    if (this.opts.writeLogs !== false && c.logPath) {
      try {
        await this.writeLog(c, now);
      } catch (e) {
        this.failStart(c, s, now, `failed to create container log ${c.logPath}: ${(e as Error).message}`);
      }
      // The container may have been removed or started by a concurrent call meanwhile.
      if (this.containers.get(c.id) !== c || c.state !== 'CONTAINER_CREATED') {
        throw new RuntimeError('FailedPrecondition', `container is in ${c.state} state`, 'StartContainer');
      }
    }
    c.state = 'CONTAINER_RUNNING';
    c.startedAt = now;
    if (b.exitAfterMs !== undefined) {
      c.exitAt = now + Math.max(0, b.exitAfterMs);
      this.wakeAt(c.exitAt);
    }
    this.emit(c.id, s, 'CONTAINER_STARTED_EVENT');
    this.settle();
  }

  /** A failed start leaves the container EXITED with 128 and the error as its message, as runc failures do; always throws. */
  private failStart(c: ContainerRec, s: SandboxRec, now: number, error: string): never {
    c.state = 'CONTAINER_EXITED';
    c.startedAt = 0;
    c.finishedAt = now;
    c.exitCode = 128;
    c.reason = 'StartError';
    c.message = error;
    this.emit(c.id, s, 'CONTAINER_STOPPED_EVENT');
    throw new RuntimeError('Unknown', `failed to start containerd task "${c.id}": ${error}: unknown`, 'StartContainer');
  }

  async stopContainer(containerId: string, timeoutSeconds: number, opts?: CallOptions): Promise<void> {
    await this.begin('StopContainer', opts);
    const c = this.mustContainer(containerId, 'StopContainer');
    if (c.state !== 'CONTAINER_RUNNING') return;
    const graceMs = Math.max(0, timeoutSeconds) * 1000;
    const delay = c.behaviour.stopDelayMs ?? 0;
    if (graceMs === 0) {
      this.exit(c, this.clock.now(), KILLED);
      return;
    }
    const waitMs = Math.min(delay, graceMs);
    if (waitMs > 0) {
      const exitAt = this.clock.now() + waitMs;
      await this.clock.sleep(waitMs, opts?.signal);
      this.settle();
      if (c.state !== 'CONTAINER_RUNNING') return;
      this.exit(c, Math.min(exitAt, this.clock.now()), delay >= graceMs ? KILLED : (c.behaviour.stopExitCode ?? 143));
      return;
    }
    this.exit(c, this.clock.now(), c.behaviour.stopExitCode ?? 143);
  }

  async removeContainer(containerId: string, opts?: CallOptions): Promise<void> {
    await this.begin('RemoveContainer', opts);
    const c = this.containers.get(containerId);
    if (!c) return;
    if (c.state === 'CONTAINER_RUNNING') this.exit(c, this.clock.now(), KILLED);
    this.deleteContainer(c);
  }

  async listContainers(filter?: ContainerFilter, opts?: CallOptions): Promise<Container[]> {
    await this.begin('ListContainers', opts);
    const out: Container[] = [];
    for (const c of this.containers.values()) {
      if (filter?.id && !c.id.startsWith(filter.id)) continue;
      if (filter?.state && c.state !== filter.state) continue;
      if (filter?.podSandboxId && !c.sandboxId.startsWith(filter.podSandboxId)) continue;
      if (!labelsMatch(c.config.labels, filter?.labelSelector)) continue;
      out.push({
        id: c.id,
        podSandboxId: c.sandboxId,
        metadata: { ...c.config.metadata },
        image: { image: c.config.image.image },
        imageRef: imageRef(c.image),
        imageId: c.image.id,
        state: c.state,
        createdAt: c.createdAt,
        labels: { ...(c.config.labels ?? {}) },
        annotations: { ...(c.config.annotations ?? {}) },
      });
    }
    return out;
  }

  async containerStatus(containerId: string, _verbose = false, opts?: CallOptions): Promise<ContainerStatusResult> {
    await this.begin('ContainerStatus', opts);
    return { status: this.containerStatusOf(this.mustContainer(containerId, 'ContainerStatus')), info: {} };
  }

  async updateContainerResources(containerId: string, resources: LinuxContainerResources, opts?: CallOptions): Promise<void> {
    await this.begin('UpdateContainerResources', opts);
    const c = this.mustContainer(containerId, 'UpdateContainerResources');
    if (c.state === 'CONTAINER_EXITED') {
      throw new RuntimeError('FailedPrecondition', `container "${c.id}" is in exited state`, 'UpdateContainerResources');
    }
    c.resources = { ...(c.resources ?? {}), ...resources };
  }

  async reopenContainerLog(containerId: string, opts?: CallOptions): Promise<void> {
    await this.begin('ReopenContainerLog', opts);
    const c = this.mustContainer(containerId, 'ReopenContainerLog');
    if (c.state !== 'CONTAINER_RUNNING') throw new RuntimeError('FailedPrecondition', 'container is not running', 'ReopenContainerLog');
  }

  async execSync(containerId: string, cmd: string[], timeoutSeconds: number, opts?: CallOptions): Promise<ExecSyncResult> {
    await this.begin('ExecSync', opts);
    const c = this.mustContainer(containerId, 'ExecSync');
    if (c.state !== 'CONTAINER_RUNNING') {
      throw new RuntimeError('FailedPrecondition', `container ${c.id} is not running (state ${c.state})`, 'ExecSync');
    }
    const s = this.sandboxes.get(c.sandboxId);
    const result = resolveExec(
      {
        containerId: c.id,
        containerName: c.config.metadata.name,
        podName: s?.config.metadata.name ?? '',
        podNamespace: s?.config.metadata.namespace ?? '',
        image: c.image.repoTags[0] ?? c.image.id,
        cmd: [...cmd],
      },
      c.behaviour.exec,
      this.opts.exec,
    );
    if (result.error !== undefined) throw new RuntimeError('Unknown', result.error, 'ExecSync');
    const duration = result.durationMs ?? 0;
    const limit = timeoutSeconds > 0 ? timeoutSeconds * 1000 : Infinity;
    if (duration > 0) {
      const ok = await this.clock.sleep(Math.min(duration, limit), opts?.signal);
      if (!ok) throw new RuntimeError('Canceled', 'exec canceled', 'ExecSync');
    }
    if (duration > limit) {
      throw new RuntimeError('DeadlineExceeded', `timeout ${timeoutSeconds}s exceeded: context deadline exceeded`, 'ExecSync');
    }
    return { stdout: toBuffer(result.stdout), stderr: toBuffer(result.stderr), exitCode: result.exitCode ?? 0 };
  }

  async containerStats(containerId: string, opts?: CallOptions): Promise<ContainerStats> {
    await this.begin('ContainerStats', opts);
    return this.statsOf(this.mustContainer(containerId, 'ContainerStats'));
  }

  async listContainerStats(filter?: ContainerStatsFilter, opts?: CallOptions): Promise<ContainerStats[]> {
    await this.begin('ListContainerStats', opts);
    const out: ContainerStats[] = [];
    for (const c of this.containers.values()) {
      if (filter?.id && !c.id.startsWith(filter.id)) continue;
      if (filter?.podSandboxId && !c.sandboxId.startsWith(filter.podSandboxId)) continue;
      if (!labelsMatch(c.config.labels, filter?.labelSelector)) continue;
      // containerd lists stats of running containers only.
      if (c.state !== 'CONTAINER_RUNNING') continue;
      out.push(this.statsOf(c));
    }
    return out;
  }

  async checkpointContainer(containerId: string, location: string, _timeoutSeconds: number, opts?: CallOptions): Promise<void> {
    await this.begin('CheckpointContainer', opts);
    if (this.opts.checkpoint === false) {
      throw new RuntimeError('Unimplemented', 'method CheckpointContainer not implemented', 'CheckpointContainer');
    }
    const c = this.mustContainer(containerId, 'CheckpointContainer');
    if (c.state !== 'CONTAINER_RUNNING') {
      throw new RuntimeError('FailedPrecondition', `container ${c.id} is not running`, 'CheckpointContainer');
    }
    if (!path.isAbsolute(location)) {
      throw new RuntimeError('InvalidArgument', `checkpoint location ${JSON.stringify(location)} must be an absolute path`, 'CheckpointContainer');
    }
    const s = this.sandboxes.get(c.sandboxId);
    const mtime = Math.floor(this.clock.now() / 1000);
    const archive = tarArchive([
      {
        name: 'config.dump',
        mtime,
        data: JSON.stringify({
          id: c.id,
          name: c.config.metadata.name,
          rootfsImage: c.image.repoTags[0] ?? '',
          rootfsImageRef: c.image.id,
          createdTime: new Date(c.createdAt).toISOString(),
          checkpointedTime: new Date(this.clock.now()).toISOString(),
          runtime: this.opts.runtimeName ?? 'svc-sim',
        }),
      },
      {
        name: 'spec.dump',
        mtime,
        data: JSON.stringify({
          annotations: { ...(c.config.annotations ?? {}) },
          process: { args: [...(c.config.command ?? []), ...(c.config.args ?? [])] },
          sandbox: s ? { ...s.config.metadata } : undefined,
        }),
      },
    ]);
    try {
      await writeFile(location, archive, { mode: 0o600 });
    } catch (e) {
      throw new RuntimeError('Unknown', `failed to write checkpoint archive ${location}: ${(e as Error).message}`, 'CheckpointContainer');
    }
  }

  async *getContainerEvents(opts?: CallOptions): AsyncIterable<ContainerEvent> {
    if (this.closed || !this.available) {
      throw new RuntimeError('Unavailable', 'connection refused: runtime is down', 'GetContainerEvents');
    }
    if (this.opts.events === false) {
      throw new RuntimeError('Unimplemented', 'method GetContainerEvents not implemented', 'GetContainerEvents');
    }
    yield* this.events.subscribe(mergeSignals(opts?.signal, this.lifetime.signal));
  }

  // ------------------------------------------------------------------ images

  async listImages(filter?: ImageSpec, opts?: CallOptions): Promise<Image[]> {
    await this.begin('ListImages', opts);
    return this.images.list(filter);
  }

  async imageStatus(image: ImageSpec, _verbose = false, opts?: CallOptions): Promise<ImageStatusResult> {
    await this.begin('ImageStatus', opts);
    const found = this.images.resolve(image.image);
    return found ? { image: found, info: {} } : { info: {} };
  }

  async pullImage(image: ImageSpec, _auth?: AuthConfig, _sandboxConfig?: PodSandboxConfig, opts?: CallOptions): Promise<string> {
    await this.begin('PullImage', opts);
    return imageRef(this.images.pull(image.image));
  }

  async removeImage(image: ImageSpec, opts?: CallOptions): Promise<void> {
    await this.begin('RemoveImage', opts);
    const found = this.images.resolve(image.image);
    if (!found) return;
    for (const c of this.containers.values()) {
      if (c.image.id === found.id) {
        throw new RuntimeError('FailedPrecondition', `image "${image.image}" is in use by container ${c.id}`, 'RemoveImage');
      }
    }
    this.images.remove(image.image);
  }

  async imageFsInfo(opts?: CallOptions): Promise<ImageFsInfo> {
    await this.begin('ImageFsInfo', opts);
    const now = this.clock.now();
    const root = this.opts.root ?? '/var/lib/svc-sim';
    const images = this.images.list();
    const used = images.reduce((n, i) => n + i.size, 0);
    let layers = 0;
    for (const c of this.containers.values()) layers += writableBytes(c);
    return {
      imageFilesystems: [{ timestamp: now, mountpoint: path.join(root, 'images'), usedBytes: used, inodesUsed: images.length * 64 }],
      containerFilesystems: [{ timestamp: now, mountpoint: path.join(root, 'snapshots'), usedBytes: layers, inodesUsed: this.containers.size * 8 }],
    };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.lifetime.abort();
  }

  // ------------------------------------------------------------------ internals

  /** Common entry of every RPC: availability, injected faults, simulated latency, then catch up with the clock. */
  private async begin(rpc: string, opts?: CallOptions): Promise<void> {
    if (this.closed || !this.available) throw new RuntimeError('Unavailable', 'connection refused: runtime is down', rpc);
    if (opts?.signal?.aborted) throw new RuntimeError('Canceled', `${rpc} canceled`, rpc);
    const fault = this.faults.get(rpc);
    if (fault) {
      if (--fault.remaining <= 0) this.faults.delete(rpc);
      throw fault.error;
    }
    const delay = this.latency.get(rpc) ?? 0;
    if (delay > 0) {
      const limit = opts?.timeoutMs;
      const waited = await this.clock.sleep(limit !== undefined ? Math.min(limit, delay) : delay, opts?.signal);
      if (!waited) throw new RuntimeError('Canceled', `${rpc} canceled`, rpc);
      if (limit !== undefined && limit < delay) throw new RuntimeError('DeadlineExceeded', 'context deadline exceeded', rpc);
    }
    this.settle();
  }

  /** Applies every self-exit due by now (containers whose exitAfterMs elapsed), at their due time. */
  private settle(): void {
    const now = this.clock.now();
    for (const c of this.containers.values()) {
      if (c.state === 'CONTAINER_RUNNING' && c.exitAt !== undefined && c.exitAt <= now) {
        this.exit(c, c.exitAt, c.behaviour.exitCode ?? 0, c.behaviour.exitReason);
      }
    }
  }

  /** Schedules a settle at clock time `at`, so events go out without anyone calling in. */
  private wakeAt(at: number): void {
    const ms = at - this.clock.now();
    void this.clock.sleep(Math.max(0, ms), this.lifetime.signal).then((ok) => {
      if (ok && !this.closed) this.settle();
    });
  }

  private exit(c: ContainerRec, at: number, exitCode: number, reason?: string): void {
    c.state = 'CONTAINER_EXITED';
    c.finishedAt = at;
    c.exitCode = exitCode;
    c.reason = reason ?? (exitCode === 0 ? 'Completed' : 'Error');
    delete c.exitAt;
    const s = this.sandboxes.get(c.sandboxId);
    if (s) this.emit(c.id, s, 'CONTAINER_STOPPED_EVENT');
  }

  private stopSandbox(s: SandboxRec): void {
    this.settle();
    for (const c of this.containers.values()) {
      if (c.sandboxId === s.id && c.state === 'CONTAINER_RUNNING') this.exit(c, this.clock.now(), KILLED);
    }
    if (s.state === 'SANDBOX_READY') {
      s.state = 'SANDBOX_NOTREADY';
      if (s.ipOffset >= 0) this.usedIps.delete(s.ipOffset);
      s.ipOffset = -1;
      this.emit(s.id, s, 'CONTAINER_STOPPED_EVENT');
    }
  }

  private deleteContainer(c: ContainerRec): void {
    this.containers.delete(c.id);
    this.reserved.delete(c.reservedName);
    const s = this.sandboxes.get(c.sandboxId);
    if (s) this.emit(c.id, s, 'CONTAINER_DELETED_EVENT');
  }

  private emit(id: string, s: SandboxRec, type: ContainerEventType): void {
    if (this.events.size === 0) return;
    const containersStatuses: ContainerStatus[] = [];
    for (const c of this.containers.values()) if (c.sandboxId === s.id) containersStatuses.push(this.containerStatusOf(c));
    this.events.publish({ containerId: id, type, createdAt: this.clock.now(), podSandboxStatus: this.sandboxStatus(s), containersStatuses });
  }

  private mustSandbox(id: string, rpc: string): SandboxRec {
    const s = this.sandboxes.get(id);
    if (!s) throw new RuntimeError('NotFound', `an error occurred when try to find sandbox "${id}": not found`, rpc);
    return s;
  }

  private mustContainer(id: string, rpc: string): ContainerRec {
    const c = this.containers.get(id);
    if (!c) throw new RuntimeError('NotFound', `an error occurred when try to find container "${id}": not found`, rpc);
    return c;
  }

  private conditionTrue(type: string): boolean {
    return this.conditions.find((c) => c.type === type)?.status === true;
  }

  private newId(kind: string): string {
    return createHash('sha256').update(`${this.name}/${kind}/${++this.seq}`).digest('hex');
  }

  private allocateIp(): number {
    // Offsets 0 (network) and 1 (gateway) and the broadcast address are not handed out.
    for (let off = 2; off < this.cidrSize - 1; off++) {
      if (!this.usedIps.has(off)) {
        this.usedIps.add(off);
        return off;
      }
    }
    throw new RuntimeError('ResourceExhausted', 'failed to allocate for range 0: no IP addresses available in range set', 'RunPodSandbox');
  }

  private behaviourFor(config: ContainerConfig, s: SandboxRec, image: Image): ContainerBehaviour {
    const asWritten = config.image.image;
    let norm = asWritten;
    try {
      norm = normalizeImageRef(asWritten);
    } catch {
      // keep as written
    }
    for (const b of this.opts.behaviours ?? []) {
      if (b.image !== undefined && !sameImage(b.image, asWritten, norm, image)) continue;
      if (b.name !== undefined && b.name !== config.metadata.name) continue;
      if (b.podName !== undefined && b.podName !== s.config.metadata.name) continue;
      if (b.podNamespace !== undefined && b.podNamespace !== s.config.metadata.namespace) continue;
      return b;
    }
    return {};
  }

  private sandboxStatus(s: SandboxRec): PodSandboxStatus {
    const status: PodSandboxStatus = {
      id: s.id,
      metadata: { ...s.config.metadata },
      state: s.state,
      createdAt: s.createdAt,
      ip: s.state === 'SANDBOX_READY' ? s.ip : '',
      additionalIps: [],
      labels: { ...(s.config.labels ?? {}) },
      annotations: { ...(s.config.annotations ?? {}) },
      runtimeHandler: s.runtimeHandler,
    };
    // Absent modes mean POD, as on the wire.
    const ns = s.config.linux?.securityContext?.namespaceOptions;
    status.namespaceOptions = {};
    if (ns?.network && ns.network !== 'POD') status.namespaceOptions.network = ns.network;
    if (ns?.pid && ns.pid !== 'POD') status.namespaceOptions.pid = ns.pid;
    if (ns?.ipc && ns.ipc !== 'POD') status.namespaceOptions.ipc = ns.ipc;
    return status;
  }

  private containerStatusOf(c: ContainerRec): ContainerStatus {
    const status: ContainerStatus = {
      id: c.id,
      metadata: { ...c.config.metadata },
      state: c.state,
      createdAt: c.createdAt,
      startedAt: c.startedAt,
      finishedAt: c.finishedAt,
      exitCode: c.exitCode,
      // As containerd: the image's first tag, and its digest as the reference.
      image: { image: c.image.repoTags[0] ?? c.image.id },
      imageRef: imageRef(c.image),
      imageId: c.image.id,
      reason: c.reason,
      message: c.message,
      labels: { ...(c.config.labels ?? {}) },
      annotations: { ...(c.config.annotations ?? {}) },
      mounts: (c.config.mounts ?? []).map((m) => ({ ...m })),
      logPath: c.logPath,
      stopSignal: c.config.stopSignal ?? 'SIGNAL_RUNTIME_DEFAULT',
    };
    if (c.resources) status.resources = { ...c.resources };
    const sc = c.config.linux?.securityContext;
    status.user = { uid: sc?.runAsUser ?? c.image.uid ?? 0, gid: sc?.runAsGroup ?? 0, supplementalGroups: [...(sc?.supplementalGroups ?? [])] };
    return status;
  }

  private statsOf(c: ContainerRec): ContainerStats {
    const now = this.clock.now();
    const running = c.state === 'CONTAINER_RUNNING';
    const nanoCores = c.behaviour.cpuNanoCores ?? 10_000_000;
    const ranMs = c.startedAt === 0 ? 0 : (running ? now : c.finishedAt) - c.startedAt;
    const ws = running ? (c.behaviour.memoryBytes ?? 4 * 1024 * 1024) : 0;
    const limit = c.resources?.memoryLimitInBytes ?? 0;
    const stats: ContainerStats = {
      id: c.id,
      metadata: { ...c.config.metadata },
      labels: { ...(c.config.labels ?? {}) },
      annotations: { ...(c.config.annotations ?? {}) },
      cpu: { timestamp: now, usageCoreNanoSeconds: Math.round((nanoCores * Math.max(0, ranMs)) / 1000), usageNanoCores: running ? nanoCores : 0 },
      memory: { timestamp: now, workingSetBytes: ws, usageBytes: ws, rssBytes: ws, pageFaults: 0, majorPageFaults: 0 },
      writableLayer: {
        timestamp: now,
        mountpoint: path.join(this.opts.root ?? '/var/lib/svc-sim', 'snapshots'),
        usedBytes: writableBytes(c),
        inodesUsed: 8,
      },
    };
    if (limit > 0 && stats.memory) stats.memory.availableBytes = Math.max(0, limit - ws);
    return stats;
  }

  private async writeLog(c: ContainerRec, now: number): Promise<void> {
    const ts = new Date(now).toISOString().replace('Z', '000000Z');
    const lines = (c.behaviour.logLines ?? []).map((l) => `${ts} stdout F ${l}\n`).join('');
    await mkdir(path.dirname(c.logPath), { recursive: true });
    await appendFile(c.logPath, lines);
  }
}

/** Whether a behaviour's image selector names the container's image (as written, normalised, a tag or the ID). */
function sameImage(selector: string, asWritten: string, norm: string, image: Image): boolean {
  if (selector === asWritten || selector === norm || selector === image.id) return true;
  try {
    const n = normalizeImageRef(selector);
    return n === norm || image.repoTags.includes(n);
  } catch {
    return false;
  }
}

function hostNetwork(config: PodSandboxConfig): boolean {
  return config.linux?.securityContext?.namespaceOptions?.network === 'NODE';
}

function imageRef(i: Image): string {
  return i.repoDigests[0] ?? i.id;
}

function writableBytes(c: ContainerRec): number {
  return c.startedAt === 0 ? 0 : 4096;
}

function labelsMatch(labels: StringMap | undefined, selector: StringMap | undefined): boolean {
  if (!selector) return true;
  for (const [k, v] of Object.entries(selector)) if (labels?.[k] !== v) return false;
  return true;
}

function toBuffer(v: string | Buffer | undefined): Buffer {
  if (v === undefined) return Buffer.alloc(0);
  return typeof v === 'string' ? Buffer.from(v, 'utf8') : v;
}

function clone<T>(v: T): T {
  return structuredClone(v);
}

function parseCidr(cidr: string): [number, number] {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(cidr);
  if (!m) throw new Error(`simulator podCidr ${JSON.stringify(cidr)} is not an IPv4 CIDR`);
  const octets = m.slice(1, 5).map(Number);
  const bits = Number(m[5]);
  if (octets.some((o) => o > 255) || bits < 8 || bits > 30) throw new Error(`simulator podCidr ${cidr} is out of range (/8../30)`);
  const ip = octets.reduce((n, o) => n * 256 + o, 0);
  const size = 2 ** (32 - bits);
  return [ip - (ip % size), size];
}

function formatIp(n: number): string {
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
}

/** A signal that aborts when either does. */
function mergeSignals(a: AbortSignal | undefined, b: AbortSignal): AbortSignal {
  return a ? AbortSignal.any([a, b]) : b;
}
