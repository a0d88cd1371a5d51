/**
 * Serves any RuntimeService (normally the Simulator) as a real CRI runtime.v1 gRPC server on a
 * unix socket, with the same proto the client loads. Lets the gRPC client be tested hermetically,
 * and lets other processes (a second agent, crictl) talk to a simulated runtime. RPCs the agent
 * does not use (the Stream* and metrics calls ...) answer UNIMPLEMENTED, and so do Exec, Attach
 * and PortForward: the simulator serves their streams in-process only (sim://streams/ URLs).
 */
import { rm } from 'node:fs/promises';
import * as grpc from '@grpc/grpc-js';
import {
  containerConfigFromWire,
  containerFilterFromWire,
  containerStatusResultToWire,
  containerToWire,
  execSyncResultToWire,
} from './convert-container';
import { imageSpecFromWire, num, resourcesFromWire } from './convert-common';
import {
  authFromWire,
  eventToWire,
  imageFsInfoToWire,
  imageToWire,
  statsFilterFromWire,
  statsToWire,
  statusToWire,
  versionToWire,
} from './convert-runtime';
import { sandboxConfigFromWire, sandboxFilterFromWire, sandboxStatusResultToWire, sandboxToWire } from './convert-sandbox';
import { sandboxStatsFilterFromWire, sandboxStatsToWire } from './convert-sandbox-stats';
import { shutdownGrpcServer } from '../platform/grpc-shutdown';
import { loadCriProto } from './cri-proto';
import { toGrpcStatus } from './errors';
import type { CallOptions, RuntimeService } from './runtime-service';
import type {
  Opt,
  WContainerConfig,
  WContainerFilter,
  WContainerStatsFilter,
  WPodSandboxStatsFilter,
  WImageSpec,
  WLinuxContainerResources,
  WLong,
  WPodSandboxConfig,
  WPodSandboxFilter,
  WAuthConfig,
} from './wire-types';

export interface CriServer {
  /** unix:///path of the socket. */
  endpoint: string;
  /** Ends open event streams, stops the server and removes the socket. Idempotent. */
  close(): Promise<void>;
}

export interface ServeOptions {
  protoPath?: string;
  /** Which services to register (default both); leaving out runtime makes Version answer UNIMPLEMENTED. */
  services?: ReadonlyArray<'runtime' | 'image'>;
}

/** Decoded request: proto field names with values as proto-loader gives them. */
type Req = Record<string, unknown>;
type Handler = (req: Req, opts: CallOptions) => Promise<object>;

const s = (v: unknown): string => (typeof v === 'string' ? v : '');
const b = (v: unknown): boolean => v === true;
const n = (v: unknown): number => num(v as WLong | undefined);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

function runtimeHandlers(svc: RuntimeService): Record<string, Handler> {
  return {
    Version: async (_r, o) => versionToWire(await svc.version(o)),
    Status: async (r, o) => statusToWire(await svc.status(b(r['verbose']), o)),
    RunPodSandbox: async (r, o) => ({
      pod_sandbox_id: await svc.runPodSandbox(sandboxConfigFromWire(r['config'] as Opt<WPodSandboxConfig>), s(r['runtime_handler']), o),
    }),
    StopPodSandbox: async (r, o) => (await svc.stopPodSandbox(s(r['pod_sandbox_id']), o), {}),
    RemovePodSandbox: async (r, o) => (await svc.removePodSandbox(s(r['pod_sandbox_id']), o), {}),
    PodSandboxStatus: async (r, o) => sandboxStatusResultToWire(await svc.podSandboxStatus(s(r['pod_sandbox_id']), b(r['verbose']), o)),
    ListPodSandbox: async (r, o) => ({
      items: (await svc.listPodSandbox(sandboxFilterFromWire(r['filter'] as Opt<WPodSandboxFilter>), o)).map(sandboxToWire),
    }),
    CreateContainer: async (r, o) => ({
      container_id: await svc.createContainer(
        s(r['pod_sandbox_id']),
        containerConfigFromWire(r['config'] as Opt<WContainerConfig>),
        sandboxConfigFromWire(r['sandbox_config'] as Opt<WPodSandboxConfig>),
        o,
      ),
    }),
    StartContainer: async (r, o) => (await svc.startContainer(s(r['container_id']), o), {}),
    StopContainer: async (r, o) => (await svc.stopContainer(s(r['container_id']), n(r['timeout']), o), {}),
    RemoveContainer: async (r, o) => (await svc.removeContainer(s(r['container_id']), o), {}),
    ListContainers: async (r, o) => ({
      containers: (await svc.listContainers(containerFilterFromWire(r['filter'] as Opt<WContainerFilter>), o)).map(containerToWire),
    }),
    ContainerStatus: async (r, o) => containerStatusResultToWire(await svc.containerStatus(s(r['container_id']), b(r['verbose']), o)),
    UpdateContainerResources: async (r, o) => {
      const linux = r['linux'] as Opt<WLinuxContainerResources>;
      await svc.updateContainerResources(s(r['container_id']), linux ? resourcesFromWire(linux) : {}, o);
      return {};
    },
    ReopenContainerLog: async (r, o) => (await svc.reopenContainerLog(s(r['container_id']), o), {}),
    ExecSync: async (r, o) => execSyncResultToWire(await svc.execSync(s(r['container_id']), strings(r['cmd']), n(r['timeout']), o)),
    ContainerStats: async (r, o) => ({ stats: statsToWire(await svc.containerStats(s(r['container_id']), o)) }),
    ListContainerStats: async (r, o) => ({
      stats: (await svc.listContainerStats(statsFilterFromWire(r['filter'] as Opt<WContainerStatsFilter>), o)).map(statsToWire),
    }),
    ListPodSandboxStats: async (r, o) => ({
      stats: (await svc.listPodSandboxStats(sandboxStatsFilterFromWire(r['filter'] as Opt<WPodSandboxStatsFilter>), o)).map(sandboxStatsToWire),
    }),
    CheckpointContainer: async (r, o) => (await svc.checkpointContainer(s(r['container_id']), s(r['location']), n(r['timeout']), o), {}),
  };
}

