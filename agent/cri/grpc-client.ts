/**
 * RuntimeService over gRPC (containerd, CRI-O): dials the unix sockets of
 * containerRuntimeEndpoint and imageServiceEndpoint (one channel when they are equal), converts
 * between the agent's types and the wire, applies a deadline to every unary call and maps every
 * failure through ./errors. grpc-js reconnects by itself; the reconnect back-off is capped at 3 s
 * as the kubelet's CRI client does, so a restarted runtime is seen within seconds.
 */
import * as grpc from '@grpc/grpc-js';
import { containerConfigToWire, containerFilterToWire, containerFromWire, containerStatusResultFromWire, execSyncResultFromWire } from './convert-container';
import { resourcesToWire, imageSpecToWire } from './convert-common';
import {
  authToWire,
  eventFromWire,
  imageFromWire,
  imageFsInfoFromWire,
  statsFilterToWire,
  statsFromWire,
  statusFromWire,
  versionFromWire,
} from './convert-runtime';
import { sandboxConfigToWire, sandboxFilterToWire, sandboxFromWire, sandboxStatusResultFromWire } from './convert-sandbox';
import { sandboxStatsFilterToWire, sandboxStatsFromWire } from './convert-sandbox-stats';
import { loadCriProto, type CriProto } from './cri-proto';
import { parseEndpoint, endpointText, type Endpoint } from './endpoint';
import { RuntimeError, fromGrpcError } from './errors';
import type { CallOptions, RuntimeService } from './runtime-service';
import type { StreamAttachRequest, StreamExecRequest, StreamPortForwardRequest } from './stream-types';
import type {
  AuthConfig,
  Container,
  ContainerConfig,
  ContainerEvent,
  ContainerFilter,
  ContainerStats,
  ContainerStatsFilter,
  PodSandboxStats,
  PodSandboxStatsFilter,
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
  PodSandboxStatusResult,
  RuntimeStatus,
  VersionInfo,
} from './types';
import { connectError, formatDuration, requireV1 } from './version-check';
import type {
  WContainer,
  WContainerEventResponse,
  WContainerStats,
  WPodSandboxStats,
  WContainerStatusResponse,
  WExecSyncResponse,
  WImage,
  WImageFsInfoResponse,
  WPodSandbox,
  WPodSandboxStatusResponse,
  WStatusResponse,
  WVersionResponse,
} from './wire-types';

export interface GrpcRuntimeOptions {
  /** Deadline of most calls (the kubelet's runtimeRequestTimeout, default 2 min). */
  timeoutMs?: number;
  /** Deadline of PullImage (default 30 min: the kubelet sets none, but a wedged registry must not hold a worker forever). */
  pullImageTimeoutMs?: number;
  /** How long connect() waits for the socket to answer Version (default 10 s). */
  connectTimeoutMs?: number;
  /** Path of proto/cri/runtime/v1/api.proto (found next to the package by default). */
  protoPath?: string;
  /** Largest message either way (default 16 MiB, as the kubelet). */
  maxMessageBytes?: number;
}

/** The Version request's version field: what the kubelet sends. */
const CLIENT_CRI_VERSION = '0.1.0';

type Callback = (err: grpc.ServiceError | null, res?: unknown) => void;
type UnaryMethod = (req: object, md: grpc.Metadata, opts: grpc.CallOptions, cb: Callback) => grpc.ClientUnaryCall;
type StreamMethod = (req: object, md: grpc.Metadata, opts: grpc.CallOptions) => grpc.ClientReadableStream<unknown>;

interface Clients {
  runtime: grpc.Client;
  image: grpc.Client;
}

/** The URL of a streaming RPC's answer; an answer without one is the runtime's fault. */
function streamUrl(w: { url?: string }, rpc: string): string {
  if (!w.url) throw new RuntimeError('Internal', `${rpc} answered without a stream URL`, rpc);
  return w.url;
}

