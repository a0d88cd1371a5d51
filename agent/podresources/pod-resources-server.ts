/**
 * The pod resources v1 gRPC server on <root-dir>/pod-resources/kubelet.sock (upstream's path and
 * name). Every call passes the token bucket first (100 QPS, burst 10, as upstream), and a refused
 * call answers RESOURCE_EXHAUSTED "rejected by rate limit" (upstream's status and message)
 * without touching the providers, so a flood costs the agent almost nothing. This is the API's
 * error edge: what the service throws is answered with its catalogue gRPC code (agent/errors.ts),
 * so PodNotFoundError becomes NOT_FOUND; upstream answers such a Get with UNKNOWN (a plain Go
 * error) and we differ on purpose so clients can tell "no such pod" from a failure.
 *
 * The socket is recreated on every start (stale one removed) and removed on close.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { grpcStatusOf } from '../errors';
import type { Log } from '../platform/logger';
import { bindUnixSocket } from './bind-socket';
import { PodNotFoundError, PodResourcesService } from './pod-resources-service';
import { loadPodResourcesProto } from './podresources-proto';
import type { DevicesProvider, PodsProvider } from './provider';
import type { GetPodResourcesRequest } from './wire-types';
import { TokenBucket } from '../platform/token-bucket';

/** Upstream's pod resources rate limit (golang.org/x/time/rate with DefaultQPS 100, DefaultBurstTokens 10); over it a call is refused, never queued. */
export const DEFAULT_QPS = 100;
export const DEFAULT_BURST = 10;
import { shutdownGrpcServer } from '../platform/grpc-shutdown';

/** Upstream's socket directory and file name under the root dir. */
export const POD_RESOURCES_DIR = 'pod-resources';
export const POD_RESOURCES_SOCKET = 'kubelet.sock';

/** Upstream's refusal (ErrorLimitExceeded). */
export const RATE_LIMIT_MESSAGE = 'rejected by rate limit';

export interface PodResourcesServerOptions {
  /** Full socket path; main passes <root-dir>/pod-resources/kubelet.sock. */
  socketPath: string;
  pods: PodsProvider;
  devices: DevicesProvider;
  log: Log;
  /** Default 100 and 10 (upstream's). */
  qps?: number;
  burst?: number;
  /** Clock of the token bucket, milliseconds (tests). */
  now?: () => number;
}

export function podResourcesSocketPath(rootDir: string): string {
  return path.join(rootDir, POD_RESOURCES_DIR, POD_RESOURCES_SOCKET);
}

type Unary = grpc.handleUnaryCall<unknown, object>;

export class PodResourcesServer {
  private readonly service: PodResourcesService;
  private readonly limiter: TokenBucket;
  private server: grpc.Server | undefined;
  private closing: Promise<void> | undefined;
  private refused = 0;

  constructor(private readonly o: PodResourcesServerOptions) {
    this.service = new PodResourcesService(o.pods, o.devices);
    this.limiter = new TokenBucket(o.qps ?? DEFAULT_QPS, o.burst ?? DEFAULT_BURST, o.now);
  }

  /** Calls refused by the rate limit so far. */
  get refusedCalls(): number {
    return this.refused;
  }

  /** Serves on the socket; rejects when the socket cannot be made (the directory must exist). */
  async start(): Promise<void> {
    if (this.server) throw new Error('pod resources server already started');
    const lister = loadPodResourcesProto();
    const server = new grpc.Server({ 'grpc.max_receive_message_length': 4 * 1024 * 1024 });
    const impl: Record<string, Unary> = {
      List: this.unary(() => this.service.list()),
      // proto-loader decodes the request to this shape (fields it does not carry stay unset).
      Get: this.unary((req) => this.service.get(req as GetPodResourcesRequest)),
      GetAllocatableResources: this.unary(() => this.service.allocatable()),
    };
    server.addService(lister.service, impl);
    try {
      await bindUnixSocket(server, this.o.socketPath);
    } catch (e) {
      server.forceShutdown();
      throw e;
    }
    this.server = server;
    this.o.log.info({ socket: this.o.socketPath, qps: this.o.qps ?? DEFAULT_QPS, burst: this.o.burst ?? DEFAULT_BURST }, 'serving pod resources API');
  }

  /** Starts, serves until the signal aborts, then closes. Rejects only if start fails. */
  async run(signal: AbortSignal): Promise<void> {
    await this.start();
    if (!signal.aborted) await new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
    await this.close();
  }

  /** Stops serving (in-flight calls get 2 s) and removes the socket. Idempotent. */
  close(): Promise<void> {
    const server = this.server;
    if (!server) return Promise.resolve();
    this.closing ??= (async () => {
      await shutdownGrpcServer(server);
      await fsp.rm(this.o.socketPath, { force: true });
    })();
    return this.closing;
  }

  private unary(fn: (req: unknown) => object): Unary {
    return (call, callback) => {
      if (!this.limiter.allow()) {
        this.refused++;
        callback({ code: grpc.status.RESOURCE_EXHAUSTED, details: RATE_LIMIT_MESSAGE });
        return;
      }
      let res: object;
      try {
        res = fn(call.request ?? {});
      } catch (e) {
        if (!(e instanceof PodNotFoundError)) this.o.log.warn({ method: call.getPath(), error: (e as Error).message }, 'pod resources call failed');
        callback(grpcStatusOf(e));
        return;
      }
      callback(null, res);
    };
  }
}