function imageHandlers(svc: RuntimeService): Record<string, Handler> {
  return {
    ListImages: async (r, o) => {
      const filter = (r['filter'] as Opt<{ image?: Opt<WImageSpec> }>)?.image;
      return { images: (await svc.listImages(filter ? imageSpecFromWire(filter) : undefined, o)).map(imageToWire) };
    },
    ImageStatus: async (r, o) => {
      const res = await svc.imageStatus(imageSpecFromWire(r['image'] as Opt<WImageSpec>), b(r['verbose']), o);
      return { image: res.image ? imageToWire(res.image) : undefined, info: res.info };
    },
    PullImage: async (r, o) => {
      const sandbox = r['sandbox_config'] as Opt<WPodSandboxConfig>;
      return {
        image_ref: await svc.pullImage(
          imageSpecFromWire(r['image'] as Opt<WImageSpec>),
          authFromWire(r['auth'] as Opt<WAuthConfig>),
          sandbox ? sandboxConfigFromWire(sandbox) : undefined,
          o,
        ),
      };
    },
    RemoveImage: async (r, o) => (await svc.removeImage(imageSpecFromWire(r['image'] as Opt<WImageSpec>), o), {}),
    ImageFsInfo: async (_r, o) => imageFsInfoToWire(await svc.imageFsInfo(o)),
  };
}

/** The call's remaining deadline in ms, if the client set one. */
function remainingMs(call: grpc.ServerUnaryCall<unknown, unknown>): number | undefined {
  const d = call.getDeadline();
  if (d === Infinity) return undefined;
  const at = d instanceof Date ? d.getTime() : d;
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : undefined;
}

function unary(h: Handler): grpc.handleUnaryCall<Req, object> {
  return (call, callback) => {
    const ac = new AbortController();
    call.on('cancelled', () => ac.abort());
    const opts: CallOptions = { signal: ac.signal };
    const timeoutMs = remainingMs(call);
    if (timeoutMs !== undefined) opts.timeoutMs = timeoutMs;
    h(call.request ?? {}, opts).then(
      (res) => callback(null, res),
      (err: unknown) => callback(toGrpcStatus(err)),
    );
  };
}

/** Starts serving `svc` on `socketPath` (a stale socket file is replaced). */
export async function serveRuntimeService(svc: RuntimeService, socketPath: string, opts: ServeOptions = {}): Promise<CriServer> {
  const proto = loadCriProto(opts.protoPath);
  const server = new grpc.Server({ 'grpc.max_receive_message_length': 16 * 1024 * 1024 });
  const streams = new AbortController();
  const services = opts.services ?? ['runtime', 'image'];

  if (services.includes('runtime')) {
    const impl: grpc.UntypedServiceImplementation = {};
    for (const [name, h] of Object.entries(runtimeHandlers(svc))) impl[name] = unary(h);
    impl['GetContainerEvents'] = ((call: grpc.ServerWritableStream<Req, object>) => {
      const ac = new AbortController();
      const onShutdown = () => ac.abort();
      streams.signal.addEventListener('abort', onShutdown, { once: true });
      call.on('cancelled', () => ac.abort());
      void (async () => {
        try {
          for await (const ev of svc.getContainerEvents({ signal: ac.signal })) call.write(eventToWire(ev));
          call.end();
        } catch (err) {
          const st = toGrpcStatus(err);
          call.emit('error', { code: st.code, details: st.details, metadata: new grpc.Metadata() });
        } finally {
          streams.signal.removeEventListener('abort', onShutdown);
        }
      })();
    }) as grpc.handleServerStreamingCall<Req, object>;
    server.addService(proto.RuntimeService.service, impl);
  }
  if (services.includes('image')) {
    const impl: grpc.UntypedServiceImplementation = {};
    for (const [name, h] of Object.entries(imageHandlers(svc))) impl[name] = unary(h);
    server.addService(proto.ImageService.service, impl);
  }

  await rm(socketPath, { force: true });
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${socketPath}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
  );

  let closing: Promise<void> | undefined;
  return {
    endpoint: `unix://${socketPath}`,
    close() {
      closing ??= (async () => {
        streams.abort();
        await shutdownGrpcServer(server);
        await rm(socketPath, { force: true });
      })();
      return closing;
    },
  };
}