export class GrpcRuntimeService implements RuntimeService {
  private readonly runtimeEndpoint: Endpoint & { kind: 'unix' };
  private readonly imageEndpoint: Endpoint & { kind: 'unix' };
  private readonly timeoutMs: number;
  private readonly pullTimeoutMs: number;
  private readonly connectTimeoutMs: number;
  private clients: Clients | undefined;
  private closed = false;

  constructor(
    runtimeEndpoint: string,
    imageEndpoint: string = runtimeEndpoint,
    private readonly opts: GrpcRuntimeOptions = {},
  ) {
    this.runtimeEndpoint = unixOnly(runtimeEndpoint);
    this.imageEndpoint = unixOnly(imageEndpoint || runtimeEndpoint);
    this.timeoutMs = opts.timeoutMs ?? 120_000;
    this.pullTimeoutMs = opts.pullImageTimeoutMs ?? 30 * 60_000;
    this.connectTimeoutMs = opts.connectTimeoutMs ?? 10_000;
  }

  /** The runtime endpoint as given to messages (unix:///path). */
  get endpoint(): string {
    return endpointText(this.runtimeEndpoint);
  }

  async connect(opts?: CallOptions): Promise<VersionInfo> {
    const timeoutMs = opts?.timeoutMs ?? this.connectTimeoutMs;
    let v: VersionInfo;
    try {
      const w = await this.unary<WVersionResponse>('runtime', 'Version', { version: CLIENT_CRI_VERSION }, { ...opts, timeoutMs }, this.timeoutMs, true);
      v = versionFromWire(w);
    } catch (e) {
      throw connectError(e, this.endpoint, timeoutMs);
    }
    requireV1(v, this.endpoint);
    if (this.imageEndpoint.path !== this.runtimeEndpoint.path) await this.waitForImageService(timeoutMs);
    return v;
  }

  async version(opts?: CallOptions): Promise<VersionInfo> {
    return versionFromWire(await this.unary<WVersionResponse>('runtime', 'Version', { version: CLIENT_CRI_VERSION }, opts));
  }

  async status(verbose = false, opts?: CallOptions): Promise<RuntimeStatus> {
    return statusFromWire(await this.unary<WStatusResponse>('runtime', 'Status', { verbose }, opts));
  }

  async runPodSandbox(config: PodSandboxConfig, runtimeHandler = '', opts?: CallOptions): Promise<string> {
    const r = await this.unary<{ pod_sandbox_id?: string }>(
      'runtime',
      'RunPodSandbox',
      { config: sandboxConfigToWire(config), runtime_handler: runtimeHandler },
      opts,
    );
    return r.pod_sandbox_id ?? '';
  }

  async stopPodSandbox(podSandboxId: string, opts?: CallOptions): Promise<void> {
    await this.unary('runtime', 'StopPodSandbox', { pod_sandbox_id: podSandboxId }, opts);
  }

  async removePodSandbox(podSandboxId: string, opts?: CallOptions): Promise<void> {
    await this.unary('runtime', 'RemovePodSandbox', { pod_sandbox_id: podSandboxId }, opts);
  }

  async podSandboxStatus(podSandboxId: string, verbose = false, opts?: CallOptions): Promise<PodSandboxStatusResult> {
    const w = await this.unary<WPodSandboxStatusResponse>('runtime', 'PodSandboxStatus', { pod_sandbox_id: podSandboxId, verbose }, opts);
    if (!w.status) throw new RuntimeError('Internal', `PodSandboxStatus of ${podSandboxId} answered without a status`, 'PodSandboxStatus');
    return sandboxStatusResultFromWire(w);
  }

  async listPodSandbox(filter?: PodSandboxFilter, opts?: CallOptions): Promise<PodSandbox[]> {
    const w = await this.unary<{ items?: WPodSandbox[] }>('runtime', 'ListPodSandbox', { filter: filter ? sandboxFilterToWire(filter) : undefined }, opts);
    return (w.items ?? []).map(sandboxFromWire);
  }

