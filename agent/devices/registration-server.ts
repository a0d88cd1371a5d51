/**
 * The Registration service (device plugin API v1beta1) on <root-dir>/device-plugins/kubelet.sock:
 * checks the request (version v1beta1, an extended resource name, an endpoint that is a plain
 * file name in the same directory) and hands it to the device manager, which dials the plugin.
 * Refusals are gRPC errors (INVALID_ARGUMENT, UNAVAILABLE) with the reason, as upstream answers
 * errors to Register: this is the service's error edge, answering each error's catalogue gRPC
 * code (agent/errors.ts; RegistrationError's kind), anything unexpected INTERNAL. The socket is 0600-equivalent by virtue of the 0750 root-owned directory;
 * only root can connect, as upstream.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { grpcStatusOf } from '../errors';
import type { Log } from '../platform/logger';
import { DEVICE_PLUGIN_VERSION, loadDevicePluginProto } from './device-plugin-proto';
import { RegistrationError } from './device-manager';
import type { WRegisterRequest } from './wire';
import { shutdownGrpcServer } from '../platform/grpc-shutdown';

/** Upstream's socket name (KubeletSocket). */
export const KUBELET_SOCKET = 'kubelet.sock';

/** What the server needs from the device manager. */
export interface PluginRegistrar {
  /** Accepts the plugin or rejects RegistrationError. */
  registerPlugin(resourceName: string, socketPath: string): Promise<unknown>;
}

/** Validates a RegisterRequest; returns the plugin's absolute socket path. Throws RegistrationError. */
export function checkRegisterRequest(dir: string, r: WRegisterRequest): string {
  if (r.version !== DEVICE_PLUGIN_VERSION) {
    throw new RegistrationError(`unsupported device plugin API version ${JSON.stringify(r.version)}; this agent supports ${DEVICE_PLUGIN_VERSION}`, 'invalid');
  }
  const ep = r.endpoint ?? '';
  if (ep === '' || ep.includes('/') || ep === '.' || ep === '..' || ep.includes('\0')) {
    throw new RegistrationError(`endpoint ${JSON.stringify(ep)} must be the name of a socket file in ${dir}`, 'invalid');
  }
  if (ep === KUBELET_SOCKET) throw new RegistrationError(`endpoint ${KUBELET_SOCKET} is the agent's own socket`, 'invalid');
  return path.join(dir, ep);
}

export class RegistrationServer {
  private server: grpc.Server | undefined;

  constructor(private readonly o: { dir: string; registrar: PluginRegistrar; log: Log }) {}

  get socketPath(): string {
    return path.join(this.o.dir, KUBELET_SOCKET);
  }

  /** Binds kubelet.sock (replacing a leftover file) and serves until stop(). */
  async start(): Promise<void> {
    const proto = loadDevicePluginProto();
    const server = new grpc.Server();
    const log = this.o.log;
    server.addService(proto.Registration.service, {
      Register: (call: grpc.ServerUnaryCall<WRegisterRequest, unknown>, cb: grpc.sendUnaryData<unknown>) => {
        const r = call.request;
        void (async () => {
          try {
            const socket = checkRegisterRequest(this.o.dir, r);
            await this.o.registrar.registerPlugin(r.resource_name, socket);
            cb(null, {});
          } catch (e) {
            const { code, details } = grpcStatusOf(e);
            log.warn({ resource: r.resource_name, endpoint: r.endpoint, version: r.version, error: details }, 'refused a device plugin registration');
            cb({ code, details, name: 'RegistrationError', message: details }, null);
          }
        })();
      },
    });
    await fsp.rm(this.socketPath, { force: true });
    await new Promise<void>((resolve, reject) => {
      server.bindAsync(`unix://${this.socketPath}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve()));
    });
    await fsp.chmod(this.socketPath, 0o600).catch(() => undefined);
    this.server = server;
    log.info({ socket: this.socketPath }, 'serving device plugin registration');
  }

  /** Stops serving and removes the socket. */
  async stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    // Plugins do not hold streams to us, but a hung client must not stall the agent's shutdown.
    await shutdownGrpcServer(s);
    await fsp.rm(this.socketPath, { force: true }).catch(() => undefined);
  }
}