  async createContainer(podSandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig, opts?: CallOptions): Promise<string> {
    const r = await this.unary<{ container_id?: string }>(
      'runtime',
      'CreateContainer',
      { pod_sandbox_id: podSandboxId, config: containerConfigToWire(config), sandbox_config: sandboxConfigToWire(sandboxConfig) },
      opts,
    );
    return r.container_id ?? '';
  }

  async startContainer(containerId: string, opts?: CallOptions): Promise<void> {
    await this.unary('runtime', 'StartContainer', { container_id: containerId }, opts);
  }

  async stopContainer(containerId: string, timeoutSeconds: number, opts?: CallOptions): Promise<void> {
    // As the kubelet: the deadline covers the grace period plus the usual call time.
    await this.unary('runtime', 'StopContainer', { container_id: containerId, timeout: timeoutSeconds }, opts, this.timeoutMs + timeoutSeconds * 1000);
  }

  async removeContainer(containerId: string, opts?: CallOptions): Promise<void> {
    await this.unary('runtime', 'RemoveContainer', { container_id: containerId }, opts);
  }

  async listContainers(filter?: ContainerFilter, opts?: CallOptions): Promise<Container[]> {
    const w = await this.unary<{ containers?: WContainer[] }>(
      'runtime',
      'ListContainers',
      { filter: filter ? containerFilterToWire(filter) : undefined },
      opts,
    );
    return (w.containers ?? []).map(containerFromWire);
  }

  async containerStatus(containerId: string, verbose = false, opts?: CallOptions): Promise<ContainerStatusResult> {
    const w = await this.unary<WContainerStatusResponse>('runtime', 'ContainerStatus', { container_id: containerId, verbose }, opts);
    if (!w.status) throw new RuntimeError('Internal', `ContainerStatus of ${containerId} answered without a status`, 'ContainerStatus');
    return containerStatusResultFromWire(w);
  }

  async updateContainerResources(containerId: string, resources: LinuxContainerResources, opts?: CallOptions): Promise<void> {
    await this.unary('runtime', 'UpdateContainerResources', { container_id: containerId, linux: resourcesToWire(resources) }, opts);
  }

  async reopenContainerLog(containerId: string, opts?: CallOptions): Promise<void> {
    await this.unary('runtime', 'ReopenContainerLog', { container_id: containerId }, opts);
  }

  async execSync(containerId: string, cmd: string[], timeoutSeconds: number, opts?: CallOptions): Promise<ExecSyncResult> {
    const w = await this.unary<WExecSyncResponse>(
      'runtime',
      'ExecSync',
      { container_id: containerId, cmd, timeout: timeoutSeconds },
      opts,
      this.timeoutMs + Math.max(0, timeoutSeconds) * 1000,
    );
    return execSyncResultFromWire(w);
  }

  async containerStats(containerId: string, opts?: CallOptions): Promise<ContainerStats> {
    const w = await this.unary<{ stats?: WContainerStats | null }>('runtime', 'ContainerStats', { container_id: containerId }, opts);
    if (!w.stats) throw new RuntimeError('Internal', `ContainerStats of ${containerId} answered without stats`, 'ContainerStats');
    return statsFromWire(w.stats);
  }

  async listContainerStats(filter?: ContainerStatsFilter, opts?: CallOptions): Promise<ContainerStats[]> {
    const w = await this.unary<{ stats?: WContainerStats[] }>(
      'runtime',
      'ListContainerStats',
      { filter: filter ? statsFilterToWire(filter) : undefined },
      opts,
    );
    return (w.stats ?? []).map(statsFromWire);
  }

  async listPodSandboxStats(filter?: PodSandboxStatsFilter, opts?: CallOptions): Promise<PodSandboxStats[]> {
    const w = await this.unary<{ stats?: WPodSandboxStats[] }>('runtime', 'ListPodSandboxStats', { filter: filter ? sandboxStatsFilterToWire(filter) : undefined }, opts);
    return (w.stats ?? []).map(sandboxStatsFromWire);
  }

  async checkpointContainer(containerId: string, location: string, timeoutSeconds: number, opts?: CallOptions): Promise<void> {
    await this.unary(
      'runtime',
      'CheckpointContainer',
      { container_id: containerId, location, timeout: timeoutSeconds },
      opts,
      this.timeoutMs + Math.max(0, timeoutSeconds) * 1000,
    );
  }

  async exec(r: StreamExecRequest, opts?: CallOptions): Promise<string> {
    const w = await this.unary<{ url?: string }>('runtime', 'Exec', { container_id: r.containerId, cmd: r.cmd, tty: r.tty, stdin: r.stdin, stdout: r.stdout, stderr: r.stderr }, opts);
    return streamUrl(w, 'Exec');
  }

  async attach(r: StreamAttachRequest, opts?: CallOptions): Promise<string> {
    const w = await this.unary<{ url?: string }>('runtime', 'Attach', { container_id: r.containerId, tty: r.tty, stdin: r.stdin, stdout: r.stdout, stderr: r.stderr }, opts);
    return streamUrl(w, 'Attach');
  }

  async portForward(r: StreamPortForwardRequest, opts?: CallOptions): Promise<string> {
    const w = await this.unary<{ url?: string }>('runtime', 'PortForward', { pod_sandbox_id: r.podSandboxId, port: r.ports }, opts);
    return streamUrl(w, 'PortForward');
  }

  async *getContainerEvents(opts?: CallOptions): AsyncIterable<ContainerEvent> {
    const signal = opts?.signal;
    if (signal?.aborted) return;
    const method = this.method<StreamMethod>('runtime', 'GetContainerEvents');
    // No deadline: the stream lives as long as the caller wants it.
    const stream = method.fn.call(method.client, {}, new grpc.Metadata(), {});
    const onAbort = () => stream.cancel();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for await (const msg of stream) yield eventFromWire(msg as WContainerEventResponse);
    } catch (e) {
      if (signal?.aborted) return;
      throw fromGrpcError(e, 'GetContainerEvents');
    } finally {
      signal?.removeEventListener('abort', onAbort);
      stream.cancel();
    }
  }

  async listImages(filter?: ImageSpec, opts?: CallOptions): Promise<Image[]> {
    const w = await this.unary<{ images?: WImage[] }>('image', 'ListImages', { filter: filter ? { image: imageSpecToWire(filter) } : undefined }, opts);
    return (w.images ?? []).map(imageFromWire);
  }

  async imageStatus(image: ImageSpec, verbose = false, opts?: CallOptions): Promise<ImageStatusResult> {
    const w = await this.unary<{ image?: WImage | null; info?: Record<string, string> }>(
      'image',
      'ImageStatus',
      { image: imageSpecToWire(image), verbose },
      opts,
    );
    const result: ImageStatusResult = { info: { ...(w.info ?? {}) } };
    // An absent image comes back as an unset message (or, from some runtimes, an empty one).
    if (w.image && w.image.id) result.image = imageFromWire(w.image);
    return result;
  }

  async pullImage(image: ImageSpec, auth?: AuthConfig, sandboxConfig?: PodSandboxConfig, opts?: CallOptions): Promise<string> {
    const r = await this.unary<{ image_ref?: string }>(
      'image',
      'PullImage',
      {
        image: imageSpecToWire(image),
        auth: auth ? authToWire(auth) : undefined,
        sandbox_config: sandboxConfig ? sandboxConfigToWire(sandboxConfig) : undefined,
      },
      opts,
      this.pullTimeoutMs,
    );
    return r.image_ref ?? '';
  }

  async removeImage(image: ImageSpec, opts?: CallOptions): Promise<void> {
    await this.unary('image', 'RemoveImage', { image: imageSpecToWire(image) }, opts);
  }

  async imageFsInfo(opts?: CallOptions): Promise<ImageFsInfo> {
    return imageFsInfoFromWire(await this.unary<WImageFsInfoResponse>('image', 'ImageFsInfo', {}, opts));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.clients) {
      this.clients.image.close();
      this.clients.runtime.close();
    }
  }

  // ------------------------------------------------------------------ plumbing

  private getClients(): Clients {
    if (this.closed) throw new RuntimeError('Unavailable', `CRI client for ${this.endpoint} is closed`);
    if (this.clients) return this.clients;
    const proto: CriProto = loadCriProto(this.opts.protoPath);
    const max = this.opts.maxMessageBytes ?? 16 * 1024 * 1024;
    const options: grpc.ClientOptions = {
      'grpc.max_receive_message_length': max,
      'grpc.max_send_message_length': max,
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 3000,
    };
    const creds = grpc.credentials.createInsecure();
    const runtime = new proto.RuntimeService(this.runtimeEndpoint.target, creds, options);
    const image =
      this.imageEndpoint.path === this.runtimeEndpoint.path
        ? new proto.ImageService(this.imageEndpoint.target, creds, { ...options, channelOverride: runtime.getChannel() })
        : new proto.ImageService(this.imageEndpoint.target, creds, options);
    this.clients = { runtime, image };
    return this.clients;
  }

  private method<F>(svc: keyof Clients, rpc: string): { client: grpc.Client; fn: F } {
    const client = this.getClients()[svc];
    const fn = (client as unknown as Record<string, unknown>)[rpc];
    if (typeof fn !== 'function') throw new RuntimeError('Internal', `CRI proto has no ${svc} method ${rpc}`, rpc);
    return { client, fn: fn as F };
  }

  /**
   * One unary call with a deadline (opts.timeoutMs, else `defaultTimeoutMs`, else the client
   * default). waitForReady makes the call wait for the socket instead of failing fast.
   */
  private unary<R = unknown>(
    svc: keyof Clients,
    rpc: string,
    req: object,
    opts?: CallOptions,
    defaultTimeoutMs?: number,
    waitForReady = false,
  ): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const signal = opts?.signal;
      if (signal?.aborted) {
        reject(new RuntimeError('Canceled', `${rpc} canceled before it was sent`, rpc));
        return;
      }
      // A throw in the executor rejects the promise with it.
      const m = this.method<UnaryMethod>(svc, rpc);
      const timeoutMs = opts?.timeoutMs ?? defaultTimeoutMs ?? this.timeoutMs;
      const md = new grpc.Metadata(waitForReady ? { waitForReady: true } : undefined);
      const onAbort = () => call.cancel();
      const call = m.fn.call(m.client, req, md, { deadline: new Date(Date.now() + timeoutMs) }, (err, res) => {
        signal?.removeEventListener('abort', onAbort);
        if (err) reject(fromGrpcError(err, rpc));
        else resolve((res ?? {}) as R);
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private waitForImageService(timeoutMs: number): Promise<void> {
    const { image } = this.getClients();
    return new Promise((resolve, reject) => {
      image.waitForReady(new Date(Date.now() + timeoutMs), (err) => {
        if (!err) resolve();
        else
          reject(
            new RuntimeError(
              'Unavailable',
              `image service at ${endpointText(this.imageEndpoint)} not reachable within ${formatDuration(timeoutMs)}: ${err.message}`,
              'ImageService',
            ),
          );
      });
    });
  }
}

function unixOnly(value: string): Endpoint & { kind: 'unix' } {
  const e = parseEndpoint(value);
  if (e.kind !== 'unix') throw new Error(`GrpcRuntimeService needs a unix:// endpoint, got ${value}`);
  return e;
}
